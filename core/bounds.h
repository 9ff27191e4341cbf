// The rules of strict counters (CounterSpec::bounds): bounds, fixed and
// sliding quotas, reservations' held units, and the answer of a reset.
//
// Thread safety: pure functions.

#ifndef TALLY_CORE_BOUNDS_H_
#define TALLY_CORE_BOUNDS_H_

#include <cstdint>
#include <string>

#include "core/write_op.h"
#include "tally/status.h"
#include "tally/types.h"

namespace tally::core {

// For an op Decide found kApplied on a strict counter `c`: the op against
// the value `current` its key holds now (in the op's bucket for a quota;
// the earlier ops of a batch included). Within the bounds (and int64):
// kApplied, value = current + delta. Past one: with op.saturate, what fits
// in the delta's direction (kRefused when nothing does); else kRefused,
// value = current, nothing applied. Then the answer's remaining room and
// window end (IncrementResult).
// A sliding quota's op also needs the previous window (`previous`, else
// null): an increment is held to max - floor(used * (width - elapsed) /
// width), rounded so that the estimate stays within the maximum.
// `held`: the units the key's open reservations hold (Db::Reserve), which
// raise the minimum the value must keep by as much (0: none).
void CheckBounds(const CounterInfo& c, const WriteOp& op, int64_t current,
                 const PreviousWindow* previous, Decision* d,
                 int64_t held = 0);

// A reset Decide found kApplied: the key (a quota's window) holds `current`
// and is set to op.delta, so the op adds op.delta - current (OutOfRange
// when that is beyond int64: the reset is refused, nothing written). The
// answer is a reset's: value op.delta, a strict counter's remaining room
// toward its maximum (a sliding quota's by `previous`), else toward the
// bound the delta moves toward, as for an increment. `held`: the units the
// key's open reservations hold; a strict counter is not reset below its
// minimum plus those (InvalidArgument).
Status AnswerReset(const CounterInfo& c, const WriteOp& op, int64_t current,
                   const PreviousWindow* previous, Decision* d,
                   int64_t held = 0);

// A strict counter is reset to a value within its bounds: InvalidArgument
// naming the value and the counter otherwise (any value for the others).
Status CheckResetBounds(const CounterInfo& c, int64_t value);

// What an increment of a strict counter whose value (a quota's window's
// use) is `used` may still take now (QuotaState::remaining).
int64_t RoomNow(const CounterInfo& c, int64_t used,
                const PreviousWindow* previous);

// ReadQuota of `c`: InvalidArgument unless it is a quota (a strict counter
// with time buckets).
Status CheckQuota(const CounterInfo& c);

// The window a quota's read sees at `now`: [start, ends) of the bucket
// holding `now`, and (a sliding quota's) whether the window before it
// exists (not before 1970's first bucket).
struct QuotaWindow {
  int64_t start = 0;
  int64_t width = 0;
  bool previous = false;
};
QuotaWindow QuotaWindowAt(const CounterInfo& c, int64_t now);

// ReadQuota's answer: the window's use `used` (and the previous window's
// `previous_used` for a sliding quota) at `now`.
QuotaState QuotaStateOf(const CounterInfo& c, const QuotaWindow& w,
                        int64_t now, int64_t used, int64_t previous_used);

// IncrementResult::remaining: the room from `value` to the bound an op of
// `asked` moves toward, clamped to 0..INT64_MAX.
int64_t Remaining(const CounterBounds& b, int64_t asked, int64_t value);

// Why a strict op was refused, for a batch's OutOfRange: the key, the
// bound it would cross, the value and the delta.
std::string RefusalReason(const CounterInfo& c, const WriteOp& op,
                          int64_t current, const PreviousWindow* previous,
                          int64_t held = 0);

}  // namespace tally::core

#endif  // TALLY_CORE_BOUNDS_H_
