// IncrementOnceAsync: IncrementOnce with IncrementAsync's callback
// contract, so one thread can keep many durable once-increments in flight.
//
// The marker check runs under the event's stripe, as IncrementOnce's does,
// but the stripe is released before the commit: a copy decided as applied
// is registered in OnceInFlight (engine/once_in_flight.h) before the
// stripe is released and removed by its commit's `written` hook, so every
// later check of the event, under the same stripe, sees either the pending
// copy or the stored marker. A later async copy rides on the pending one
// (answered after it, never waiting); IncrementOnce and Apply wait for it.
//
// Cost over IncrementAsync: the stripe mutex and one marker Get (as
// IncrementOnce), the registry's mutex twice (add, and remove in the
// `written` hook) and one allocation for the registry entry with its key.
// Without Options::sync it is IncrementOnce plus the callback.

#include <cassert>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/coding.h"
#include "engine/db_impl.h"
#include "engine/rules.h"
#include "engine/write_plan.h"
#include "engine/write_sequence.h"

namespace tally::engine {

// IncrementOnceAsync's writer of the write sequence
// (engine/write_sequence.h) on a durable pipeline. Takes `*done` and
// `*slot` only when the copy rides on a pending one.
class DbImpl::OnceAsyncWrite : public WriteSteps {
 public:
  OnceAsyncWrite(DbImpl* db, const WriteOp& op, IncrementCallback* done,
                 wal::CommitPipeline::AsyncSlot* slot, OnceStart* start)
      : db_(db), op_(op), done_(done), slot_(slot), start_(start) {
    assert(op.once && db->commit_->durable() &&
           start->async.counter == nullptr);
  }

  Status Check(const Catalog::Reader& catalog) {
    Status s = db_->PlanAsync(catalog, op_, &plan_);
    if (s.ok()) MarkerKeyOf(*plan_.counter, op_, &key_);
    return s;
  }
  EventLocks::Guard Lock() {
    return EventLocks::Guard(
        &db_->event_locks_,
        db_->event_locks_.StripeOf(plan_.counter->id, plan_.event_hash));
  }
  Status LookUp() {
    OnceInFlight& in_flight = db_->once_in_flight_;
    FoundMarker pending;
    if (!in_flight.Empty() && in_flight.Find(key_, &pending)) {
      // A copy of this event is queued: decided against it (as against
      // its stored marker), answered after it.
      Status s = core::Decide(*plan_.counter, op_, pending, /*now=*/0, &plan_);
      if (!s.ok()) return s;
      if (in_flight.AddRider(key_, result(), done_, slot_)) {
        start_->rode = true;
        finished = true;
        return s;
      }
      // Written since Find: its marker is stored.
    }
    return db_->LookUpMarker(*plan_.counter, key_, &marker_);
  }
  // As IncrementOnce: the clock only for a new event.
  bool ReadsClock() const { return !marker_.found; }
  Status Decide(int64_t now) {
    return core::Decide(*plan_.counter, op_, marker_, now, &plan_);
  }
  Status Commit(int64_t now) {
    if (plan_.outcome != Outcome::kApplied) {
      // Nothing to write: the answer is final now (a stored marker is
      // durable: every increment commit of a durable pipeline is synced).
      OutcomeCounts counted;
      counted.Add(plan_.outcome);
      db_->CountOutcomes(counted);
      return Status::OK();
    }
    const Catalog::Entry& c = *plan_.counter;
    std::string scratch;
    Status s = db_->AddApplied(op_, plan_, now, /*outbox=*/nullptr,
                               &start_->async.batch, key_, &scratch,
                               &start_->async.first_plain);
    if (!s.ok()) return s;
    // Registered before the stripe is released; counted before the
    // catalog is (AsyncCommits, as IncrementAsync).
    start_->pending =
        db_->once_in_flight_.Add(std::move(key_), op_.delta, plan_.shard);
    db_->async_.Begin();
    start_->async.counter = &c;
    return s;
  }

  // The answer as decided (the async calls answer outcome and shard).
  IncrementResult result() const { return plan_.Result(); }

 private:
  DbImpl* const db_;
  const WriteOp& op_;
  IncrementCallback* const done_;
  wal::CommitPipeline::AsyncSlot* const slot_;
  OnceStart* const start_;
  OpPlan plan_;
  std::string key_;
  FoundMarker marker_;
};

Result<IncrementResult> DbImpl::StartOnceAsync(
    const WriteOp& op, IncrementCallback* done,
    wal::CommitPipeline::AsyncSlot* slot, OnceStart* start) {
  OnceAsyncWrite w(this, op, done, slot, start);
  Status s = RunWrite(&w);
  if (!s.ok()) return s;
  return w.result();
}

void DbImpl::IncrementOnceAsync(CounterRef counter,
                                std::string_view event_id, int64_t delta,
                                IncrementCallback done,
                                const OnceOptions& options) {
  if (!commit_->durable()) {
    // Written at once, as IncrementOnce writes, with the async calls'
    // refusals (strict and outbox counters), which do not depend on
    // durability.
    Result<IncrementResult> r = WriteSingle(
        WriteOp::Once(counter, event_id, delta, options), /*async_call=*/true);
    CountRefusal(r.status());
    return done(r);
  }
  // Room first, holding nothing (as IncrementAsync).
  wal::CommitPipeline::AsyncSlot slot = commit_->ReserveAsync();
  OnceStart start;
  Result<IncrementResult> result = StartOnceAsync(
      WriteOp::Once(counter, event_id, delta, options), &done, &slot, &start);
  CountRefusal(result.status());
  if (start.rode) return;  // answered after the copy it rides on
  const Catalog::Entry* c = start.async.counter;
  if (c == nullptr) return done(result);  // refused, or final without a write
  assert(result.ok() && result->outcome == Outcome::kApplied);
  const IncrementResult applied = *result;
  std::shared_ptr<OnceInFlight::Pending> pending = std::move(start.pending);
  commit_->CommitAsync(
      std::move(start.async.batch), std::move(slot),
      // On the thread that wrote the group: later checks of the event read
      // the stored marker (or, after a failure, find none).
      [this, c, first_plain = start.async.first_plain,
       pending](const Status& st) {
        if (st.ok()) AsyncApplied(*c, first_plain);
        once_in_flight_.Remove(*pending);
        async_.End();
      },
      // On the notifier thread: this copy's answer, then its riders', in
      // the order they were decided.
      [this, applied, pending, done = std::move(done)](const Status& st) {
        if (st.ok()) {
          done(applied);
        } else {
          done(st);
        }
        std::vector<OnceInFlight::Rider> riders = pending->TakeRiders();
        for (OnceInFlight::Rider& r : riders) {
          if (st.ok()) {
            OutcomeCounts counted;
            counted.Add(r.answer.outcome);
            CountOutcomes(counted);
            r.done(r.answer);
          } else {
            r.done(st);
          }
          r.slot = wal::CommitPipeline::AsyncSlot();  // its room back
        }
      });
}

}  // namespace tally::engine
