// Reads and deletes of keyed counters (CounterSpec::keyed): many keys from
// one snapshot (ReadKeys), keys in order (ListKeys), the top keys (TopKeys,
// from the roll-up or by a scan) and one key's removal (DeleteKey). A read
// touches the keys it names or returns and no others; only TopKeys with
// exact, and the roll-up, scan the whole counter (docs/design.md, "Keyed
// counters").

#include <rocksdb/db.h>
#include <rocksdb/iterator.h>

#include <algorithm>
#include <cassert>
#include <memory>
#include <string>
#include <vector>

#include "engine/rules.h"
#include "engine/coding.h"
#include "engine/counter_range.h"
#include "engine/db_impl.h"
#include "engine/perf_counters.h"
#include "engine/read_checks.h"
#include "engine/snapshot_hold.h"
#include "engine/top_keys.h"
#include "engine/write_plan.h"
#include "tally/limits.h"
#include "util/rocks_status.h"

namespace tally::engine {
namespace {

Status NotKeyed(const CounterInfo& c, const char* call) {
  return Status::InvalidArgument(std::string(call) + ": counter " +
                                 Quote(c.name) + " is not keyed");
}

// The values of `keys` of the keyed counter `c` (not bucketed) into *out:
// one MultiGet of every (key, shard), which reads them all at one implicit
// snapshot (no DB mutex for an explicit one); each lookup stops at its
// key's newest value. The shard keys go in sorted (by memcmp, the shards
// family's bytewise order): RocksDB would otherwise sort them itself
// through its comparator, 9% of a 50-key page's instructions.
Status MultiGetKeys(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* shards,
                    const CounterInfo& c,
                    const std::vector<std::string_view>& keys,
                    const rocksdb::ReadOptions& ro, std::vector<int64_t>* out) {
  const size_t n = keys.size() * c.shards;
  std::unique_ptr<char[]> bytes(new char[n * kMaxShardKeyBytes]);
  std::vector<rocksdb::Slice> encoded(n);  // key i's shard j at i * shards + j
  for (size_t i = 0; i < keys.size(); ++i) {
    const KeyPrefix prefix(c.id, keys[i]);
    for (uint32_t j = 0; j < c.shards; ++j) {
      const size_t k = i * c.shards + j;
      char* at = bytes.get() + k * kMaxShardKeyBytes;
      encoded[k] = rocksdb::Slice(at, EncodeShardKeyOf(prefix, kNoBucket, j, at));
    }
  }
  std::vector<uint32_t> order(n);  // order[m]: the m-th shard key in key order
  for (size_t k = 0; k < n; ++k) order[k] = static_cast<uint32_t>(k);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return encoded[a].compare(encoded[b]) < 0;
  });
  std::vector<rocksdb::Slice> sorted(n);
  for (size_t m = 0; m < n; ++m) sorted[m] = encoded[order[m]];
  std::vector<rocksdb::PinnableSlice> values(n);
  std::vector<rocksdb::Status> statuses(n);
  db->MultiGet(ro, shards, n, sorted.data(), values.data(), statuses.data(),
               /*sorted_input=*/true);
  std::vector<ExactSum> sums(keys.size());
  for (size_t m = 0; m < n; ++m) {
    if (statuses[m].IsNotFound()) continue;
    if (!statuses[m].ok()) return FromRocks(statuses[m], "read keys");
    const uint32_t shard = order[m] % c.shards;
    ShardSum v;
    Status s = CheckShardValue(c, sorted[m].ToStringView(),
                               values[m].ToStringView(), shard, &v);
    if (!s.ok()) return s;
    sums[order[m] / c.shards].Add(v);
  }
  for (size_t i = 0; i < keys.size(); ++i) {
    Status s = NarrowSum(c, sums[i], &(*out)[i]);
    if (!s.ok()) return s.WithContext("key " + Quote(keys[i]));
  }
  return Status::OK();
}

}  // namespace

