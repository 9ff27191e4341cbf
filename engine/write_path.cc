// The write path of single calls: Increment and IncrementOnce (through the
// write sequence, engine/write_sequence.h), the commit of a decided op
// (CommitDecided) and IncrementAsync. Each plans its one operation with the
// write planner (engine/write_plan.h), as Apply (apply.cc) plans each of a
// batch's.
//
// Cost of one plain increment: a shared catalog lock, one hash lookup, one
// RocksDB Write of a 12-byte key and an 8-byte operand from a reused
// thread-local WriteBatch (no allocation once warm). A once-increment adds a
// stripe mutex, one marker Get (bloom filters answer most misses) and, for a
// new event, a clock read (after the Get) and the marker Put in the same
// WriteBatch. Bucketed counters use a 20-byte key and read the clock; outbox
// counters add one entry Put and two short sequencer mutex sections; with
// Options::sync the commit goes through the group commit
// (wal/group_commit.h). A clock read is the engine clock's
// (engine/engine_clock.h): Options::clock plus one atomic load, and a
// compare-and-swap when the time moved. IncrementAsync with Options::sync
// adds a room reservation and the AsyncCommits count (three short mutex
// sections), its own WriteBatch and the queued commit with its two
// callbacks (the `written` hook is one small allocation: it keeps the
// settle accounting off the user callback's thread, see async_commits.h);
// without sync it is Increment plus the callback. Every call runs with
// RocksDB's per-thread perf counters off (engine/perf_counters.h), which
// saves more than the engine spends outside RocksDB.

#include <rocksdb/write_batch.h>

#include <cassert>
#include <utility>

#include "engine/coding.h"
#include "engine/db_impl.h"
#include "engine/outbox_run.h"
#include "engine/rules.h"
#include "engine/write_plan.h"
#include "engine/write_sequence.h"
#include "util/rocks_status.h"

