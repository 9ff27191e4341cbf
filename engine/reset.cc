// Idempotent reset (Db::Reset): sets a counter's value (one key's; a
// bucketed counter's bucket now, a quota's window now) to a target, once per
// reset id.
//
// A reset is a once-increment whose delta is decided under its locks: the
// target minus the value read now (core::AnswerReset). It runs the write
// sequence of every single op (engine/write_sequence.h), so it needs
// nothing new below it: its marker (EventMarker.reset, asked
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

Result<IncrementResult> DbImpl::Reset(CounterRef counter,
                                      std::string_view reset_id,
                                      int64_t value,
                                      const ResetOptions& options) {
  // The reset's own names for its arguments first; then the write sequence
  // checks the rest as a once-increment's.
  Status s = core::ValidateReset(reset_id, value);
  if (!s.ok()) {
    CountRefusal(s);
    return s;
  }
  Result<IncrementResult> r =
      WriteSingle(WriteOp::Reset(counter, reset_id, value, options));
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

}  // namespace tally::engine
