// The rules of strict counters (core/bounds.h).

#include "core/bounds.h"

#include <cassert>
#include <limits>

#include "core/validate.h"
#include "tally/limits.h"

namespace tally::core {
namespace {

// A strict counter's range: its bounds, within int64 (INT64_MIN is the
// overflowed state, never a value).
__int128 Low(const CounterBounds& b) {
  return b.has_min ? b.min : std::numeric_limits<int64_t>::min() + 1;
}
__int128 High(const CounterBounds& b) {
  return b.has_max ? b.max : std::numeric_limits<int64_t>::max();
}

}  // namespace

int64_t Remaining(const CounterBounds& b, int64_t asked, int64_t value) {
  const bool up = asked > 0 || (asked == 0 && b.has_max);
  const __int128 room = up ? High(b) - value : value - Low(b);
  if (room < 0) return 0;
  return room > std::numeric_limits<int64_t>::max()
             ? std::numeric_limits<int64_t>::max()
             : static_cast<int64_t>(room);
}

namespace {

// The bounds an op of `c` is held to: the counter's, with a sliding
// quota's maximum lowered by the previous window's weighted use for an
// increment. The largest value v with used * (width - elapsed) + v * width
// <= max * width: floor((max * width - used * (width - elapsed)) / width).
CounterBounds BoundsFor(const CounterInfo& c, int64_t delta,
                        const PreviousWindow* previous, int64_t held = 0) {
  CounterBounds b = c.bounds;
  if (held > 0) {
    // Units held by open reservations stay out of reach: min <= 0 <= held,
    // so the sum stays within int64.
    assert(b.has_min && b.min <= 0 && previous == nullptr);
    b.min += held;
  }
  if (previous == nullptr || delta <= 0) return b;
  assert(c.sliding && b.has_max);
  const int64_t width = BucketWidthMs(c.bucket);
  assert(previous->elapsed >= 0 && previous->elapsed < width);
  const __int128 num = static_cast<__int128>(b.max) * width -
                       static_cast<__int128>(previous->used) *
                           (width - previous->elapsed);
  const __int128 floor = num >= 0 ? num / width : -((-num + width - 1) / width);
  // >= -used >= -INT64_MAX (the previous use is a value within int64).
  b.max = static_cast<int64_t>(floor);
  return b;
}

}  // namespace

int64_t RoomNow(const CounterInfo& c, int64_t used,
                const PreviousWindow* previous) {
  return Remaining(BoundsFor(c, 1, previous), 1, used);
}

Status AnswerReset(const CounterInfo& c, const WriteOp& op, int64_t current,
                   const PreviousWindow* previous, Decision* d, int64_t held) {
  assert(op.reset && d->outcome == Outcome::kApplied);
  assert(!c.bounds.any() || WithinBounds(c.bounds, op.delta));
  assert(held == 0 || c.bounds.has_min);
  if (held > 0 && static_cast<__int128>(op.delta) - held < c.bounds.min) {
    return Status::InvalidArgument(
        "reset value " + std::to_string(op.delta) + " of counter " +
        Quote(c.name) + " would leave less than its minimum " +
        std::to_string(c.bounds.min) + " beside the " + std::to_string(held) +
        " units open reservations hold");
  }
  const __int128 add = static_cast<__int128>(op.delta) - current;
  if (add < kMinDelta || add > kMaxDelta) {
    return Status::OutOfRange(
        CounterKeyNaming(c.name, op.key) + " holds " +
        std::to_string(current) + ": a reset to " + std::to_string(op.delta) +
        " would add a delta beyond int64");
  }
  d->applied = static_cast<int64_t>(add);
  d->value = op.delta;
  d->window_ends =
      d->bucket == kNoBucket ? 0 : d->bucket + BucketWidthMs(c.bucket);
  d->remaining = 0;
  if (d->window_ends != 0 && c.bounds.any()) {
    d->remaining = RoomNow(c, op.delta, previous);
  } else if (c.bounds.any()) {
    d->remaining = Remaining(c.bounds, d->applied, op.delta);
  }
  return Status::OK();
}

void CheckBounds(const CounterInfo& c, const WriteOp& op, int64_t current,
                 const PreviousWindow* previous, Decision* d,
                 int64_t held) {
  const CounterBounds b = BoundsFor(c, op.delta, previous, held);
  assert(b.any() && d->outcome == Outcome::kApplied);
  assert((previous != nullptr) == c.sliding);
  assert((d->bucket == kNoBucket) == (c.bucket == BucketWidth::kNone));
  d->window_ends =
      d->bucket == kNoBucket ? 0 : d->bucket + BucketWidthMs(c.bucket);
  const __int128 lo = Low(b), hi = High(b);
  const __int128 next = static_cast<__int128>(current) + op.delta;
  if (next >= lo && next <= hi) {
    d->applied = op.delta;
    d->value = static_cast<int64_t>(next);
    d->remaining = Remaining(b, op.delta, d->value);
    return;
  }
  // What fits: up to the bound the delta goes toward, never past the delta
  // nor the other way (a value already outside its bounds only moves in).
  const __int128 fit = (next < lo ? lo : hi) - current;
  const bool fits = op.saturate && fit != 0 && (fit > 0) == (op.delta > 0) &&
                    (fit > 0 ? fit < op.delta : fit > op.delta);
  d->outcome = fits ? Outcome::kApplied : Outcome::kRefused;
  d->applied = fits ? static_cast<int64_t>(fit) : 0;
  d->value = current + d->applied;
  d->remaining = Remaining(b, op.delta, d->value);
}

std::string RefusalReason(const CounterInfo& c, const WriteOp& op,
                          int64_t current, const PreviousWindow* previous,
                          int64_t held) {
  const CounterBounds b = BoundsFor(c, op.delta, previous, held);
  const __int128 next = static_cast<__int128>(current) + op.delta;
  const bool below = next < Low(b);
  std::string bound;
  if (below && held > 0) {
    bound = "its minimum " + std::to_string(c.bounds.min) + " plus the " +
            std::to_string(held) + " units open reservations hold";
  } else if (below) {
    bound = b.has_min ? "its minimum " + std::to_string(b.min)
                      : std::string("int64");
  } else if (b.max != c.bounds.max) {
    bound = "its maximum " + std::to_string(c.bounds.max) +
            " over the sliding window (" + std::to_string(b.max) +
            " in this window now, after the previous window's " +
            std::to_string(previous->used) + ")";
  } else {
    bound = b.has_max ? "its maximum " + std::to_string(b.max)
                      : std::string("int64");
  }
  return CounterKeyNaming(c.name, op.key) + " holds " + std::to_string(current) + ": delta " +
         std::to_string(op.delta) + " would take it " +
         (below ? "below " : "above ") + bound;
}

Status CheckResetBounds(const CounterInfo& c, int64_t value) {
  if (!c.bounds.any() || WithinBounds(c.bounds, value)) return Status::OK();
  return Status::InvalidArgument("reset value " + std::to_string(value) +
                                 " is outside the bounds of counter " +
                                 Quote(c.name));
}

Status CheckQuota(const CounterInfo& c) {
  if (c.bounds.any() && c.bucket != BucketWidth::kNone) return Status::OK();
  return Status::InvalidArgument(
      "counter " + Quote(c.name) +
      " is not a quota (a strict counter with time buckets)");
}

QuotaWindow QuotaWindowAt(const CounterInfo& c, int64_t now) {
  QuotaWindow w;
  w.width = BucketWidthMs(c.bucket);
  assert(w.width > 0);
  w.start = BucketStart(now, w.width);
  w.previous = c.sliding && w.start >= w.width;
  return w;
}

QuotaState QuotaStateOf(const CounterInfo& c, const QuotaWindow& w,
                        int64_t now, int64_t used, int64_t previous_used) {
  QuotaState q;
  q.window_start_ms = w.start;
  q.window_ends_ms = w.start + w.width;
  q.used = used;
  q.previous_used = w.previous ? previous_used : 0;
  const PreviousWindow window{q.previous_used, now - w.start};
  q.remaining = RoomNow(c, q.used, c.sliding ? &window : nullptr);
  return q;
}

}  // namespace tally::core