Status DbImpl::ScanKeys(
    const CounterInfo& c, const rocksdb::ReadOptions& base,
    std::string_view seek, std::string_view upper,
    const std::function<bool(std::string_view, int64_t, bool)>& visit) {
  assert(c.keyed);
  rocksdb::ReadOptions ro = base;
  const rocksdb::Slice upper_slice(upper.data(), upper.size());
  ro.iterate_upper_bound = &upper_slice;
  ro.prefix_same_as_start = true;  // every key shares the 8-byte id
  const int64_t width = BucketWidthMs(c.bucket);
  const int64_t now = width == 0 ? 0 : clock_->NowMillis();
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, shards_));
  std::string current;  // the key being summed
  bool have = false;
  ExactSum sum;
  bool overflowed = false;  // a shard of `current` holds the overflowed state
  size_t buckets = 0;
  int64_t last_bucket = kNoBucket;
  // Visits the key summed so far; false when the visitor stops the scan.
  auto flush = [&]() -> bool {
    int64_t v = 0;
    const bool out_of_range = overflowed || !NarrowSum(c, sum, &v).ok();
    return visit(current, out_of_range ? 0 : v, out_of_range);
  };
  for (it->Seek(rocksdb::Slice(seek.data(), seek.size())); it->Valid();
       it->Next()) {
    const std::string_view key = it->key().ToStringView();
    ShardKeyParts parts;
    if (!DecodeAnyShardKey(key, &parts) || parts.counter_id != c.id ||
        parts.key.empty() || parts.shard >= c.shards ||
        (parts.bucket == kNoBucket) != (width == 0) ||
        (width != 0 && parts.bucket % width != 0)) {
      return Status::Corruption("unexpected shard key " + HexKey(key) +
                                " under keyed counter " + Quote(c.name));
    }
    if (!have || parts.key != current) {
      if (have && !flush()) return Status::OK();
      current.assign(parts.key);
      have = true;
      sum = ExactSum();
      overflowed = false;
      buckets = 0;
      last_bucket = kNoBucket;
    }
    if (width != 0) {
      if (BucketExpired(parts.bucket, width, c.retention_ms, now)) continue;
      if (parts.bucket != last_bucket) {
        if (buckets == kMaxReadBuckets) {
          return TooManyBuckets(c).WithContext("key " + Quote(current));
        }
        ++buckets;
        last_bucket = parts.bucket;
      }
    }
    ShardSum v;
    Status s = CheckShardValue(c, key, it->value().ToStringView(), parts.shard,
                               &v);
    if (s.IsOutOfRange()) {  // the overflowed state: this key's, not the scan's
      overflowed = true;
      continue;
    }
    if (!s.ok()) return s;
    sum.Add(v);
  }
  Status s = FromRocks(it->status(), "scan keys");
  if (s.ok() && have) flush();
  return s;
}

Result<std::vector<int64_t>> DbImpl::ReadKeys(
    std::string_view counter, const std::vector<std::string_view>& keys,
    const ReadOptions& options) {
  Status reads = CheckReads(kReadValues, "ReadKeys");
  if (!reads.ok()) return reads;
  Status valid = ValidateReadKeys(keys);
  if (!valid.ok()) return valid;
  Catalog::Reader catalog(catalog_.get());
  const Catalog::Entry* c = catalog.Find(counter);
  if (c == nullptr) return CounterNotFound(counter);
  if (!c->keyed) return NotKeyed(*c, "ReadKeys");
  rocksdb::ReadOptions ro;
  ro.verify_checksums = options.verify_checksums;
  std::vector<int64_t> out(keys.size(), 0);
  if (c->bucket != BucketWidth::kNone) {
    // Each key's retained buckets, one bounded scan each, in one snapshot.
    const SnapshotHold snapshot(db_.get(), options_.read_only);
    ro.snapshot = snapshot.get();
    for (size_t i = 0; i < keys.size(); ++i) {
      Status s = SumShards(*c, keys[i], ro, &out[i]);
      if (!s.ok()) return s.WithContext("key " + Quote(keys[i]));
    }
    return out;
  }
  const PerfCountersOff perf_off;  // nobody reads them (perf_counters.h)
  Status s = MultiGetKeys(db_.get(), shards_, *c, keys, ro, &out);
  if (!s.ok()) return s;
  return out;
}

