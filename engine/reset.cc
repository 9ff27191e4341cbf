// Idempotent reset (Db::Reset): sets a counter's value (one key's; a
// bucketed counter's bucket now, a quota's window now) to a target, once per
// reset id.
//
// A reset is a once-increment whose delta is decided under its locks: the
// target minus the value read now (AnswerReset, engine/write_plan.h). So it
// needs nothing new below the planner: its marker (EventMarker.reset, asked
// and value the target) makes it once per id and keeps the identity Verify
// checks (a counter's shards sum to its markers' deltas); its delta goes
// through the merge, the roll-up, the outbox and the WAL as any increment's;
// and the markers of earlier events stay, so a redelivered event from
// before the reset is still a duplicate.
//
// Locks: the key's stripe (StrictKeyLockHash): resets of one key take turns
// (two that read the same value would each subtract it), and a strict
// counter's every op of the key takes it too. A sharded counter's reset also
// takes its id's event stripe, which once-increments carrying that id take.
// Plain increments of a sharded counter take no lock: one committed between
// the reset's read and its commit stays on top of the target (the reset
// took effect at its read).
//
// Cost: a once-increment's, plus the read of the value (a strict key's Get,
// a sharded counter's exact read) and, for the first reset of a database,
// the synced raise of its format to 7.

#include <cassert>
#include <vector>

#include "engine/db_impl.h"
#include "engine/format.h"
#include "engine/perf_counters.h"
#include "engine/read_checks.h"
#include "engine/rules.h"
#include "engine/write_plan.h"
#include "tally/limits.h"

namespace tally::engine {
namespace {

// A strict counter is reset to a value within its bounds.
Status CheckResetBounds(const CounterInfo& c, int64_t value) {
  if (!c.bounds.any() || WithinBounds(c.bounds, value)) return Status::OK();
  return Status::InvalidArgument("reset value " + std::to_string(value) +
                                 " is outside the bounds of counter " +
                                 Quote(c.name));
}

}  // namespace

Result<IncrementResult> DbImpl::Reset(CounterRef counter,
                                      std::string_view reset_id,
                                      int64_t value,
                                      const ResetOptions& options) {
  Result<IncrementResult> r = ResetOne(counter, reset_id, value, options);
  CountRefusal(r.status());
  return r;
}

Status DbImpl::ReadResetValue(const CounterInfo& c, std::string_view key,
                              int64_t bucket, int64_t* value) {
  if (c.bounds.any()) return ReadStrictValue(c, key, bucket, value);
  if (bucket == kNoBucket) {
    return SumShards(c, key, rocksdb::ReadOptions(), value);
  }
  ExactSum sum;
  Status s = ScanBuckets(c, key, rocksdb::ReadOptions(), bucket, bucket + 1,
                         [&](int64_t, uint32_t, ShardSum v) { sum.Add(v); });
  if (!s.ok()) return s;
  return NarrowSum(c, sum, value);
}

Result<IncrementResult> DbImpl::ResetOne(CounterRef counter,
                                         std::string_view reset_id,
                                         int64_t value,
                                         const ResetOptions& options) {
  const PerfCountersOff perf_off;
  OnceOptions once;
  once.event_time_ms = options.event_time_ms;
  WriteOp op = WriteOp::Once(counter, reset_id, value, once);
  op.reset = true;
  if (Status v = ValidateResetId(reset_id); !v.ok()) return v;
  if (value < kMinDelta) {
    return Status::InvalidArgument(
        "reset value " + std::to_string(value) +
        " is reserved (the smallest accepted value is " +
        std::to_string(kMinDelta) + ")");
  }
  OpPlan plan;
  if (!catalog_->HasFormat(kFormatHolds)) {
    // The first reset raises the format (synced; it takes the catalog
    // exclusively, so no hold here): only for one that is not refused.
    {
      Catalog::Reader catalog(catalog_.get());
      Status s = PlanSingle(catalog, op, &plan);
      if (s.ok()) s = CheckResetBounds(*plan.counter, value);
      if (!s.ok()) return s;
    }
    Status s = catalog_->RequireFormat(kFormatHolds);
    if (!s.ok()) return s;
  }
  Catalog::Reader catalog(catalog_.get());
  Status s = PlanSingle(catalog, op, &plan);
  if (s.ok()) s = CheckResetBounds(*plan.counter, value);
  if (!s.ok()) return s;
  const Catalog::Entry& c = *plan.counter;
  std::vector<uint32_t> stripes{
      event_locks_.StripeOf(c.id, StrictKeyLockHash(op.key))};
  if (!c.bounds.any()) {
    stripes.push_back(event_locks_.StripeOf(c.id, plan.event_hash));
  }
  EventLocks::MultiGuard guard(&event_locks_, &stripes);
  WriteScratch& scratch = ThreadWriteScratch();
  MarkerKeyOf(c, op, &scratch.marker_key);
  // A queued IncrementOnceAsync copy of this id is waited for, then found.
  if (!c.bounds.any()) AwaitOnceWritten(scratch.marker_key);
  FoundMarker marker;
  s = LookUpMarker(c, scratch.marker_key, &marker);
  if (!s.ok()) return s;
  const int64_t now = marker.found ? 0 : clock_->NowMillis();
  // Without an event time (no dedupe window) a reset happens now.
  if (!marker.found && op.event_time_ms == kEventTimeNow) {
    op.event_time_ms = now;
  }
  // A reset older than the window is kOutsideWindow here, as a
  // once-increment: its marker may have expired.
  s = Decide(c, op, marker, now, &plan);
  if (!s.ok()) return s;
  if (plan.outcome == Outcome::kApplied) {
    int64_t current = 0;
    s = ReadResetValue(c, op.key, plan.bucket, &current);
    PreviousWindow previous;
    if (s.ok() && c.sliding) {
      s = ReadPreviousWindow(c, op, now, plan.bucket, &previous);
    }
    int64_t held = 0;
    if (s.ok()) s = HeldUnits(c, op.key, now, &held);
    if (s.ok() && held > 0 &&
        static_cast<__int128>(value) - held < c.bounds.min) {
      s = Status::InvalidArgument(
          "reset value " + std::to_string(value) + " of counter " +
          Quote(c.name) + " would leave less than its minimum " +
          std::to_string(c.bounds.min) + " beside the " +
          std::to_string(held) + " units open reservations hold");
    }
    if (s.ok()) s = AnswerReset(c, op, current, c.sliding ? &previous : nullptr,
                                &plan);
    if (!s.ok()) return s;
    if (reset_hook_for_test_) reset_hook_for_test_();
  }
  return CommitDecided(op, marker, now, &plan, &scratch);
}

}  // namespace tally::engine
