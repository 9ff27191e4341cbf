// One write operation as the rules see it, and what they decide for it:
// the values every backend's write path passes through core/ (the engine's
// engine/write_path.cc and apply.cc; a remote backend's scripts by the case
// tables in tests/core/cases/).
//
// Thread safety: plain values.

#ifndef TALLY_CORE_WRITE_OP_H_
#define TALLY_CORE_WRITE_OP_H_

#include <cstdint>
#include <string_view>

#include "core/buckets.h"
#include "tally/batch.h"
#include "tally/options.h"
#include "tally/status.h"
#include "tally/types.h"

namespace tally::core {

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
  // A reset (Db::Reset): a once-op whose event id is the reset id and whose
  // delta is the value to set; what it adds is decided against the value
  // its key holds (AnswerReset).
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
  // Db::Reset: a once-op under the reset id whose delta is the value the
  // key is set to (its applied delta is decided by core::AnswerReset).
  static WriteOp Reset(CounterRef counter, std::string_view reset_id,
                       int64_t value, const ResetOptions& options) {
    WriteOp op = {counter.counter, counter.key,           reset_id, {},
                  value,           options.event_time_ms, true,     false};
    op.reset = true;
    return op;
  }
  static WriteOp Of(const Batch::Op& op) {
    return {op.counter, op.key,           op.event_id, op.affinity_key,
            op.delta,   op.event_time_ms, op.once,     op.saturate};
  }
};

// An event's marker as its lookup found it (found false: none). In a
// batch, an earlier copy of the event that was applied counts as found
// (MarkerOf).
struct FoundMarker {
  bool found = false;
  int64_t delta = 0;  // what was counted
  uint32_t shard = 0;
  // A strict counter's marker (and any reset's): the answer every copy
  // gets again.
  bool strict = false;
  bool refused = false;
  int64_t asked = 0;  // the delta the event asked for
  int64_t value = 0;
  int64_t window_ends = 0;  // a quota's: its window's end
  int64_t remaining = 0;    // the room it was answered (remaining_kept)
  bool reset = false;       // a reset's marker: asked and value are its value
  bool remaining_kept = false;  // `remaining` is the first answer's room
};

// What the rules decided for one op.
struct Decision {
  uint64_t event_hash = 0;  // once-ops: StableHash(event_id) (PlaceOp)
  // Where the op goes (PlaceOp); for an op a marker answered, where its
  // event went (Decide).
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

// A sliding quota's previous window, for an op of its current one: its use
// and how far into its own window the op falls.
struct PreviousWindow {
  int64_t used = 0;
  int64_t elapsed = 0;  // 0..width-1
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

// An increment's event time: the one given, else `now`.
inline int64_t EventTimeOr(int64_t event_time_ms, int64_t now) {
  return event_time_ms == kEventTimeNow ? now : event_time_ms;
}

}  // namespace tally::core

#endif  // TALLY_CORE_WRITE_OP_H_
