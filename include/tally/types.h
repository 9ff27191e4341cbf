// The data path's value types (class Db's, tally/db.h): counter specs and
// descriptions, the answers of increments, reservations and claims, keys,
// markers. The types of the other audiences live with their functions:
// administration (verify, stats, progress) in tally/admin.h, imports in
// tally/import.h, the outbox in tally/outbox.h.
//
// All are plain values: the caller owns them; distinct objects may be used
// from different threads.

#ifndef TALLY_TYPES_H_
#define TALLY_TYPES_H_

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "tally/export.h"

namespace tally {

// How a plain (not once) increment chooses its shard. A once-increment
// always goes to the shard given by the hash of its event id, so a retry
// lands where the first delivery did.
enum class ShardPolicy : uint8_t {
  // A random shard, unless the increment carries an affinity key, which is
  // then hashed to a shard.
  kRandom = 0,
  // Every plain increment must carry an affinity key (device, thread, user);
  // the key's hash picks the shard, so each key's share stays attributable.
  kAffinity = 1,
};

TALLY_EXPORT const char* ShardPolicyName(ShardPolicy policy);

// An increment's event time, not given. A counter with a dedupe window
// refuses a once-increment without one; others do not need it. A given
// event time must lie in kMinEventTimeMs..kMaxEventTimeMs.
inline constexpr int64_t kEventTimeNow = std::numeric_limits<int64_t>::min();

// Time buckets of a bucketed counter (UTC; docs/design.md, "Time buckets").
enum class BucketWidth : uint8_t {
  kNone = 0,  // not bucketed: one running total
  kMinute = 1,
  kHour = 2,
  kDay = 3,
};

TALLY_EXPORT const char* BucketWidthName(BucketWidth width);

// A bucket's length in ms; 0 for BucketWidth::kNone.
inline constexpr int64_t BucketWidthMs(BucketWidth width) {
  switch (width) {
    case BucketWidth::kMinute:
      return 60'000;
    case BucketWidth::kHour:
      return 3'600'000;
    case BucketWidth::kDay:
      return 86'400'000;
    case BucketWidth::kNone:
      break;
  }
  return 0;
}

// The bounds of a strict counter (CounterSpec::bounds): its value, and
// each key's value of a keyed one, never goes below `min` (when has_min)
// nor above `max` (when has_max). min <= 0 <= max (a counter starts at 0)
// and min <= max. docs/design.md, "Strict counters".
struct CounterBounds {
  bool has_min = false;
  int64_t min = 0;
  bool has_max = false;
  int64_t max = 0;

