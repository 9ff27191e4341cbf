// The write planner (engine/write_plan.h).

#include "engine/write_plan.h"

#include <algorithm>
#include <cassert>

#include "engine/coding.h"
#include "engine/hash.h"
#include "engine/shard_picker.h"
#include "engine/validate.h"
#include "schema/records.h"

namespace tally::engine {
namespace {

rocksdb::Slice AsSlice(std::string_view s) { return {s.data(), s.size()}; }

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

// Where an increment lands in the shards family: its shard key (of its
// key, for a keyed counter), or for a bucketed counter the shard key of its
// bucket. On the stack: no allocation.
class ShardTarget {
 public:
  ShardTarget(uint64_t counter_id, std::string_view key, int64_t bucket,
              uint32_t shard)
      : size_(EncodeShardKeyOf(KeyPrefix(counter_id, key), bucket, shard,
                               key_)) {}
  rocksdb::Slice key() const { return {key_, size_}; }

 private:
  char key_[kMaxShardKeyBytes];
  size_t size_;
};

}  // namespace

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

uint64_t StrictKeyLockHash(std::string_view key) { return StableHash(key); }

WriteScratch& ThreadWriteScratch() {
  thread_local WriteScratch scratch;
  scratch.batch.Clear();
  return scratch;
}

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

Status Resolve(const Catalog::Reader& catalog, const WriteOp& op,
               OpPlan* plan) {
  plan->counter = catalog.Find(op.counter);
  if (plan->counter == nullptr) return CounterNotFound(op.counter);
  const CounterInfo& c = *plan->counter;
  assert(c.shards >= 1);
  Status s = CheckKeyed(c, op.key);
  if (!s.ok()) return s;
  if (op.once) plan->event_hash = StableHash(op.event_id);
  plan->lock_hash = c.bounds.any() ? StrictKeyLockHash(op.key) : plan->event_hash;
  s = ChooseShard(c, op, plan->event_hash, &plan->shard);
  // A reset too: the window judges it by the time it was issued.
  if (s.ok() && op.once) s = RequireEventTime(c, op);
  assert(!s.ok() || plan->shard < c.shards);
  return s;
}

Status FindCounterRef(const Catalog::Reader& catalog, CounterRef ref,
                      KeyUse use, const Catalog::Entry** out) {
  *out = catalog.Find(ref.counter);
  if (*out == nullptr) return CounterNotFound(ref.counter);
  if (!ref.key.empty()) {
    Status s = ValidateCounterKey(ref.key);
    if (!s.ok()) return s;
  }
  if (use == KeyUse::kKeyOrWhole && ref.key.empty()) return Status::OK();
  return CheckKeyed(**out, ref.key);
}

bool PlainNeedsClock(const CounterInfo& c) {
  return c.bucket != BucketWidth::kNone || c.outbox;
}

namespace {

// A strict counter's range: its bounds, within int64 (INT64_MIN is the
// overflowed state, never a value).
__int128 Low(const CounterBounds& b) {
  return b.has_min ? b.min : std::numeric_limits<int64_t>::min() + 1;
}
__int128 High(const CounterBounds& b) {
  return b.has_max ? b.max : std::numeric_limits<int64_t>::max();
}

// IncrementResult::remaining: the room from `value` to the bound an op of
// `asked` moves toward, clamped to 0..INT64_MAX.
int64_t Remaining(const CounterBounds& b, int64_t asked, int64_t value) {
  const bool up = asked > 0 || (asked == 0 && b.has_max);
  const __int128 room = up ? High(b) - value : value - Low(b);
  if (room < 0) return 0;
  return room > std::numeric_limits<int64_t>::max()
             ? std::numeric_limits<int64_t>::max()
             : static_cast<int64_t>(room);
}

}  // namespace

Status Decide(const WriteOp& op, const FoundMarker& marker, int64_t now,
              OpPlan* plan) {
  assert(plan->counter != nullptr);
  assert(op.once || !marker.found);
  const CounterInfo& c = *plan->counter;
  if (marker.found) {
    plan->shard = marker.shard;
    const int64_t asked = marker.strict ? marker.asked : marker.delta;
    // A reset and an increment never answer each other: one id is one or
    // the other.
    if (asked != op.delta || marker.reset != op.reset) {
      plan->outcome = Outcome::kConflict;
    } else {
      plan->outcome = marker.refused ? Outcome::kRefused : Outcome::kDuplicate;
      plan->applied = marker.delta;  // 0 when refused
      plan->value = marker.value;
      plan->window_ends = marker.window_ends;
      // The marker holds the room its first answer gave (a quota's, and
      // since the third review every strict and reset marker's: a take's
      // counted the units held then, and a reset's went toward the bound
      // of its own direction); an older non-quota marker's is recomputed
      // from the value.
      if (marker.remaining_kept || marker.window_ends != 0) {
        plan->remaining = marker.remaining;
      } else if (marker.strict && c.bounds.any()) {
        plan->remaining = Remaining(c.bounds, marker.asked, marker.value);
      }
    }
    return Status::OK();
  }
  Status s = BucketOf(c, op.event_time_ms, now, &plan->bucket);
  if (!s.ok()) return s;
  plan->outcome =
      op.once && OutsideWindow(c, op.event_time_ms, now, &plan->expires_at)
          ? Outcome::kOutsideWindow
          : Outcome::kApplied;
  plan->applied = plan->outcome == Outcome::kApplied ? op.delta : 0;
  assert(plan->shard < c.shards);
  return Status::OK();
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

Status AnswerReset(const WriteOp& op, int64_t current,
                   const PreviousWindow* previous, OpPlan* plan) {
  const CounterInfo& c = *plan->counter;
  assert(op.reset && plan->outcome == Outcome::kApplied);
  assert(!c.bounds.any() || WithinBounds(c.bounds, op.delta));
  const __int128 add = static_cast<__int128>(op.delta) - current;
  if (add < kMinDelta || add > kMaxDelta) {
    return Status::OutOfRange(
        "counter " + Quote(c.name) +
        (op.key.empty() ? std::string() : " key " + Quote(op.key)) + " holds " +
        std::to_string(current) + ": a reset to " + std::to_string(op.delta) +
        " would add a delta beyond int64");
  }
  plan->applied = static_cast<int64_t>(add);
  plan->value = op.delta;
  plan->window_ends =
      plan->bucket == kNoBucket ? 0 : plan->bucket + BucketWidthMs(c.bucket);
  plan->remaining = 0;
  if (plan->window_ends != 0 && c.bounds.any()) {
    plan->remaining = RoomNow(c, op.delta, previous);
  } else if (c.bounds.any()) {
    plan->remaining = Remaining(c.bounds, plan->applied, op.delta);
  }
  return Status::OK();
}

void CheckBounds(const WriteOp& op, int64_t current,
                 const PreviousWindow* previous, OpPlan* plan, int64_t held) {
  const CounterInfo& c = *plan->counter;
  const CounterBounds b = BoundsFor(c, op.delta, previous, held);
  assert(b.any() && plan->outcome == Outcome::kApplied);
  assert((previous != nullptr) == c.sliding);
  assert((plan->bucket == kNoBucket) == (c.bucket == BucketWidth::kNone));
  plan->window_ends =
      plan->bucket == kNoBucket ? 0 : plan->bucket + BucketWidthMs(c.bucket);
  const __int128 lo = Low(b), hi = High(b);
  const __int128 next = static_cast<__int128>(current) + op.delta;
  if (next >= lo && next <= hi) {
    plan->applied = op.delta;
    plan->value = static_cast<int64_t>(next);
    plan->remaining = Remaining(b, op.delta, plan->value);
    return;
  }
  // What fits: up to the bound the delta goes toward, never past the delta
  // nor the other way (a value already outside its bounds only moves in).
  const __int128 fit = (next < lo ? lo : hi) - current;
  const bool fits = op.saturate && fit != 0 && (fit > 0) == (op.delta > 0) &&
                    (fit > 0 ? fit < op.delta : fit > op.delta);
  plan->outcome = fits ? Outcome::kApplied : Outcome::kRefused;
  plan->applied = fits ? static_cast<int64_t>(fit) : 0;
  plan->value = current + plan->applied;
  plan->remaining = Remaining(b, op.delta, plan->value);
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
  return "counter " + Quote(c.name) +
         (op.key.empty() ? std::string() : " key " + Quote(op.key)) +
         " holds " + std::to_string(current) + ": delta " +
         std::to_string(op.delta) + " would take it " +
         (below ? "below " : "above ") + bound;
}

Status ReadMarker(const CounterInfo& c, std::string_view key,
                  std::string_view value, FoundMarker* marker) {
  schema::MarkerAnswer a;
  Status s = schema::DecodeMarkerAnswer(value, &a);
  // A reset's marker holds its answer on any counter (format 7).
  if (s.ok() && a.strict != c.bounds.any() && !a.answer.reset) {
    s = Status::Corruption(a.strict ? "a strict marker of a sharded counter"
                                    : "a sharded marker of a strict counter");
  }
  if (!s.ok()) {
    return Status::Corruption("marker " + HexKey(key) + " of counter " +
                              Quote(c.name) + ": " + s.message());
  }
  *marker = FoundMarker{true,           a.delta,          a.shard,
                        a.strict,       a.answer.refused, a.answer.asked,
                        a.answer.value, a.answer.window_ends_ms,
                        a.answer.remaining, a.answer.reset,
                        a.answer.remaining_kept};
  return Status::OK();
}

rocksdb::Status AddShardMerge(rocksdb::WriteBatch* wb,
                              rocksdb::ColumnFamilyHandle* shards,
                              const CounterInfo& c, std::string_view key,
                              int64_t bucket, uint32_t shard, int64_t delta) {
  assert(shard < c.shards);
  assert((bucket == kNoBucket) == (c.bucket == BucketWidth::kNone));
  assert(key.empty() != c.keyed);
  const ShardTarget target(c.id, key, bucket, shard);
  char value[kValueBytes];
  EncodeInt64(delta, value);
  return wb->Merge(shards, target.key(), rocksdb::Slice(value, sizeof value));
}

void MarkerKeyOf(const CounterInfo& c, const WriteOp& op, std::string* out) {
  assert(op.key.empty() != c.keyed);
  EncodeMarkerKeyOf(KeyPrefix(c.id, op.key), op.event_id, out);
}

rocksdb::Status AddMarker(rocksdb::WriteBatch* wb,
                          rocksdb::ColumnFamilyHandle* events,
                          std::string_view key, const WriteOp& op,
                          const OpPlan& plan, int64_t now,
                          std::string* scratch) {
  // A reset's marker holds its answer whatever the counter.
  const bool strict = plan.counter->bounds.any() || op.reset;
  assert(op.once && (plan.outcome == Outcome::kApplied ||
                     (strict && plan.outcome == Outcome::kRefused)));
  const schema::StrictAnswer answer{
      plan.outcome == Outcome::kRefused, op.delta, plan.value,
      plan.window_ends, plan.remaining, op.reset, /*remaining_kept=*/true};
  schema::EncodeMarker(op.event_id, plan.counter->id, plan.shard,
                       plan.applied, now, scratch, plan.expires_at,
                       !op.affinity_key.empty(), strict ? &answer : nullptr);
#ifndef NDEBUG
  // Written here, read back by every later copy of the event: the pair
  // must agree.
  FoundMarker back;
  assert(ReadMarker(*plan.counter, key, *scratch, &back).ok());
  assert(back.delta == plan.applied && back.shard == plan.shard);
  assert(!strict || (back.asked == op.delta && back.value == plan.value &&
                     back.window_ends == plan.window_ends &&
                     back.remaining == plan.remaining && back.remaining_kept));
#endif
  return wb->Put(events, AsSlice(key), AsSlice(*scratch));
}

rocksdb::Status AddPlainFlag(rocksdb::WriteBatch* wb,
                             rocksdb::ColumnFamilyHandle* meta,
                             const CounterInfo& c, std::string* scratch) {
  std::string key;
  Catalog::FlaggedRecord(c, &key, scratch);
  assert(!key.empty() && !scratch->empty());
  return wb->Put(meta, key, *scratch);
}

}  // namespace tally::engine
