// The single-op writer of the write sequence (engine/write_sequence.h):
// Increment, IncrementOnce and Reset, a strict counter's as a sharded
// one's, and IncrementOnceAsync without Options::sync (with the async
// calls' refusals).

#include <cassert>
#include <utility>

#include "engine/db_impl.h"
#include "engine/format.h"
#include "engine/rules.h"
#include "engine/write_plan.h"
#include "engine/write_sequence.h"

namespace tally::engine {
namespace {

// Whether a single op reads the clock (step 5). A once-op whose marker was found
// does not (the marker answers); a strict counter's plain op does (its
// reservations run out by it), as a plain op of a counter with buckets or
// an outbox does.
bool OpReadsClock(const CounterInfo& c, const WriteOp& op,
                const FoundMarker& marker) {
  if (op.once) return !marker.found;
  return c.bounds.any() || PlainNeedsClock(c);
}

}  // namespace

Status DbImpl::CheckSingle(const Catalog::Reader& catalog, const WriteOp& op,
                           bool async_call, OpPlan* plan) const {
  Status s = async_call ? PlanAsync(catalog, op, plan)
                        : PlanSingle(catalog, op, plan);
  if (s.ok() && op.reset) s = core::CheckResetBounds(*plan->counter, op.delta);
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

class DbImpl::SingleWrite : public WriteSteps {
 public:
  SingleWrite(DbImpl* db, WriteOp op, bool async_call)
      : db_(db), op_(std::move(op)), async_call_(async_call) {}

  Status RaiseFormat() {
    if (!op_.reset) return Status::OK();
    return db_->RaiseFormatOnFirstUse(
        kFormatHolds, [this](const Catalog::Reader& r) {
          OpPlan first;
          return db_->CheckSingle(r, op_, async_call_, &first);
        });
  }
  Status Check(const Catalog::Reader& catalog) {
    return db_->CheckSingle(catalog, op_, async_call_, &plan_);
  }
  EventLocks::PairGuard Lock() {
    const OpStripes stripes = db_->StripesOf(op_, plan_);
    return EventLocks::PairGuard(&db_->event_locks_, stripes.first,
                                 stripes.second);
  }
  Status LookUp() {
    if (!op_.once) return Status::OK();
    const Catalog::Entry& c = *plan_.counter;
    MarkerKeyOf(c, op_, &scratch_->marker_key);
    // IncrementOnceAsync refuses strict counters: no copy is in flight.
    if (!c.bounds.any()) db_->AwaitOnceWritten(scratch_->marker_key);
    return db_->LookUpMarker(c, scratch_->marker_key, &marker_);
  }
  bool ReadsClock() const {
    return OpReadsClock(*plan_.counter, op_, marker_);
  }
  Status Decide(int64_t now) {
    // A reset without an event time (no dedupe window) happens now.
    if (op_.reset && !marker_.found && op_.event_time_ms == kEventTimeNow) {
      op_.event_time_ms = now;
    }
    return db_->DecideSingle(op_, marker_, now, &plan_);
  }
  Status Commit(int64_t now) {
    Result<IncrementResult> r =
        db_->CommitDecided(op_, marker_, now, &plan_, scratch_);
    if (r.ok()) result_ = *r;
    return r.status();
  }

  const IncrementResult& result() const { return result_; }

 private:
  DbImpl* const db_;
  WriteOp op_;
  const bool async_call_;
  OpPlan plan_;
  FoundMarker marker_;
  WriteScratch* const scratch_ = &ThreadWriteScratch();
  IncrementResult result_;
};

Result<IncrementResult> DbImpl::WriteSingle(WriteOp op, bool async_call) {
  SingleWrite w(this, std::move(op), async_call);
  Status s = RunWrite(&w);
  if (!s.ok()) return s;
  return w.result();
}

}  // namespace tally::engine
