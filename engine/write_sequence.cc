// The write sequence of a single op (Increment, IncrementOnce, Reset; a
// strict counter's as a sharded one's): one function, WriteSingle, owns
// its order, and every kind of op passes through the same steps:
//
//   1. format  a reset's first use raises the database's format (before
//              any hold: RaiseFormatOnFirstUse);
//   2. check   under the catalog: writable, the op's arguments, its
//              counter and placement (core::CheckArguments, core::PlaceOp),
//              a reset's value against the counter's bounds;
//   3. lock    the op's stripes (OpStripes): a strict counter's key's, a
//              once-op's event id's, both for a sharded counter's reset;
//              a sharded counter's plain op takes none;
//   4. look up a once-op's marker, after any IncrementOnceAsync copy of the
//              event has been written (AwaitOnceWritten);
//   5. clock   read after the lookup, and only when the op needs it: a
//              found marker answers whatever the time (docs/design.md,
//              "Dedupe windows");
//   6. decide  core::Decide, then for an applied op its kind's rule against
//              its key's value: core::CheckBounds for a strict counter,
//              core::AnswerReset for a reset (DecideSingle);
//   7. commit  CommitDecided (engine/write_path.cc): one WriteBatch.
//
// Apply (apply.cc) runs the same steps for many ops at once (every stripe
// of the batch, one MultiGet, one commit), and IncrementOnceAsync
// (once_async.cc) stops before step 7 to queue its commit; both decide by
// the same core/ rules.

#include <cassert>

#include "engine/db_impl.h"
#include "engine/format.h"
#include "engine/perf_counters.h"
#include "engine/rules.h"
#include "engine/write_plan.h"

namespace tally::engine {
namespace {

// A strict counter is reset to a value within its bounds.
Status CheckResetBounds(const CounterInfo& c, int64_t value) {
  if (!c.bounds.any() || WithinBounds(c.bounds, value)) return Status::OK();
  return Status::InvalidArgument("reset value " + std::to_string(value) +
                                 " is outside the bounds of counter " +
                                 Quote(c.name));
}

// Step 5: whether the op reads the clock. A once-op whose marker was found
// does not (the marker answers); a strict counter's plain op does (its
// reservations run out by it), as a plain op of a counter with buckets or
// an outbox does.
bool ReadsClock(const CounterInfo& c, const WriteOp& op,
                const FoundMarker& marker) {
  if (op.once) return !marker.found;
  return c.bounds.any() || PlainNeedsClock(c);
}

}  // namespace

Status DbImpl::CheckSingle(const Catalog::Reader& catalog, const WriteOp& op,
                           bool async_call, OpPlan* plan) const {
  Status s = async_call ? PlanAsync(catalog, op, plan)
                        : PlanSingle(catalog, op, plan);
  if (s.ok() && op.reset) s = CheckResetBounds(*plan->counter, op.delta);
  return s;
}

DbImpl::OpStripes DbImpl::StripesOf(const WriteOp& op,
                                    const OpPlan& plan) const {
  const Catalog::Entry& c = *plan.counter;
  const bool strict = c.bounds.any();
  OpStripes out;
  if (op.once || strict) {
    out.first = event_locks_.StripeOf(c.id, plan.lock_hash);
  }
  // A sharded counter's reset also takes its key's stripe: resets of one
  // key take turns (two that read the same value would each subtract it).
  if (op.reset && !strict) {
    out.second = event_locks_.StripeOf(c.id, StrictKeyLockHash(op.key));
  }
  return out;
}

Status DbImpl::DecideSingle(const WriteOp& op, const FoundMarker& marker,
                            int64_t now, OpPlan* plan) {
  const Catalog::Entry& c = *plan->counter;
  Status s = Decide(c, op, marker, now, plan);
  if (!s.ok() || plan->outcome != Outcome::kApplied) return s;
  if (!op.reset && !c.bounds.any()) return s;
  // The value the rule judges: the key's (a quota's window's), its
  // previous window for a sliding quota, and what reservations hold.
  int64_t current = 0;
  s = op.reset ? ReadResetValue(c, op.key, plan->bucket, &current)
               : ReadStrictValue(c, op.key, plan->bucket, &current);
  PreviousWindow previous;
  if (s.ok() && c.sliding) {
    s = ReadPreviousWindow(c, op, now, plan->bucket, &previous);
  }
  int64_t held = 0;
  if (s.ok()) s = HeldUnits(c, op.key, now, &held);
  if (!s.ok()) return s;
  const PreviousWindow* prev = c.sliding ? &previous : nullptr;
  if (!op.reset) {
    CheckBounds(c, op, current, prev, plan, held);
    return Status::OK();
  }
  s = AnswerReset(c, op, current, prev, plan, held);
  if (s.ok() && reset_hook_for_test_) reset_hook_for_test_();
  return s;
}

Result<IncrementResult> DbImpl::WriteSingle(WriteOp op, bool async_call) {
  const PerfCountersOff perf_off;
  OpPlan plan;
  Status s;
  if (op.reset) {  // 1.
    s = RaiseFormatOnFirstUse(kFormatHolds, [&](const Catalog::Reader& r) {
      OpPlan first;
      return CheckSingle(r, op, async_call, &first);
    });
    if (!s.ok()) return s;
  }
  Catalog::Reader catalog(catalog_.get());
  s = CheckSingle(catalog, op, async_call, &plan);  // 2.
  if (!s.ok()) return s;
  const Catalog::Entry& c = *plan.counter;
  WriteScratch& scratch = ThreadWriteScratch();
  const OpStripes stripes = StripesOf(op, plan);  // 3.
  const EventLocks::PairGuard guard(&event_locks_, stripes.first,
                                    stripes.second);
  FoundMarker marker;
  if (op.once) {  // 4.
    MarkerKeyOf(c, op, &scratch.marker_key);
    // IncrementOnceAsync refuses strict counters: no copy is in flight.
    if (!c.bounds.any()) AwaitOnceWritten(scratch.marker_key);
    s = LookUpMarker(c, scratch.marker_key, &marker);
    if (!s.ok()) return s;
  }
  const int64_t now = ReadsClock(c, op, marker) ? clock_->NowMillis() : 0;
  // A reset without an event time (no dedupe window) happens now.
  if (op.reset && !marker.found && op.event_time_ms == kEventTimeNow) {
    op.event_time_ms = now;
  }
  s = DecideSingle(op, marker, now, &plan);  // 6.
  if (!s.ok()) return s;
  return CommitDecided(op, marker, now, &plan, &scratch);  // 7.
}

}  // namespace tally::engine
