// The write planner (engine/write_plan.h).

#include "engine/write_plan.h"

#include <algorithm>
#include <cassert>

#include "engine/coding.h"
#include "schema/records.h"

namespace tally::engine {
namespace {

rocksdb::Slice AsSlice(std::string_view s) { return {s.data(), s.size()}; }

// Where an increment lands in the shards family: its shard key (of its
// key, for a keyed counter), or for a bucketed counter the shard key of its
// bucket. On the stack: no allocation.
class ShardTarget {
 public:
  ShardTarget(uint64_t counter_id, std::string_view key, int64_t bucket,
              uint32_t shard)
      : size_(EncodeShardKeyOf(KeyPrefix(counter_id, key), bucket, shard,
                               key_)) {}
  rocksdb::Slice key() const { return {key_, size_}; }

 private:
  char key_[kMaxShardKeyBytes];
  size_t size_;
};

}  // namespace

uint64_t StrictKeyLockHash(std::string_view key) { return StableHash(key); }

WriteScratch& ThreadWriteScratch() {
  thread_local WriteScratch scratch;
  scratch.batch.Clear();
  return scratch;
}

Status Resolve(const Catalog::Reader& catalog, const WriteOp& op,
               OpPlan* plan) {
  plan->counter = catalog.Find(op.counter);
  if (plan->counter == nullptr) return CounterNotFound(op.counter);
  const CounterInfo& c = *plan->counter;
  Status s = PlaceOp(c, op, plan);
  plan->lock_hash = c.bounds.any() ? StrictKeyLockHash(op.key) : plan->event_hash;
  return s;
}

Status FindCounterRef(const Catalog::Reader& catalog, CounterRef ref,
                      KeyUse use, const Catalog::Entry** out) {
  *out = catalog.Find(ref.counter);
  if (*out == nullptr) return CounterNotFound(ref.counter);
  if (!ref.key.empty()) {
    Status s = ValidateCounterKey(ref.key);
    if (!s.ok()) return s;
  }
  if (use == KeyUse::kKeyOrWhole && ref.key.empty()) return Status::OK();
  return CheckKeyed(**out, ref.key);
}

Status ReadMarker(const CounterInfo& c, std::string_view key,
                  std::string_view value, FoundMarker* marker) {
  schema::MarkerAnswer a;
  Status s = schema::DecodeMarkerAnswer(value, &a);
  // A reset's marker holds its answer on any counter (format 7).
  if (s.ok() && a.strict != c.bounds.any() && !a.answer.reset) {
    s = Status::Corruption(a.strict ? "a strict marker of a sharded counter"
                                    : "a sharded marker of a strict counter");
  }
  if (!s.ok()) {
    return Status::Corruption("marker " + HexKey(key) + " of counter " +
                              Quote(c.name) + ": " + s.message());
  }
  *marker = FoundMarker{true,           a.delta,          a.shard,
                        a.strict,       a.answer.refused, a.answer.asked,
                        a.answer.value, a.answer.window_ends_ms,
                        a.answer.remaining, a.answer.reset,
                        a.answer.remaining_kept};
  return Status::OK();
}

rocksdb::Status AddShardMerge(rocksdb::WriteBatch* wb,
                              rocksdb::ColumnFamilyHandle* shards,
                              const CounterInfo& c, std::string_view key,
                              int64_t bucket, uint32_t shard, int64_t delta) {
  assert(shard < c.shards);
  assert((bucket == kNoBucket) == (c.bucket == BucketWidth::kNone));
  assert(key.empty() != c.keyed);
  const ShardTarget target(c.id, key, bucket, shard);
  char value[kValueBytes];
  EncodeInt64(delta, value);
  return wb->Merge(shards, target.key(), rocksdb::Slice(value, sizeof value));
}

void MarkerKeyOf(const CounterInfo& c, const WriteOp& op, std::string* out) {
  out->clear();
  AppendMarkerKeyOf(c, op, out);
}

void AppendMarkerKeyOf(const CounterInfo& c, const WriteOp& op,
                       std::string* out) {
  assert(op.key.empty() != c.keyed);
  AppendMarkerKeyOf(KeyPrefix(c.id, op.key), op.event_id, out);
}

rocksdb::Status AddMarker(rocksdb::WriteBatch* wb,
                          rocksdb::ColumnFamilyHandle* events,
                          std::string_view key, const WriteOp& op,
                          const OpPlan& plan, int64_t now,
                          std::string* scratch) {
  const FoundMarker m = MarkerOf(*plan.counter, op, plan);
  const schema::StrictAnswer answer{m.refused,   m.asked, m.value,
                                    m.window_ends, m.remaining, m.reset,
                                    m.remaining_kept};
  schema::EncodeMarker(op.event_id, plan.counter->id, m.shard, m.delta, now,
                       scratch, plan.expires_at, !op.affinity_key.empty(),
                       m.strict ? &answer : nullptr);
#ifndef NDEBUG
  // Written here, read back by every later copy of the event: the pair
  // must agree.
  FoundMarker back;
  assert(ReadMarker(*plan.counter, key, *scratch, &back).ok());
  assert(back.delta == m.delta && back.shard == m.shard);
  assert(!m.strict || (back.asked == m.asked && back.value == m.value &&
                       back.window_ends == m.window_ends &&
                       back.remaining == m.remaining && back.remaining_kept));
#endif
  return wb->Put(events, AsSlice(key), AsSlice(*scratch));
}

rocksdb::Status AddPlainFlag(rocksdb::WriteBatch* wb,
                             rocksdb::ColumnFamilyHandle* meta,
                             const CounterInfo& c, std::string* scratch) {
  std::string key;
  Catalog::FlaggedRecord(c, &key, scratch);
  assert(!key.empty() && !scratch->empty());
  return wb->Put(meta, key, *scratch);
}

}  // namespace tally::engine
