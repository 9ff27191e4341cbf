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
#include "engine/write_plan.h"

namespace tally::engine {

Result<IncrementResult> DbImpl::StartOnceAsync(
    const WriteOp& op, IncrementCallback* done,
    wal::CommitPipeline::AsyncSlot* slot, OnceStart* start) {
  assert(op.once && commit_->durable() && start->async.counter == nullptr);
  Catalog::Reader catalog(catalog_.get());
  OpPlan plan;
  Status s = PlanAsync(catalog, op, &plan);
  if (!s.ok()) return s;
  const Catalog::Entry& c = *plan.counter;
  std::string key;
  MarkerKeyOf(c, op, &key);
  EventLocks::Guard guard(&event_locks_,
                          event_locks_.StripeOf(c.id, plan.event_hash));
  FoundMarker marker;
  if (!once_in_flight_.Empty() && once_in_flight_.Find(key, &marker)) {
    // A copy of this event is queued: decided against it (as against its
    // stored marker), answered after it.
    s = Decide(c, op, marker, /*now=*/0, &plan);
    if (!s.ok()) return s;
    const IncrementResult answer{plan.outcome, plan.shard};
    if (once_in_flight_.AddRider(key, answer, done, slot)) {
      start->rode = true;
      return answer;
    }
    marker = FoundMarker{};  // written since Find: its marker is stored
  }
  // As IncrementOnce: the marker first; the clock only for a new event.
  s = LookUpMarker(c, key, &marker);
  if (!s.ok()) return s;
  const int64_t now = marker.found ? 0 : clock_->NowMillis();
  s = Decide(c, op, marker, now, &plan);
  if (!s.ok()) return s;
  const IncrementResult result{plan.outcome, plan.shard};
  if (result.outcome != Outcome::kApplied) {
    // Nothing to write: the answer is final now (a stored marker is
    // durable: every increment commit of a durable pipeline is synced).
    OutcomeCounts counted;
    counted.Add(result.outcome);
    CountOutcomes(counted);
    return result;
  }
  std::string scratch;
  s = AddApplied(op, plan, now, /*outbox=*/nullptr, &start->async.batch, key,
                 &scratch, &start->async.first_plain);
  if (!s.ok()) return s;
  // Registered before the stripe is released; counted before the catalog
  // is (AsyncCommits, as IncrementAsync).
  start->pending = once_in_flight_.Add(std::move(key), op.delta, plan.shard);
  async_.Begin();
  start->async.counter = &c;
  return result;
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
