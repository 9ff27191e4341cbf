// Strict counters (CounterSpec::bounds): the read-check-write of one key.
//
// A strict counter is never sharded: each key holds one value (shard 0;
// a quota, with time buckets, one per window: the bounds hold per bucket),
// and every op of one key, plain or once, is checked and written under the
// key's lock stripe (EventLocks, by OpPlan::lock_hash): the stripe holder
// reads the value the previous holder committed (a Commit returns once the
// write is in the memtable), checks the op against the bounds and commits
// before it lets go, so no two ops of one key ever decide on the same
// value. Plain increments of sharded counters take no stripe at all, and
// their once-increments take their event's (a stripe may be shared with a
// strict key's by hash: a wait, never a wrong answer).
//
// Cost of one strict op over a sharded one: the stripe mutex and one Get
// of the value (in the memtable or the block cache for a hot key), no
// allocation; a once-op's marker Get as for any once-op. Apply reads all
// its strict keys in one MultiGet (apply.cc).

#include <rocksdb/db.h>

#include <cassert>

#include "engine/coding.h"
#include "engine/db_impl.h"
#include "engine/read_checks.h"
#include "engine/rules.h"
#include "util/rocks_status.h"

namespace tally::engine {
namespace {

// A strict key's stored value: one shard, within int64.
Status StrictValue(const CounterInfo& c, const rocksdb::Slice& key,
                   const rocksdb::Slice& value, int64_t* out) {
  ShardSum v;
  Status s = CheckShardValue(c, key.ToStringView(), value.ToStringView(), 0, &v);
  if (!s.ok()) return s;
  ExactSum sum;
  sum.Add(v);
  return NarrowSum(c, sum, out);
}

}  // namespace

Status DbImpl::ReadStrictValue(const CounterInfo& c, std::string_view key,
                               int64_t bucket, int64_t* value) {
  assert(c.bounds.any() && c.shards == 1);
  assert((bucket == kNoBucket) == (c.bucket == BucketWidth::kNone));
  *value = 0;
  char at[kMaxShardKeyBytes];
  const rocksdb::Slice k(
      at, EncodeShardKeyOf(KeyPrefix(c.id, key), bucket, 0, at));
  rocksdb::PinnableSlice found;
  rocksdb::Status rs = db_->Get(rocksdb::ReadOptions(), shards_, k, &found);
  if (rs.IsNotFound()) return Status::OK();
  if (!rs.ok()) return FromRocks(rs, "read strict value");
  return StrictValue(c, k, found, value);
}

Status DbImpl::ReadStrictValues(const CounterInfo& c,
                                const std::vector<StrictSlot>& slots,
                                std::vector<int64_t>* values,
                                const rocksdb::ReadOptions& ro) {
  assert(c.bounds.any() && c.shards == 1);
  const size_t n = slots.size();
  values->assign(n, 0);
  if (n == 0) return Status::OK();
  std::vector<char> bytes(n * kMaxShardKeyBytes);
  std::vector<rocksdb::Slice> slices(n);
  for (size_t i = 0; i < n; ++i) {
    char* at = bytes.data() + i * kMaxShardKeyBytes;
    assert((slots[i].bucket == kNoBucket) == (c.bucket == BucketWidth::kNone));
    slices[i] = rocksdb::Slice(
        at, EncodeShardKeyOf(KeyPrefix(c.id, slots[i].key), slots[i].bucket, 0,
                             at));
  }
  std::vector<rocksdb::PinnableSlice> found(n);
  std::vector<rocksdb::Status> statuses(n);
  // One MultiGet: one consistent view of every slot.
  db_->MultiGet(ro, shards_, n, slices.data(), found.data(), statuses.data(),
                /*sorted_input=*/false);
  for (size_t i = 0; i < n; ++i) {
    if (statuses[i].IsNotFound()) continue;
    if (!statuses[i].ok()) return FromRocks(statuses[i], "read strict value");
    Status s = StrictValue(c, slices[i], found[i], &(*values)[i]);
    if (!s.ok()) return s;
  }
  return Status::OK();
}

Status DbImpl::ReadPreviousWindow(const CounterInfo& c, const WriteOp& op,
                                  int64_t now, int64_t bucket,
                                  PreviousWindow* previous) {
  assert(c.sliding);
  const int64_t width = BucketWidthMs(c.bucket);
  previous->elapsed = EventTimeOr(op.event_time_ms, now) - bucket;
  assert(previous->elapsed >= 0 && previous->elapsed < width);
  previous->used = 0;
  if (bucket < width) return Status::OK();  // 1970's first bucket
  return ReadStrictValue(c, op.key, bucket - width, &previous->used);
}

Result<QuotaState> DbImpl::ReadQuota(CounterRef counter,
                                     const ReadOptions& options) {
  Status s = CheckReads(kReadValues, "ReadQuota");
  if (!s.ok()) return s;
  Catalog::Reader catalog(catalog_.get());
  const Catalog::Entry* c = nullptr;
  s = FindCounterRef(catalog, counter, KeyUse::kOneKey, &c);
  if (!s.ok()) return s;
  s = CheckQuota(*c);
  if (!s.ok()) return s;
  const int64_t now = clock_->NowMillis();
  const QuotaWindow w = QuotaWindowAt(*c, now);
  std::vector<StrictSlot> slots{{counter.key, w.start}};
  if (w.previous) slots.push_back({counter.key, w.start - w.width});
  std::vector<int64_t> values;
  rocksdb::ReadOptions ro;
  ro.verify_checksums = options.verify_checksums;
  s = ReadStrictValues(*c, slots, &values, ro);
  if (!s.ok()) return s;
  return QuotaStateOf(*c, w, now, values[0], w.previous ? values[1] : 0);
}

}  // namespace tally::engine
