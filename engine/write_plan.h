// The write planner: what every write call (Increment, IncrementOnce,
// IncrementAsync and each operation of Apply) does to one operation, in one
// order, with one set of messages:
//
//   1. CheckArguments  the op's own arguments (delta, event id, event time),
//                      before the catalog is consulted;
//   2. Resolve         under the catalog: the counter, the shard, and the op
//                      against the counter (affinity policy, the event time
//                      a dedupe window needs);
//   3. Decide          after the marker lookup (once-ops) and the clock read:
//                      the outcome, the bucket (retention) and the new
//                      marker's expiry;
//   4. Add*            the WriteBatch ops of an applied op.
//
// The callers add what differs: one Get under one stripe (single calls) or
// one MultiGet under every stripe and folded merges (Apply, apply.cc), and
// the commit (write_path.cc). Refusals are what IsRefusal says, counted once
// per call by the caller (EngineStats::rejected).
//
// Nothing here takes a lock, makes a syscall or allocates once warm (the
// hot path); the only state is each thread's WriteScratch.

#ifndef TALLY_ENGINE_WRITE_PLAN_H_
#define TALLY_ENGINE_WRITE_PLAN_H_

#include <rocksdb/write_batch.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "engine/buckets.h"
#include "engine/catalog.h"
#include "tally/batch.h"
#include "tally/options.h"
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

// One write operation as its caller gave it: views of a single call's
// arguments or of one Batch::Op, valid during the call.
struct WriteOp {
  std::string_view counter;
  std::string_view key;           // a keyed counter's key; else empty
  std::string_view event_id;      // once-ops only
  std::string_view affinity_key;  // may be empty
  int64_t delta = 0;
  int64_t event_time_ms = kEventTimeNow;
  bool once = false;
  bool saturate = false;  // strict counters: apply what fits
  // A reset (Db::Reset, engine/reset.cc): a once-op whose event id is the
  // reset id and whose delta is the value to set; what it adds is decided
  // under its locks (AnswerReset).
  bool reset = false;

  static WriteOp Plain(CounterRef counter, int64_t delta,
                       const IncrementOptions& options) {
    return {counter.counter,       counter.key, {},    options.affinity_key,
            delta, options.event_time_ms, false, options.saturate};
  }
  static WriteOp Once(CounterRef counter, std::string_view event_id,
                      int64_t delta, const OnceOptions& options) {
    return {counter.counter, counter.key, event_id, options.affinity_key,
            delta, options.event_time_ms, true, options.saturate};
  }
  static WriteOp Of(const Batch::Op& op) {
    return {op.counter, op.key,           op.event_id, op.affinity_key,
            op.delta,   op.event_time_ms, op.once,     op.saturate};
  }
};

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

// What the planner decided for one op.
struct OpPlan {
  const Catalog::Entry* counter = nullptr;  // set by Resolve
  uint64_t event_hash = 0;                  // once-ops: StableHash(event_id)
  // The hash of the lock stripe the op takes (EventLocks): a strict
  // counter's ops take their key's (every op of one key, once or not, is
  // checked and written under it); a sharded counter's once-ops their
  // event id's; a sharded counter's plain ops take none.
  uint64_t lock_hash = 0;  // strict: StrictKeyLockHash(key)
  // Where the op goes; for an op a marker answered, where its event went.
  uint32_t shard = 0;
  int64_t bucket = kNoBucket;  // set by Decide for an applied op
  int64_t expires_at = 0;      // an applied once-op's marker expiry (0: never)
  Outcome outcome = Outcome::kApplied;  // set by Decide
  // Set by Decide and CheckBounds: the delta counted (IncrementResult::
  // applied) and a strict counter's answer (IncrementResult::value,
  // remaining and window_ends_ms).
  int64_t applied = 0;
  int64_t value = 0;
  int64_t remaining = 0;
  int64_t window_ends = 0;

  IncrementResult Result() const {
    return IncrementResult{outcome, shard,     value,
                           applied, remaining, window_ends};
  }
};

// An event's marker as its lookup found it. In a batch, an earlier copy
// of the event that was applied counts as found (its delta and shard).
struct FoundMarker {
  bool found = false;
  int64_t delta = 0;  // what was counted
  uint32_t shard = 0;
  // A strict counter's marker: the answer every copy gets again.
  bool strict = false;
  bool refused = false;
  int64_t asked = 0;  // the delta the event asked for
  int64_t value = 0;
  int64_t window_ends = 0;  // a quota's: its window's end
  int64_t remaining = 0;    // a quota's: the room it was answered
  bool reset = false;       // a reset's marker: asked and value are its value
  bool remaining_kept = false;  // `remaining` is the first answer's room
};

// Outcomes of the ops of one successful call, for EngineStats.
struct OutcomeCounts {
  uint64_t applied = 0;
  uint64_t duplicates = 0;
  uint64_t conflicts = 0;
  uint64_t outside_window = 0;
  uint64_t refused = 0;
  void Add(Outcome o);
};