Result<std::vector<KeyValue>> DbImpl::ListKeys(
    std::string_view counter, const ListKeysOptions& options) {
  Status reads = CheckReads(kReadValues, "ListKeys");
  if (!reads.ok()) return reads;
  Status s = ValidateListKeys(options);
  if (!s.ok()) return s;
  Catalog::Reader catalog(catalog_.get());
  const Catalog::Entry* c = catalog.Find(counter);
  if (c == nullptr) return CounterNotFound(counter);
  if (!c->keyed) return NotKeyed(*c, "ListKeys");
  // From the later of the prefix and just past start_after's keys (its
  // prefix with the closing 0x00 raised), to the end of the prefix: the
  // prefix bytes with the last one raised (a key's bytes are never 0xff),
  // or the counter's end.
  std::string seek(kCounterIdBytes, '\0');
  EncodeCounterPrefix(c->id, seek.data());
  seek.append(options.prefix);
  if (!options.start_after.empty()) {
    std::string after;
    KeyPrefix(c->id, options.start_after).End(&after);
    seek = std::max(seek, after);
  }
  std::string upper;
  if (options.prefix.empty()) {
    KeyPrefix(c->id, {}).End(&upper);
  } else {
    upper.assign(kCounterIdBytes, '\0');
    EncodeCounterPrefix(c->id, upper.data());
    upper.append(options.prefix);
    upper.back() = static_cast<char>(static_cast<uint8_t>(upper.back()) + 1);
  }
  std::vector<KeyValue> out;
  if (seek >= upper) return out;
  rocksdb::ReadOptions ro;
  s = ScanKeys(*c, ro, seek, upper,
               [&](std::string_view key, int64_t v, bool out_of_range) {
                 out.push_back(KeyValue{std::string(key), v, out_of_range});
                 return out.size() < options.limit;
               });
  if (!s.ok()) return s;
  return out;
}

Status DbImpl::ScanTop(const CounterInfo& c, size_t keep,
                       TopKeysResult* out) {
  // The sequence is read before the scan's iterator pins its view, so the
  // view holds at least everything up to it.
  const SnapshotHold snapshot(db_.get(), options_.read_only);
  rocksdb::ReadOptions ro;
  ro.snapshot = snapshot.get();
  out->sequence = snapshot.get() != nullptr
                      ? snapshot.get()->GetSequenceNumber()
                      : db_->GetLatestSequenceNumber();
  out->as_of_ms = clock_->NowMillis();
  std::string begin(kCounterIdBytes, '\0'), end;
  EncodeCounterPrefix(c.id, begin.data());
  KeyPrefix(c.id, {}).End(&end);
  TopKeeper top(keep);
  ExactSum total;
  uint64_t keys = 0;
  out->out_of_range_keys = 0;
  out->first_out_of_range_key.clear();
  Status s = ScanKeys(
      c, ro, begin, end, [&](std::string_view key, int64_t v, bool bad) {
        ++keys;
        if (bad) {  // left out of the list and the total, and counted
          if (out->out_of_range_keys++ == 0) {
            out->first_out_of_range_key.assign(key);
          }
          return true;
        }
        total.Add(v);
        top.Offer(key, v);
        return true;
      });
  if (!s.ok()) return s;
  s = NarrowSum(c, total, &out->total);
  if (!s.ok()) return s;
  out->key_count = keys;
  out->keys = top.Take();
  return Status::OK();
}

