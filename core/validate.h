// Boundary checks for every input of the public API. Each returns
// InvalidArgument with a message that names the bad value (quoted and
// truncated, with non-printable bytes escaped), or OK.

#ifndef TALLY_CORE_VALIDATE_H_
#define TALLY_CORE_VALIDATE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tally/options.h"
#include "tally/status.h"
#include "tally/types.h"

namespace tally::core {

// True when `s` is well-formed UTF-8 (no overlongs, no surrogates, <=
// U+10FFFF).
bool IsValidUtf8(std::string_view s);

// A printable, bounded rendering of untrusted bytes for messages.
std::string Quote(std::string_view s);

// How messages name a counter, or one key of a keyed counter:
// "counter 'name'" or "counter 'name' key 'key'".
std::string CounterKeyNaming(std::string_view counter, std::string_view key);

Status ValidateCounterName(std::string_view name);
Status ValidateEventId(std::string_view event_id);
Status ValidateAffinityKey(std::string_view key);
// Claims (Db::Claim): a key (an event id's rules, 1..kMaxClaimKeyBytes),
// a holder (1..kMaxHolderBytes of the same text) and a lease
// (1..kMaxLeaseMs); a result (0..kMaxClaimResultBytes of the same text).
Status ValidateClaimKey(std::string_view key);
Status ValidateClaim(std::string_view holder, int64_t lease_ms);
Status ValidateClaimResult(std::string_view result);
// A reservation id (Db::Reserve): an event id's rules (1..kMaxEventIdBytes
// of UTF-8 without control characters).
Status ValidateReservationId(std::string_view id);
// A reset id (Db::Reset): an event id of its counter, named as a reset's.
Status ValidateResetId(std::string_view id);
// Db::Reset's own arguments: its id, and a value above INT64_MIN (the
// overflowed state), each named when refused.
Status ValidateReset(std::string_view id, int64_t value);
// Reserve's units (1..kMaxDelta) and hold (1..kMaxHoldMs).
Status ValidateHold(int64_t units, int64_t hold_for_ms);
// A keyed counter's key (CounterRef::key): 1..kMaxKeyBytes of UTF-8
// without control characters.
Status ValidateCounterKey(std::string_view key);
Status ValidateDelta(int64_t delta);
Status ValidateSpec(const CounterSpec& spec);
// The strict-counter part of ValidateSpec: bounds around 0, one shard, no
// buckets or outbox yet.
Status ValidateBounds(const CounterSpec& spec);
// Whether `v` lies within the bounds that are set (true when none is): the
// one test of a strict counter's value, for the write path's check, Verify
// and import.
inline bool WithinBounds(const CounterBounds& b, __int128 v) {
  return (!b.has_min || v >= b.min) && (!b.has_max || v <= b.max);
}
// The group commit fields of Options (group_commit_*).
Status ValidateGroupCommit(const Options& options);
// Every numeric field of Options against its range in tally/limits.h, in
// declaration order; the message names the first bad field, its value and
// its range. Db::Open calls it before it touches the path.
Status ValidateOptions(const Options& options);
// A batch's size (1..kMaxBatchOps; an empty batch passes).
Status ValidateBatchSize(size_t ops);
// ReadKeys' keys: 1..kMaxReadKeys of them, each a counter key (the message
// names the first bad one's index).
Status ValidateReadKeys(const std::vector<std::string_view>& keys);
// ListKeys' options: limit 1..kMaxListKeys, prefix and start_after keys
// when given.
Status ValidateListKeys(const ListKeysOptions& options);
// ListMarkers' options: limit 1..kMaxListMarkers, start_after no longer
// than an event id.
Status ValidateListMarkers(const ListMarkersOptions& options);
// A list's start_after: at most `limit` bytes, as the keys it pages over
// (`what`: "event id", "claim key").
Status ValidateStartAfter(std::string_view start_after, size_t limit,
                          std::string_view what);
// An explicit event time (kEventTimeNow passes).
Status ValidateEventTime(int64_t event_time_ms);
// ReadRange's range: two explicit event times, from before to.
Status ValidateRange(int64_t from_ms, int64_t to_ms);
// ReadRange of `c`: InvalidArgument unless it has time buckets.
Status CheckBucketed(const CounterInfo& c);
// InvalidArgument: a read of `c` would scan more than kMaxReadBuckets
// buckets.
Status TooManyBuckets(const CounterInfo& c);

// The spec a counter was created with (to re-check stored records, and for
// imports).
CounterSpec SpecOf(const CounterInfo& info);

// The error for a name the catalog does not hold: InvalidArgument when the
// name itself is malformed, else NotFound naming it.
Status CounterNotFound(std::string_view name);

}  // namespace tally::core

#endif  // TALLY_CORE_VALIDATE_H_