// The errors by which a write call is refused for what the call asks:
// InvalidArgument and OutOfRange (a bad argument, a batch too large, a sum
// beyond int64, an event time past retention), NotFound (no such counter)
// and NotSupported (a read-only database, IncrementAsync of an outbox
// counter). Failures of the database (IOError, Corruption, Busy when the
// outbox is full) are not refusals.
bool IsRefusal(const Status& s);

// 1. The op's own arguments: delta, then the key (when given), then the
// event id (once-ops), then the event time.
Status CheckArguments(const WriteOp& op);

// 2. The counter (NotFound naming it), then the key against it (a keyed
// counter needs one, a named counter takes none), then its shard: a once-op's is the
// hash of its affinity key when given (checked) else of its event id; a
// plain op's is the hash of its affinity key when given (checked) else,
// under the random policy, a random shard. Then a once-op on a counter with
// a dedupe window must carry its event time.
Status Resolve(const Catalog::Reader& catalog, const WriteOp& op, OpPlan* plan);

// A keyed counter's ops name a key, a named counter's none: InvalidArgument
// naming the counter otherwise.
Status CheckKeyed(const CounterInfo& c, std::string_view key);

// What a call may name of a keyed counter: one key, or (kKeyOrWhole) one
// key or the whole counter (key empty).
enum class KeyUse { kOneKey, kKeyOrWhole };
// The counter a call names (NotFound naming it), its key checked (when
// given) and against the counter as for writes: a keyed counter needs a key
// (unless kKeyOrWhole), a named counter takes none.
Status FindCounterRef(const Catalog::Reader& catalog, CounterRef ref,
                      KeyUse use, const Catalog::Entry** out);

// Whether a plain op of `c` reads the clock (buckets, outbox): once-ops
// always do, after their marker lookup.
bool PlainNeedsClock(const CounterInfo& c);

// 3. The outcome of `op` by `marker` (once-ops) and `now`: a found marker
// answers kDuplicate or kConflict with its shard, whatever the time (a
// strict counter's kRefused too, as its first delivery was); else
// the bucket holding the event time must be within retention
// (InvalidArgument), and a once-op older than its window is
// kOutsideWindow; else kApplied, with the new marker's expiry.
Status Decide(const WriteOp& op, const FoundMarker& marker, int64_t now,
              OpPlan* plan);

// 3b. Strict counters, for an op Decide found kApplied: the op against the
// value `current` its key holds now (in the op's bucket for a quota; the
// earlier ops of a batch included). Within the bounds (and int64):
// kApplied, value = current + delta. Past one: with op.saturate, what fits
// in the delta's direction (kRefused when nothing does); else kRefused,
// value = current, nothing applied. Then the answer's remaining room and
// window end (IncrementResult).
// A sliding quota's op also needs the previous window: `previous` (else
// null) holds its use and how far into its own window the op falls, and an
// increment is held to max - floor(used * (width - elapsed) / width),
// rounded so that the estimate stays within the maximum.
struct PreviousWindow {
  int64_t used = 0;
  int64_t elapsed = 0;  // 0..width-1
};
// `held`: the units the key's open reservations hold (Db::Reserve), which
// raise the minimum the value must keep by as much (0: none).
void CheckBounds(const WriteOp& op, int64_t current,
                 const PreviousWindow* previous, OpPlan* plan,
                 int64_t held = 0);
// A reset Decide found kApplied: the key (a quota's window) holds
// `current` and is set to op.delta, so the op adds op.delta - current
// (OutOfRange when that is beyond int64: the reset is refused, nothing
// written). The answer is a reset's: value op.delta, a strict counter's
// remaining room toward its maximum (a sliding quota's by `previous`), else
// toward the bound the delta moves toward, as for an increment.
Status AnswerReset(const WriteOp& op, int64_t current,
                   const PreviousWindow* previous, OpPlan* plan);
// What an increment of a strict counter whose value (a quota's window's
// use) is `used` may still take now (QuotaState::remaining).
int64_t RoomNow(const CounterInfo& c, int64_t used,
                const PreviousWindow* previous);

// Why a strict op was refused, for a batch's OutOfRange: the key, the
// bound it would cross, the value and the delta.
std::string RefusalReason(const CounterInfo& c, const WriteOp& op,
                          int64_t current, const PreviousWindow* previous,
                          int64_t held = 0);

// An increment's event time: the one given, else `now`.
inline int64_t EventTimeOr(int64_t event_time_ms, int64_t now) {
  return event_time_ms == kEventTimeNow ? now : event_time_ms;
}

// A stored marker's delta and shard; Corruption naming its key and counter.
Status ReadMarker(const CounterInfo& c, std::string_view key,
                  std::string_view value, FoundMarker* marker);

// 4. The WriteBatch ops of an applied op. `scratch` holds encodings
// between the calls (reused: no allocation once warm).
// One merge operand of `delta` into (counter, key, bucket, shard).
rocksdb::Status AddShardMerge(rocksdb::WriteBatch* wb,
                              rocksdb::ColumnFamilyHandle* shards,
                              const CounterInfo& c, std::string_view key,
                              int64_t bucket, uint32_t shard, int64_t delta);
// The marker key of a once-op against its counter. Replaces *out.
void MarkerKeyOf(const CounterInfo& c, const WriteOp& op, std::string* out);
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