  // Whether any bound is set: the counter is strict.
  bool any() const { return has_min || has_max; }
  static CounterBounds AtLeast(int64_t lo) { return {true, lo, false, 0}; }
  static CounterBounds AtMost(int64_t hi) { return {false, 0, true, hi}; }
  static CounterBounds Between(int64_t lo, int64_t hi) {
    return {true, lo, true, hi};
  }
};

// What CreateCounter needs.
struct CounterSpec {
  uint32_t shards = 1;  // 1..kMaxShards
  ShardPolicy policy = ShardPolicy::kRandom;
  // Dedupe window: how long a once-increment's marker is kept, in ms
  // (1..kMaxDedupeWindowMs). Once-increments must then carry their event
  // time (OnceOptions); one older than now - window is refused as
  // Outcome::kOutsideWindow and not counted, since its marker may already be
  // gone. 0 (default): markers are kept forever, any event time is accepted.
  int64_t dedupe_window_ms = 0;
  // Time buckets (kNone: a plain running total) and how long a bucket is
  // kept after it ends, in ms (0: forever; else 1..kMaxRetentionMs).
  BucketWidth bucket = BucketWidth::kNone;
  int64_t retention_ms = 0;
  // Every applied increment (plain or once) also appends an outbox entry in
  // the same atomic write, for tally::ReadOutbox and SyncOutbox (tally/sync.h).
  bool outbox = false;
  // A keyed counter: one counter of this spec per key (a like counter per
  // post), each key coming into being with its first increment: no create
  // call, no catalog entry and no memory per key. Every write and key read
  // names the key (CounterRef); shards, policy, window, buckets, retention
  // and outbox apply to each key as to a named counter. docs/design.md,
  // "Keyed counters".
  bool keyed = false;
  // A strict counter (stock, seats, a quota): an increment that would take
  // the value past a bound is refused (Outcome::kRefused) and changes
  // nothing, or applies what fits (IncrementOptions::saturate). Never
  // sharded (shards must be 1): each write reads, checks and writes its
  // key's one value under a lock stripe of that key. With time buckets it
  // is a fixed-window quota: the bounds hold for each bucket (window) of
  // each key on its own, and a write's answer says when its window ends
  // (IncrementResult::window_ends_ms). Not with an outbox yet
  // (NotSupported); Db::IncrementAsync and IncrementOnceAsync refuse it
  // (NotSupported): a check needs the value the previous write left. No
  // bound set (default): a sharded counter.
  CounterBounds bounds{};
  // A sliding-window quota (needs time buckets, minimum 0 and a maximum;
  // retention 0 or at least one bucket): an increment is checked not
  // against its bucket alone but against the weighted two-window estimate
  // of the last bucket-width of time, previous * (width - elapsed) / width
  // + current, where elapsed is how far into its bucket the increment
  // falls (docs/design.md, "Quotas", says how far the estimate can be
  // off).
  // Decrements (refunds) are checked against the bucket alone.
  bool sliding = false;
};

// A counter, or one key of a keyed counter, as write and read calls name
// it: `key` is empty for a named counter and 1..kMaxKeyBytes bytes of
// UTF-8 without control characters for a key of a keyed counter. Views:
// the caller's bytes, valid during the call only.
struct CounterRef {
  std::string_view counter;
  std::string_view key;

