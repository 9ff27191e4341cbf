// The rules of one write op (core/decide.h).

#include "core/decide.h"

#include <algorithm>
#include <cassert>
#include <string>

#include "core/bounds.h"
#include "core/buckets.h"
#include "core/hash.h"
#include "core/shard_picker.h"
#include "core/validate.h"

namespace tally::core {
namespace {

// An op's shard: the hash of its affinity key when given (checked); else a
// once-op's is the hash of its event id and a plain op's, under the random
// policy, a random one.
Status ChooseShard(const CounterInfo& c, const WriteOp& op, uint64_t event_hash,
                   uint32_t* shard) {
  if (!op.affinity_key.empty()) {
    Status s = ValidateAffinityKey(op.affinity_key);
    if (s.ok()) *shard = ShardOfKey(op.affinity_key, c.shards);
    return s;
  }
  if (op.once) {
    *shard = ShardOfHash(event_hash, c.shards);
    return Status::OK();
  }
  if (c.policy == ShardPolicy::kAffinity) {
    return Status::InvalidArgument("counter " + Quote(c.name) +
                                   " uses affinity sharding: the increment "
                                   "needs an affinity key");
  }
  *shard = RandomShard(c.shards);
  return Status::OK();
}

// The dedupe-window rule (docs/design.md, "Dedupe windows"), first part:
// on a counter with a window a once-op must carry its event time, since
// only the time an event happened, the same in every copy, lets the engine
// tell a late redelivery (whose marker may be gone) from a new event.
Status RequireEventTime(const CounterInfo& c, const WriteOp& op) {
  if (c.dedupe_window_ms == 0 || op.event_time_ms != kEventTimeNow) {
    return Status::OK();
  }
  return Status::InvalidArgument(
      "counter " + Quote(c.name) + " has a dedupe window of " +
      std::to_string(c.dedupe_window_ms) + " ms: a " +
      (op.reset ? "reset" : "once-increment") + " needs its event time");
}

// The bucket of an op of `c` (kNoBucket when not bucketed); an event time
// in a bucket past the counter's retention is refused, since the count
// would vanish at the next read.
Status BucketOf(const CounterInfo& c, int64_t event_time_ms, int64_t now,
                int64_t* bucket) {
  *bucket = kNoBucket;
  const int64_t width = BucketWidthMs(c.bucket);
  if (width == 0) return Status::OK();
  const int64_t t = EventTimeOr(event_time_ms, now);
  *bucket = BucketStart(t, width);
  assert(*bucket <= t && t - *bucket < width);
  if (BucketExpired(*bucket, width, c.retention_ms, now)) {
    return Status::InvalidArgument(
        "event time " + std::to_string(t) + " ms falls in counter " +
        Quote(c.name) + "'s bucket starting " + std::to_string(*bucket) +
        " ms, past its retention of " + std::to_string(c.retention_ms) + " ms");
  }
  return Status::OK();
}

// The dedupe-window rule, second part, for an event whose marker was not
// found, by `now` read after that lookup: an event older than now - window
// is outside it. Otherwise its marker expires at the later of the event
// time and now, plus the window (0 for counters that keep markers
// forever). A marker has expired once the engine's time passes expires_at;
// an accepted event time t has t + window >= now, so the marker of any
// event the rule still accepts has not expired.
bool OutsideWindow(const CounterInfo& c, int64_t event_time_ms, int64_t now,
                   int64_t* expires_at) {
  *expires_at = 0;
  if (c.dedupe_window_ms == 0) return false;
  if (event_time_ms < now - c.dedupe_window_ms) return true;
  *expires_at = std::max(event_time_ms, now) + c.dedupe_window_ms;
  assert(*expires_at >= now);
  return false;
}

}  // namespace

void OutcomeCounts::Add(Outcome o) {
  switch (o) {
    case Outcome::kApplied:
      ++applied;
      return;
    case Outcome::kDuplicate:
      ++duplicates;
      return;
    case Outcome::kConflict:
      ++conflicts;
      return;
    case Outcome::kOutsideWindow:
      ++outside_window;
      return;
    case Outcome::kRefused:
      ++refused;
      return;
  }
  assert(false && "an Outcome without a count");
}

bool IsRefusal(const Status& s) {
  return s.IsInvalidArgument() || s.IsOutOfRange() || s.IsNotFound() ||
         s.IsNotSupported();
}

Status CheckArguments(const WriteOp& op) {
  Status s = ValidateDelta(op.delta);
  if (s.ok() && !op.key.empty()) s = ValidateCounterKey(op.key);
  if (s.ok() && op.once) s = ValidateEventId(op.event_id);
  if (s.ok()) s = ValidateEventTime(op.event_time_ms);
  return s;
}

Status CheckKeyed(const CounterInfo& c, std::string_view key) {
  if (c.keyed && key.empty()) {
    return Status::InvalidArgument("counter " + Quote(c.name) +
                                   " is keyed: the call needs a key");
  }
  if (!c.keyed && !key.empty()) {
    return Status::InvalidArgument("counter " + Quote(c.name) +
                                   " is not keyed: key " + Quote(key) +
                                   " given");
  }
  return Status::OK();
}

Status PlaceOp(const CounterInfo& c, const WriteOp& op, Decision* d) {
  assert(c.shards >= 1);
  Status s = CheckKeyed(c, op.key);
  if (!s.ok()) return s;
  if (op.once) d->event_hash = StableHash(op.event_id);
  s = ChooseShard(c, op, d->event_hash, &d->shard);
  // A reset too: the window judges it by the time it was issued.
  if (s.ok() && op.once) s = RequireEventTime(c, op);
  assert(!s.ok() || d->shard < c.shards);
  return s;
}

bool PlainNeedsClock(const CounterInfo& c) {
  return c.bucket != BucketWidth::kNone || c.outbox;
}

Status Decide(const CounterInfo& c, const WriteOp& op,
              const FoundMarker& marker, int64_t now, Decision* d) {
  assert(op.once || !marker.found);
  if (marker.found) {
    d->shard = marker.shard;
    const int64_t asked = marker.strict ? marker.asked : marker.delta;
    // A reset and an increment never answer each other: one id is one or
    // the other.
    if (asked != op.delta || marker.reset != op.reset) {
      d->outcome = Outcome::kConflict;
    } else {
      d->outcome = marker.refused ? Outcome::kRefused : Outcome::kDuplicate;
      d->applied = marker.delta;  // 0 when refused
      d->value = marker.value;
      d->window_ends = marker.window_ends;
      // The marker holds the room its first answer gave (a quota's, and
      // since the third review every strict and reset marker's: a take's
      // counted the units held then, and a reset's went toward the bound
      // of its own direction); an older non-quota marker's is recomputed
      // from the value.
      if (marker.remaining_kept || marker.window_ends != 0) {
        d->remaining = marker.remaining;
      } else if (marker.strict && c.bounds.any()) {
        d->remaining = Remaining(c.bounds, marker.asked, marker.value);
      }
    }
    return Status::OK();
  }
  Status s = BucketOf(c, op.event_time_ms, now, &d->bucket);
  if (!s.ok()) return s;
  d->outcome =
      op.once && OutsideWindow(c, op.event_time_ms, now, &d->expires_at)
          ? Outcome::kOutsideWindow
          : Outcome::kApplied;
  d->applied = d->outcome == Outcome::kApplied ? op.delta : 0;
  assert(d->shard < c.shards);
  return Status::OK();
}

Status CheckAsync(const CounterInfo& c, const WriteOp& op) {
  const char* async = op.once ? "IncrementOnceAsync" : "IncrementAsync";
  const char* sync = op.once ? "IncrementOnce" : "Increment";
  if (c.bounds.any()) {
    return Status::NotSupported(
        "counter " + Quote(c.name) + " is strict: " + async +
        " cannot check its bounds (the check needs the value the previous "
        "write left), use " + sync);
  }
  if (c.outbox) {
    return Status::NotSupported("counter " + Quote(c.name) +
                                " has an outbox; " + async +
                                " does not write outboxes yet, use " + sync);
  }
  return Status::OK();
}

FoundMarker MarkerOf(const CounterInfo& c, const WriteOp& op,
                     const Decision& d) {
  // A reset's marker holds its answer whatever the counter.
  const bool strict = c.bounds.any() || op.reset;
  assert(op.once && (d.outcome == Outcome::kApplied ||
                     (strict && d.outcome == Outcome::kRefused)));
  FoundMarker m;
  m.found = true;
  m.delta = d.applied;
  m.shard = d.shard;
  m.strict = strict;
  m.refused = d.outcome == Outcome::kRefused;
  m.asked = op.delta;
  m.value = d.value;
  m.window_ends = d.window_ends;
  m.remaining = d.remaining;
  m.reset = op.reset;
  m.remaining_kept = true;
  return m;
}

}  // namespace tally::core
