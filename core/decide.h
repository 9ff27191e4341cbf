// The rules of one write op, in the order every backend applies them:
//
//   1. CheckArguments  the op's own arguments (delta, key, event id, event
//                      time), before the counter is looked up;
//   2. PlaceOp         against its counter: the key (keyed or not), the
//                      shard, and the event time a dedupe window needs;
//   3. Decide          after the marker lookup (once-ops) and a clock read
//                      made after it: the outcome, the bucket (retention)
//                      and the new marker's expiry;
//   3b. CheckBounds or AnswerReset (core/bounds.h) for a strict counter or
//                      a reset, against the value its key holds.
//
// The backend adds what it stores and how: the engine looks markers up
// under lock stripes and commits one WriteBatch (engine/write_path.cc);
// every rule and message is here. tests/core/cases/ holds each rule's cases
// as data.
//
// Thread safety: pure functions, except PlaceOp's random shard (a
// per-thread generator).

#ifndef TALLY_CORE_DECIDE_H_
#define TALLY_CORE_DECIDE_H_

#include <cstdint>
#include <string_view>

#include "core/write_op.h"
#include "tally/status.h"
#include "tally/types.h"

namespace tally::core {

// 1. The op's own arguments: delta, then the key (when given), then the
// event id (once-ops), then the event time.
Status CheckArguments(const WriteOp& op);

// A keyed counter's ops name a key, a named counter's none: InvalidArgument
// naming the counter otherwise.
Status CheckKeyed(const CounterInfo& c, std::string_view key);

// 2. The op against its counter `c`: the key (CheckKeyed), then the shard:
// a once-op's is the hash of its affinity key when given (checked) else of
// its event id; a plain op's is the hash of its affinity key when given
// (checked) else, under the random policy, a random shard (under the
// affinity policy: InvalidArgument). Then a once-op on a counter with a
// dedupe window must carry its event time. Sets d->event_hash and d->shard.
Status PlaceOp(const CounterInfo& c, const WriteOp& op, Decision* d);

// The asynchronous forms (IncrementAsync, IncrementOnceAsync) refuse a
// strict counter (the check needs the value the previous write left) and
// one with an outbox: NotSupported naming the counter and the call to use.
Status CheckAsync(const CounterInfo& c, const WriteOp& op);

// Whether a plain op of `c` reads the clock (buckets, outbox): once-ops
// always do, after their marker lookup.
bool PlainNeedsClock(const CounterInfo& c);

// 3. The outcome of `op` by `marker` (once-ops) and `now`: a found marker
// answers kDuplicate or kConflict with its shard, whatever the time (a
// strict counter's kRefused too, as its first delivery was); else the
// bucket holding the event time must be within retention
// (InvalidArgument), and a once-op older than its window is
// kOutsideWindow; else kApplied, with the new marker's expiry.
Status Decide(const CounterInfo& c, const WriteOp& op,
              const FoundMarker& marker, int64_t now, Decision* d);

// True when a marker with this expiry (0: never) has expired at `now_ms`
// (strictly after expires_at). Readers treat an expired marker as gone
// before it is dropped (compaction, a TTL); the write path still answers a
// found one.
inline bool MarkerExpired(int64_t expires_at_ms, int64_t now_ms) {
  return expires_at_ms != 0 && expires_at_ms < now_ms;
}

// The marker an applied once-op leaves (and, for a strict counter or a
// reset, a refused one): what every later copy of the event is answered
// by. A backend stores it (docs/format.md, "events"); a batch uses it for
// the later copies of an event it applied.
FoundMarker MarkerOf(const CounterInfo& c, const WriteOp& op,
                     const Decision& d);

}  // namespace tally::core

#endif  // TALLY_CORE_DECIDE_H_