Result<TopKeysResult> DbImpl::TopKeys(std::string_view counter, size_t n,
                                      const TopKeysOptions& options) {
  Status reads = CheckReads(options.exact ? kReadValues : kReadRollups,
                            "TopKeys");
  if (!reads.ok()) return reads;
  Status valid = ValidateTopKeys(n);
  if (!valid.ok()) return valid;
  TopKeysResult out;
  // The stored list, cut to n, with its lag.
  auto stored = [&](const CounterInfo& c) -> Status {
    Status s = ReadTopList(c, &out);
    if (!s.ok()) return s;
    if (out.keys.size() > n) out.keys.resize(n);
    out.lag_ms = std::max<int64_t>(0, clock_->NowMillis() - out.as_of_ms);
    return Status::OK();
  };
  std::string name;
  {
    Catalog::Reader catalog(catalog_.get());
    const Catalog::Entry* c = catalog.Find(counter);
    if (c == nullptr) return CounterNotFound(counter);
    if (!c->keyed) return NotKeyed(*c, "TopKeys");
    if (options.exact) {
      Status s = ScanTop(*c, n, &out);
      if (!s.ok()) return s;
      out.exact = true;
      return out;
    }
    name = c->name;
    Status s = stored(*c);
    if (s.ok()) return out;
    if (!s.IsNotFound()) return s;
    if (options_.read_only) {
      return NoRollupYet(*c);
    }
  }
  // Never rolled up: roll it up now (outside the catalog hold), then read.
  Status s = RollupKeyed(name, /*force=*/true);
  if (!s.ok()) return s;
  Catalog::Reader catalog(catalog_.get());
  const Catalog::Entry* c = catalog.Find(name);
  if (c == nullptr) return CounterNotFound(name);
  s = stored(*c);
  if (!s.ok()) return s;
  return out;
}

Status DbImpl::ReadTopList(const CounterInfo& c, TopKeysResult* out,
                           const rocksdb::ReadOptions& ro) {
  char key[kTopListKeyBytes];
  EncodeCounterPrefix(c.id, key);
  key[kCounterIdBytes] = kTopListTag;
  if (rollups_ == nullptr) return Status::NotFound("no rollups family");
  rocksdb::PinnableSlice found;
  rocksdb::Status rs =
      db_->Get(ro, rollups_, rocksdb::Slice(key, sizeof key), &found);
  if (rs.IsNotFound()) return Status::NotFound("no top list");
  if (!rs.ok()) return FromRocks(rs, "read top list");
  if (!DecodeTopList(found.ToStringView(), out)) {
    return Status::Corruption(
        "top list of counter " + Quote(c.name) + " at key " +
        HexKey(std::string_view(key, sizeof key)) + " is malformed (" +
        std::to_string(found.size()) + " bytes)");
  }
  return Status::OK();
}

Status DbImpl::DeleteKey(std::string_view counter, std::string_view key) {
  Status s = CheckWritable();
  if (!s.ok()) return s;
  s = ValidateCounterKey(key);
  if (!s.ok()) return s;
  Catalog::Reader catalog(catalog_.get());
  const Catalog::Entry* c = catalog.Find(counter);
  if (c == nullptr) return CounterNotFound(counter);
  if (!c->keyed) return NotKeyed(*c, "DeleteKey");
  // The ops that read a key's value before they write a delta decided on
  // it (every op of a strict key; a reset of any key) hold the key's
  // stripe from the read to the commit: the delete takes it too, or such
  // an op would write its delta onto the emptied key (a take of 1 would
  // leave -1, a reset to 0 of a key holding 10 would leave -10). Plain and
  // once-increments of a sharded key write blind deltas and land wholly
  // before or after the delete without it.
  const EventLocks::Guard key_stripe(
      &event_locks_, event_locks_.StripeOf(c->id, StrictKeyLockHash(key)));
  const CounterRange range(KeyPrefix(c->id, key));
  rocksdb::WriteBatch wb;
  rocksdb::Status rs = wb.DeleteRange(shards_, range.begin(), range.end());
  if (rs.ok()) rs = wb.DeleteRange(events_, range.begin(), range.end());
  // Its reservations, held and closed (holds family, format 7), where the
  // counter takes them.
  const bool holds = c->bounds.has_min && c->bucket == BucketWidth::kNone;
  for (char tag : {kOpenHoldTag, kClosedHoldTag}) {
    if (!rs.ok() || holds_ == nullptr || !holds) break;
    std::string begin, end;
    HoldRange(c->id, tag, key, &begin, &end);
    rs = wb.DeleteRange(holds_, begin, end);
  }
  if (!rs.ok()) return FromRocks(rs, "delete key");
  s = commit_->Commit(&wb);
  if (!s.ok()) return s;
  // The roll-up is stale now: count the delete as a change.
  c->applied.fetch_add(1, std::memory_order_release);
  return Status::OK();
}

}  // namespace tally::engine