namespace tally::engine {

void DbImpl::CountRefusal(const Status& s) {
  if (IsRefusal(s)) stats_.rejected.fetch_add(1, std::memory_order_relaxed);
}

void DbImpl::CountOutcomes(const OutcomeCounts& n) {
  stats_.applied.fetch_add(n.applied, std::memory_order_relaxed);
  stats_.duplicates.fetch_add(n.duplicates, std::memory_order_relaxed);
  stats_.conflicts.fetch_add(n.conflicts, std::memory_order_relaxed);
  stats_.outside_window.fetch_add(n.outside_window, std::memory_order_relaxed);
  stats_.refused.fetch_add(n.refused, std::memory_order_relaxed);
}

void DbImpl::Applied(const Catalog::Entry& c, bool first_plain, uint64_t n) {
  assert(n > 0);
  if (first_plain) c.plain_recorded.store(true, std::memory_order_release);
  c.applied.fetch_add(n, std::memory_order_relaxed);
}

Status DbImpl::PlanSingle(const Catalog::Reader& catalog, const WriteOp& op,
                          OpPlan* plan) const {
  Status s = CheckWritable();
  if (s.ok()) s = CheckArguments(op);
  if (s.ok()) s = Resolve(catalog, op, plan);
  assert(!s.ok() || plan->counter != nullptr);
  return s;
}

Status DbImpl::AddEntry(const WriteOp& op, const OpPlan& plan, int64_t now,
                        const OutboxRun* outbox, rocksdb::WriteBatch* wb,
                        std::string* scratch) {
  return AddOutboxEntry(wb, outbox->first(), outbox->settled(), *plan.counter,
                        op.key, op.event_id, plan.applied,
                        EventTimeOr(op.event_time_ms, now), scratch);
}

Status DbImpl::AddApplied(const WriteOp& op, const OpPlan& plan, int64_t now,
                          const OutboxRun* outbox, rocksdb::WriteBatch* wb,
                          std::string_view marker_key, std::string* scratch,
                          bool* first_plain) {
  const Catalog::Entry& c = *plan.counter;
  assert(plan.outcome == Outcome::kApplied);
  assert(c.outbox == (outbox != nullptr));
  // The order each kind has always had in its WriteBatch (counterctl wal
  // dump shows it): a once-op's outbox entry, marker, merge; a plain op's
  // merge, flag, outbox entry.
  Status s;
  if (op.once && outbox != nullptr) {
    s = AddEntry(op, plan, now, outbox, wb, scratch);
  }
  rocksdb::Status rs;
  if (s.ok() && op.once) {
    rs = AddMarker(wb, events_, marker_key, op, plan, now, scratch);
  }
  if (s.ok() && rs.ok()) {
    rs = AddShardMerge(wb, shards_, c, op.key, plan.bucket, plan.shard,
                       plan.applied);
  }
  *first_plain = !op.once && !c.plain_recorded.load(std::memory_order_acquire);
  if (s.ok() && rs.ok() && *first_plain) {
    rs = AddPlainFlag(wb, meta_, c, scratch);
  }
  if (s.ok()) s = FromRocks(rs, op.once ? "increment once" : "increment");
  if (s.ok() && !op.once && outbox != nullptr) {
    s = AddEntry(op, plan, now, outbox, wb, scratch);
  }
  return s;
}

Status DbImpl::LookUpMarker(const CounterInfo& c, std::string_view key,
                            FoundMarker* marker) {
  rocksdb::PinnableSlice found;
  rocksdb::Status rs = db_->Get(rocksdb::ReadOptions(), events_,
                                rocksdb::Slice(key.data(), key.size()), &found);
  if (rs.IsNotFound()) return Status::OK();
  if (!rs.ok()) return FromRocks(rs, "read marker");
  return ReadMarker(c, key, found.ToStringView(), marker);
}

Result<IncrementResult> DbImpl::CommitDecided(const WriteOp& op,
                                              const FoundMarker& marker,
                                              int64_t now, OpPlan* plan,
                                              WriteScratch* scratch) {
  Status s;
  const IncrementResult result = plan->Result();
  if (result.outcome == Outcome::kRefused && op.once && !marker.found) {
    // A strict counter's new refusal: remembered for the event. A keyed
    // counter's key gets an operand of 0 beside it, so that a key holding
    // only refusals exists where keys are listed (ListKeys, and so export,
    // which would otherwise leave its markers behind).
    const CounterInfo& c = *plan->counter;
    rocksdb::Status rs = AddMarker(&scratch->batch, events_,
                                   scratch->marker_key, op, *plan, now,
                                   &scratch->value);
    if (rs.ok() && c.keyed) {
      rs = AddShardMerge(&scratch->batch, shards_, c, op.key, plan->bucket,
                         plan->shard, 0);
    }
    s = FromRocks(rs, "increment once");
    if (s.ok()) s = commit_->Commit(&scratch->batch);
    if (!s.ok()) return s;
  }
  if (result.outcome == Outcome::kApplied) {
    const Catalog::Entry& c = *plan->counter;
    OutboxRun outbox(this);
    if (c.outbox) s = outbox.Reserve(1, options_.outbox_max_entries);
    bool first_plain = false;
    if (s.ok()) {
      s = AddApplied(op, *plan, now, c.outbox ? &outbox : nullptr,
                     &scratch->batch, scratch->marker_key, &scratch->value,
                     &first_plain);
    }
    if (s.ok()) s = commit_->Commit(&scratch->batch);
    if (!s.ok()) return s;
    outbox.Committed();
    Applied(c, first_plain, 1);
  }
  OutcomeCounts counted;
  counted.Add(result.outcome);
  CountOutcomes(counted);
  return result;
}

Result<IncrementResult> DbImpl::Increment(CounterRef counter,
                                          int64_t delta,
                                          const IncrementOptions& options) {
  Result<IncrementResult> r =
      WriteSingle(WriteOp::Plain(counter, delta, options));
  CountRefusal(r.status());
  return r;
}

Result<IncrementResult> DbImpl::IncrementOnce(CounterRef counter,
                                              std::string_view event_id,
                                              int64_t delta,
                                              const OnceOptions& options) {
  Result<IncrementResult> r =
      WriteSingle(WriteOp::Once(counter, event_id, delta, options));
  CountRefusal(r.status());
  return r;
}

Status DbImpl::PlanAsync(const Catalog::Reader& catalog, const WriteOp& op,
                         OpPlan* plan) const {
  Status s = PlanSingle(catalog, op, plan);
  if (s.ok()) s = core::CheckAsync(*plan->counter, op);
  return s;
}

// IncrementAsync's writer of the write sequence (engine/write_sequence.h):
// a plain op takes no stripe and looks nothing up.
class DbImpl::PlainAsyncWrite : public WriteSteps {
 public:
  PlainAsyncWrite(DbImpl* db, const WriteOp& op, AsyncStart* start)
      : db_(db), op_(op), start_(start) {
    assert(!op.once && start->counter == nullptr);
  }

