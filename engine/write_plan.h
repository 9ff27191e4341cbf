// The engine's half of a write op (the rules are core/decide.h and
// core/bounds.h, in the order they name): the counter found in the catalog
// (Resolve), the stored marker read back (ReadMarker), and the WriteBatch
// ops of an applied op (Add*).
//
// The callers add what differs: one Get under one stripe (single calls) or
// one MultiGet under every stripe and folded merges (Apply, apply.cc), and
// the commit (write_path.cc). Refusals are what core::IsRefusal says,
// counted once per call by the caller (EngineStats::rejected).
//
// Nothing here takes a lock, makes a syscall or allocates once warm (the
// hot path); the only state is each thread's WriteScratch.

#ifndef TALLY_ENGINE_WRITE_PLAN_H_
#define TALLY_ENGINE_WRITE_PLAN_H_

#include <rocksdb/write_batch.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "engine/catalog.h"
#include "engine/rules.h"
#include "tally/status.h"
#include "tally/types.h"

namespace tally::engine {

// Per-thread scratch reused by every write, so the hot path does not
// allocate once warm.
struct WriteScratch {
  rocksdb::WriteBatch batch;
  std::string marker_key;
  std::string value;  // encodings (marker, outbox entry, counter record)
};
// This thread's scratch, its batch cleared.
WriteScratch& ThreadWriteScratch();

// The lock-stripe hash of a strict counter's key (with its counter id,
// EventLocks::StripeOf): every op of the key takes it, and so does
// DeleteKey of it.
uint64_t StrictKeyLockHash(std::string_view key);

// Where a strict counter's value lives: a key (empty: the named counter)
// and, for a quota, its window's bucket (kNoBucket without buckets).
struct StrictSlot {
  std::string_view key;
  int64_t bucket = kNoBucket;
};

// What the engine decided for one op: the rules' Decision, the counter
// it found and the lock stripe it takes.
struct OpPlan : Decision {
  const Catalog::Entry* counter = nullptr;  // set by Resolve
  // The hash of the lock stripe the op takes (EventLocks): a strict
  // counter's ops take their key's (every op of one key, once or not, is
  // checked and written under it); a sharded counter's once-ops their
  // event id's; a sharded counter's plain ops take none.
  uint64_t lock_hash = 0;  // strict: StrictKeyLockHash(key)
};

// The counter (NotFound naming it), then the op against it (PlaceOp) and
// the stripe it locks.
Status Resolve(const Catalog::Reader& catalog, const WriteOp& op, OpPlan* plan);

// What a call may name of a keyed counter: one key, or (kKeyOrWhole) one
// key or the whole counter (key empty).
enum class KeyUse { kOneKey, kKeyOrWhole };
// The counter a call names (NotFound naming it), its key checked (when
// given) and against the counter as for writes: a keyed counter needs a key
// (unless kKeyOrWhole), a named counter takes none.
Status FindCounterRef(const Catalog::Reader& catalog, CounterRef ref,
                      KeyUse use, const Catalog::Entry** out);

// A stored marker's delta and shard; Corruption naming its key and counter.
Status ReadMarker(const CounterInfo& c, std::string_view key,
                  std::string_view value, FoundMarker* marker);

// The WriteBatch ops of an applied op. `scratch` holds encodings
// between the calls (reused: no allocation once warm).
// One merge operand of `delta` into (counter, key, bucket, shard).
rocksdb::Status AddShardMerge(rocksdb::WriteBatch* wb,
                              rocksdb::ColumnFamilyHandle* shards,
                              const CounterInfo& c, std::string_view key,
                              int64_t bucket, uint32_t shard, int64_t delta);
// The marker key of a once-op against its counter. Replaces *out.
void MarkerKeyOf(const CounterInfo& c, const WriteOp& op, std::string* out);
// The same key appended to *out (Apply: all of a batch's in one buffer).
void AppendMarkerKeyOf(const CounterInfo& c, const WriteOp& op,
                       std::string* out);
// The new marker of a once-op, at `key`: of an applied op; for a strict
// counter also of a refused one (its answer is remembered).
rocksdb::Status AddMarker(rocksdb::WriteBatch* wb,
                          rocksdb::ColumnFamilyHandle* events,
                          std::string_view key, const WriteOp& op,
                          const OpPlan& plan, int64_t now,
                          std::string* scratch);
// The counter's record with kCounterFlagPlainIncrements: added once per
// counter, by its first plain increment, so Verify knows the counter's
// shards may hold more than its markers.
rocksdb::Status AddPlainFlag(rocksdb::WriteBatch* wb,
                             rocksdb::ColumnFamilyHandle* meta,
                             const CounterInfo& c, std::string* scratch);

}  // namespace tally::engine

#endif  // TALLY_ENGINE_WRITE_PLAN_H_