  CounterRef(const char* counter_name) : counter(counter_name) {}
  CounterRef(std::string_view counter_name) : counter(counter_name) {}
  CounterRef(const std::string& counter_name) : counter(counter_name) {}
  CounterRef(std::string_view counter_name, std::string_view counter_key)
      : counter(counter_name), key(counter_key) {}
};

// CounterInfo::flags bit 0: the counter has had plain (not once)
// increments, so its shard sum may exceed its markers' deltas. Set durably
// by the first one. The other bits are reserved and 0.
inline constexpr uint32_t kCounterFlagPlainIncrements = 1u << 0;

// What DescribeCounter and ListCounters return.
struct CounterInfo {
  std::string name;
  uint64_t id = 0;  // never reused, also after a delete
  uint32_t shards = 0;
  ShardPolicy policy = ShardPolicy::kRandom;
  uint32_t schema_version = 0;
  int64_t created_at_ms = 0;     // Unix epoch, UTC, from Options::clock
  uint32_t flags = 0;            // kCounterFlagPlainIncrements or 0
  int64_t dedupe_window_ms = 0;  // as in CounterSpec
  BucketWidth bucket = BucketWidth::kNone;
  int64_t retention_ms = 0;
  bool outbox = false;
  bool keyed = false;      // as in CounterSpec
  CounterBounds bounds{};  // as in CounterSpec
  bool sliding = false;    // as in CounterSpec
};

// A quota's window now (Db::ReadQuota): one counter's, or one key's.
struct QuotaState {
  int64_t used = 0;  // this window's value
  // What an increment may still take now (IncrementResult::remaining of an
  // increment made now); a sliding quota's counts the previous window's
  // weighted use.
  int64_t remaining = 0;
  int64_t window_start_ms = 0;  // the window (bucket) now, by the engine's
  int64_t window_ends_ms = 0;   // clock: [start, ends)
  int64_t previous_used = 0;    // sliding quotas: the previous window's use
};

// One key of a keyed counter and its value (Db::ListKeys, TopKeys).
struct KeyValue {
  std::string key;
  int64_t value = 0;
  // ListKeys: the key's value lies outside kMinDelta..kMaxDelta (its
  // increments sum beyond int64, or a shard overflowed), so it has none to
  // give and `value` is 0. The key's state is its own: the other keys read
  // as usual, and ReadKeys of this one is OutOfRange. DeleteKey removes
  // it (a Reset cannot: it adds a delta to a value it must read). Never set
  // in a TopKeys list.
  bool out_of_range = false;
};

// Which keys Db::ListKeys returns: in key byte order, those starting with
// `prefix` (empty: all), after `start_after` (exclusive; empty: from the
// first), at most `limit` of them (1..kMaxListKeys). A page's last key is
// the next page's start_after.
struct ListKeysOptions {
  std::string prefix;
  std::string start_after;
  size_t limit = 100;
};

// What Db::TopKeys returns: the keys with the largest values, largest
// first (ties in key byte order), with the point they are exact at.
struct TopKeysResult {
  std::vector<KeyValue> keys;
  // Keys with a stored value when it was taken (a key whose increments sum
  // to 0 counts; a deleted key does not).
  uint64_t key_count = 0;
  // The sum over all keys, as of as_of_ms, except the out-of-range ones.
  int64_t total = 0;
  // Keys whose value lies outside kMinDelta..kMaxDelta (KeyValue::
  // out_of_range), counted in key_count but left out of `keys` and `total`;
  // the first of them in key byte order, empty when there are none. While
  // there are any, ReadCached of the counter is OutOfRange naming it.
  uint64_t out_of_range_keys = 0;
  std::string first_out_of_range_key;
  int64_t as_of_ms = 0;   // Options::clock when the scan read it
  uint64_t sequence = 0;  // the RocksDB sequence number it reflects
  int64_t lag_ms = 0;     // now - as_of_ms (>= 0); 0 for an exact read
  bool exact = false;     // read now by a scan, not from the roll-up
};

// How Db::TopKeys answers: from the counter's roll-up (default: one Get,
// as ReadCached), or exact by a scan of every key now.
struct TopKeysOptions {
  bool exact = false;
};

// A counter's cached total, as Db::ReadCached returns it.
struct CachedValue {
  int64_t value = 0;
  int64_t as_of_ms = 0;   // Options::clock when the roll-up read it
  uint64_t sequence = 0;  // the RocksDB sequence number it reflects
  int64_t lag_ms = 0;     // now - as_of_ms (>= 0)
  // Increments applied to the counter after the roll-up, counted in this
  // process. Known only once this process has rolled the counter up; a
  // roll-up stored by an earlier process may be followed by increments this
  // process never saw.
  uint64_t lag_increments = 0;
  bool lag_increments_known = false;
};

// The outcome of one increment.
enum class Outcome : uint8_t {
  kApplied = 0,        // counted now
  kDuplicate = 1,      // this event id was counted before with the same delta
  kConflict = 2,       // this event id was counted before with another delta;
                       // nothing changed
  kOutsideWindow = 3,  // the event time is older than the counter's dedupe
                       // window: not counted (its marker may be gone, so
                       // the engine cannot tell a new event from a
                       // redelivery); nothing changed
  kRefused = 4,  // a strict counter: the increment would take the value past
                 // a bound (IncrementResult::value is the value that
                 // refused it); nothing changed. A once-increment's refusal
                 // is remembered: every copy of the event is answered
                 // kRefused with the same value, however the value moved.
};

TALLY_EXPORT const char* OutcomeName(Outcome outcome);

struct IncrementResult {
  Outcome outcome = Outcome::kApplied;
  uint32_t shard = 0;  // the shard the increment went (or had gone) to
  // Strict counters only (CounterSpec::bounds; 0 for the others):
  // kApplied: the value the increment left; kDuplicate: the value the
  // event's first delivery left; kRefused: the value that refused it (the
  // first delivery's, for a copy). kConflict, kOutsideWindow: 0.
  int64_t value = 0;
  // The delta counted: the op's for kApplied (less when saturated), the
  // first delivery's for kDuplicate; 0 for the other outcomes.
  int64_t applied = 0;
  // Strict counters, with `value` (0 for the others and for kConflict and
  // kOutsideWindow): how far the value may still move toward the bound the
  // delta moves toward (the maximum for a delta > 0, the minimum for one
  // < 0; for delta 0 the maximum when set, else the minimum; int64's end
  // for a bound not set), never negative: a quota's remaining calls, a
  // stock's units left.
  int64_t remaining = 0;
  // Strict counters with time buckets (quotas): when the window the op was
  // decided in ends, ms since the Unix epoch (its bucket's start + width),
  // which is when a refused caller may try again; a copy gets its first
  // delivery's. 0 otherwise.
  int64_t window_ends_ms = 0;
};

// A reservation's state (Db::Reserve). Only kHeld holds units, and only
// until expires_at_ms; every other state is final.
enum class HoldState : uint8_t {
  kHeld = 0,       // its units are held, until expires_at_ms
  kCommitted = 1,  // its units were taken from the value
  kReleased = 2,   // given back before its hold ran out
  kExpired = 3,    // its hold ran out before a commit: nothing was taken
  kRefused = 4,    // too few units were available: nothing was held
};

TALLY_EXPORT const char* HoldStateName(HoldState state);

// What Reserve, CommitReservation and ReleaseReservation answer.
struct ReservationResult {
  // kApplied: this call moved the reservation to `state`; kDuplicate: it
  // was there already (a retry); kConflict: a Reserve of a known id with
  // other units; kRefused: the call could not do what it asked, `state`
  // says why.
  Outcome outcome = Outcome::kApplied;
  HoldState state = HoldState::kHeld;
  int64_t units = 0;          // the units the reservation is for
  int64_t expires_at_ms = 0;  // when its hold ends (ends, for a closed one)
  // The key's value and what is available to take (value less the units
  // open reservations hold), now, after the call.
  int64_t value = 0;
  int64_t available = 0;
};

// One stored reservation (Db::GetReservation).
struct ReservationInfo {
  std::string reservation_id;
  HoldState state = HoldState::kHeld;  // kExpired once a held one ran out
  int64_t units = 0;
  int64_t created_at_ms = 0;
  int64_t expires_at_ms = 0;
  int64_t closed_at_ms = 0;  // when it was committed, released or refused
};

// A claim's state (Db::Claim, docs/claims.md). kHeld until its lease ends
// (then kExpired: anyone may claim it again, with a higher token), or until
// its holder releases it (kReleased, likewise) or completes it (kDone,
// final: the side effect was done).
enum class ClaimState : uint8_t {
  kHeld = 0,
  kExpired = 1,  // a held claim whose lease ran out (never stored as such)
  kReleased = 2,
  kDone = 3,
};
TALLY_EXPORT const char* ClaimStateName(ClaimState state);

// What Claim, CompleteClaim and ReleaseClaim answer.
enum class ClaimAnswer : uint8_t {
  kAcquired = 0,    // Claim: this holder holds it now, with `token`
  kBusy = 1,        // Claim: another holder holds it until lease_until_ms
  kDone = 2,        // Claim, ReleaseClaim: it was completed (by `token`)
  kCompleted = 3,   // CompleteClaim: completed by this token
  kReleased = 4,    // ReleaseClaim: given up; the next Claim acquires it
  kStaleToken = 5,  // CompleteClaim, ReleaseClaim: `token` is no longer
                    // the claim's grant; nothing changed
};
TALLY_EXPORT const char* ClaimAnswerName(ClaimAnswer answer);

// One claim as stored (Db::GetClaim, ListClaims, and in every answer).
struct ClaimInfo {
  std::string key;
  ClaimState state = ClaimState::kHeld;
  // The fencing token of the latest grant: 1 for the first, one more for
  // each grant after it (a renewal by the same holder keeps it).
  uint64_t token = 0;
  std::string holder;          // the latest grant's holder
  int64_t granted_at_ms = 0;   // when the latest grant was made
  int64_t lease_until_ms = 0;  // when its lease ends (ended: kExpired)
  int64_t ended_at_ms = 0;     // when it was completed or released; else 0
  std::string result;          // what CompleteClaim recorded (kDone)
};

// What a claim call answers: `answer`, and the claim after the call.
struct ClaimResult {
  ClaimAnswer answer = ClaimAnswer::kAcquired;
  // A retry: the call had been made before with the same arguments
  // (a Claim renewing its own grant, a CompleteClaim or ReleaseClaim of a
  // token that already completed or released it); nothing was counted
  // again.
  bool repeated = false;
  ClaimInfo claim;
  // CompleteClaim with counts, when this call completed the claim: one
  // result per op of the batch, as Db::Apply gives them. Else empty.
  std::vector<IncrementResult> counted;
};

// Which claims Db::ListClaims returns.
enum class ClaimFilter : uint8_t {
  kAll = 0,
  kHeld = 1,  // held now (lease not run out)
  kDone = 2,  // completed
};
struct ListClaimsOptions {
  ClaimFilter filter = ClaimFilter::kAll;
  size_t limit = 100;       // 1..kMaxListClaims
  std::string start_after;  // the last key of the previous page
};

// A strict counter's value with its reservations (Db::ReadHeld).
struct HeldValue {
  int64_t value = 0;      // what the counter (key) holds: ReadExact's value
  int64_t held = 0;       // units open reservations hold now
  int64_t available = 0;  // value - held: what a take may go down to min from
  uint64_t open = 0;      // reservations held now
  int64_t next_expiry_ms = 0;  // the earliest hold's end (0: none held)
};

// One idempotency marker, as Db::ListMarkers and Db::GetMarker return it.
struct MarkerInfo {
  std::string event_id;
  uint32_t shard = 0;
  int64_t delta = 0;
  int64_t created_at_ms = 0;  // Unix epoch, UTC, from Options::clock
  // When the marker may be dropped (counters with a dedupe window): the
  // later of its event time and created_at_ms, plus the window. 0: never.
  int64_t expires_at_ms = 0;
  // The shard came from an affinity key (OnceOptions::affinity_key), not
  // from the hash of the event id.
  bool pinned = false;
  std::string key{};  // the counter key it counted in (keyed counters only)
  // Strict counters' markers (format 5): the event's answer, which every
  // copy gets. `delta` is then what was counted (0 when refused) and
  // `asked` the delta the event asked for (a copy with another is
  // kConflict); `value` is IncrementResult::value.
  bool strict = false;
  bool refused = false;
  int64_t asked = 0;
  int64_t value = 0;
  // A quota's marker (a strict counter with time buckets, format 6): when
  // the window the event was decided in ends (IncrementResult::
  // window_ends_ms); 0 otherwise.
  int64_t window_ends_ms = 0;
  // The room it was answered (IncrementResult::remaining): a quota's
  // marker's, and every strict or reset marker's with remaining_kept; 0
  // otherwise.
  int64_t remaining = 0;
  // The marker of a reset (Db::Reset, format 7): `asked` and `value` are
  // the value it set, `delta` what it took to get there.
  bool reset = false;
  // `remaining` is the first answer's room, given again to every copy
  // (markers written before the third review lack it: a non-quota's room
  // is then recomputed from `value` and the bounds).
  bool remaining_kept = false;
};

// Which markers Db::ListMarkers returns: in event-id byte order, after
// `start_after` (exclusive; empty: from the first), created at or after
// `since_ms`, at most `limit` of them (1..kMaxListMarkers).
struct ListMarkersOptions {
  size_t limit = 100;
  int64_t since_ms = std::numeric_limits<int64_t>::min();
  std::string start_after;
};

}  // namespace tally

#endif  // TALLY_TYPES_H_