  Status Check(const Catalog::Reader& catalog) {
    return db_->PlanAsync(catalog, op_, &plan_);
  }
  bool ReadsClock() const { return PlainNeedsClock(*plan_.counter); }
  Status Decide(int64_t now) {
    return core::Decide(*plan_.counter, op_, FoundMarker{}, now, &plan_);
  }
  Status Commit(int64_t now) {
    const Catalog::Entry& c = *plan_.counter;
    std::string scratch;
    Status s = db_->AddApplied(op_, plan_, now, /*outbox=*/nullptr,
                               &start_->batch, {}, &scratch,
                               &start_->first_plain);
    if (!s.ok()) return s;
    if (!db_->commit_->durable()) {
      // Written at once, as Increment writes, inside the shared hold.
      s = db_->commit_->Commit(&start_->batch);
      if (s.ok()) db_->AsyncApplied(c, start_->first_plain);
      return s;
    }
    // Counted before the hold ends: a DeleteCounter that takes the catalog
    // next waits until this commit is written (AsyncCommits).
    db_->async_.Begin();
    start_->counter = &c;
    return s;
  }

  IncrementResult result() const { return plan_.Result(); }

 private:
  DbImpl* const db_;
  const WriteOp& op_;
  AsyncStart* const start_;
  OpPlan plan_;
};

Result<IncrementResult> DbImpl::StartAsync(const WriteOp& op,
                                           AsyncStart* start) {
  PlainAsyncWrite w(this, op, start);
  Status s = RunWrite(&w);
  if (!s.ok()) return s;
  return w.result();
}

void DbImpl::AsyncApplied(const Catalog::Entry& c, bool first_plain) {
  Applied(c, first_plain, 1);
  OutcomeCounts counted;
  counted.Add(Outcome::kApplied);
  CountOutcomes(counted);
}

void DbImpl::IncrementAsync(CounterRef counter, int64_t delta,
                            IncrementCallback done,
                            const IncrementOptions& options) {
  // Room first, holding nothing: room comes back as callbacks return, and
  // a callback may need the catalog.
  wal::CommitPipeline::AsyncSlot slot = commit_->ReserveAsync();
  AsyncStart start;
  Result<IncrementResult> result =
      StartAsync(WriteOp::Plain(counter, delta, options), &start);
  CountRefusal(result.status());
  // The catalog is released: `done` may call into the Db, and neither the
  // queueing nor the inline answers below take a lock of tally's.
  const Catalog::Entry* c = start.counter;
  if (c == nullptr) return done(result);  // refused, or written at once
  assert(result.ok() && result->outcome == Outcome::kApplied);
  const IncrementResult applied = *result;
  commit_->CommitAsync(
      std::move(start.batch), std::move(slot),
      // On the thread that wrote the group, before any callback: `c` stays
      // valid until async_.End(), since DeleteCounter waits for it before
      // it removes an entry; nothing after End() may touch `c`.
      [this, c, first_plain = start.first_plain](const Status& st) {
        if (st.ok()) AsyncApplied(*c, first_plain);
        async_.End();
      },
      // On the notifier thread, holding no lock of tally's; only values.
      [applied, done = std::move(done)](const Status& st) {
        if (st.ok()) {
          done(applied);
        } else {
          done(st);
        }
      });
}

}  // namespace tally::engine
