// The cluster backend's stored values: a counter's catalog record, an
// event's marker record and a strict key's reservations, as text of decimal fields separated by single
// spaces, versioned by their first field (docs/format.md, "Redis Cluster
// keys"). Text, not FlatBuffers: an operator reading a key with redis-cli
// sees what it holds, and a record is a few dozen bytes.
//
// Thread safety: pure functions.

#ifndef TALLY_CLUSTER_RECORDS_H_
#define TALLY_CLUSTER_RECORDS_H_

#include <string>
#include <string_view>
#include <vector>

#include "core/claims.h"
#include "core/holds.h"
#include "core/write_op.h"
#include "tally/status.h"
#include "tally/types.h"

namespace tally::cluster {

// "c1 ID SHARDS POLICY CREATED FLAGS WINDOW BUCKET RETENTION OUTBOX KEYED
// HAS_MIN MIN HAS_MAX MAX SLIDING"; the name is the catalog hash's field.
std::string EncodeCounter(const CounterInfo& c);
// Corruption naming the counter when `record` is not one.
Status DecodeCounter(std::string_view name, std::string_view record,
                     CounterInfo* c);

// "m1 SHARD DELTA CREATED EXPIRES PINNED STRICT REFUSED ASKED VALUE
// WINDOW_ENDS REMAINING RESET REMAINING_KEPT".
// (event_id and key are the marker key's, not stored in the record.)
std::string EncodeMarker(const MarkerInfo& m);
// The same written over *out (its capacity reused).
void EncodeMarkerInto(const MarkerInfo& m, std::string* out);
// Corruption naming `what` (the marker's key) when `record` is not one.
// Sets every field of `m` but event_id and key.
Status DecodeMarker(std::string_view what, std::string_view record,
                    MarkerInfo* m);
// What the rules need of a stored marker (core::Decide).
core::FoundMarker FoundOf(const MarkerInfo& m);
// The record of a marker the rules made (core::MarkerOf), FoundOf's
// inverse; the caller sets its times and `pinned`.
MarkerInfo InfoOf(const core::FoundMarker& f);

// "r1 UNITS CREATED EXPIRES STATE CLOSED": a reservation's record
// (Db::Reserve) at KeySpace::Reservation; its id and counter are the
// key's (reservation_id is not set, counter_id is `counter_id`).
std::string EncodeHold(const core::HoldRecord& h);
// Corruption naming `what` (the record's key) when `record` is not one.
Status DecodeHold(std::string_view what, std::string_view record,
                  uint64_t counter_id, core::HoldRecord* h);

// "h1 ID UNITS EXPIRES ...": a strict key's open (held) reservations at
// KeySpace::Holds, each its id in lowercase hex (an id may hold spaces),
// its units and its end; at most kMaxOpenHolds. Never empty: a key with
// none has no such key.
std::string EncodeOpenHolds(const std::vector<core::HoldRecord>& open);
// Corruption naming `what` when `record` is not one; each entry's state
// is held and its created_at_ms 0 (not kept here: its record has it).
Status DecodeOpenHolds(std::string_view what, std::string_view record,
                       uint64_t counter_id,
                       std::vector<core::HoldRecord>* open);

// "f1 SHARD": a forward, kept at a marker's key in the tag of the event
// id's own shard when the event was sent to another shard (a once-op with
// an affinity key): a copy looking there learns where its marker is.
std::string EncodeForward(uint32_t shard);
bool IsForward(std::string_view record);
// Corruption naming `what` (the key) unless `record` is a forward to a
// shard below `shards`.
Status DecodeForward(std::string_view what, std::string_view record,
                     uint32_t shards, uint32_t* shard);

// A claim as the cluster stores it: core's record, and the fields of a
// completion in two steps (docs/cluster.md, "Claims"). While `completing`,
// rec is already the completed record (state kDone, ended_at, result): its
// decision is made, its counts may not all be applied yet.
struct StoredClaim {
  core::ClaimRecord rec;
  bool completing = false;
  // The completion attempt of this grant (0 first; one more after each
  // refused counts batch): part of the counts' derived event ids.
  uint64_t attempt = 0;
  uint64_t counts = 0;  // completing: the digest of its counts batch
};

// "k1 STATE TOKEN GRANTED LEASE_UNTIL ENDED COMPLETING ATTEMPT COUNTS
// xHOLDER xRESULT": decimal fields (COUNTS as a signed int64), then the
// holder and the result as hex after an 'x' (arbitrary bytes, one field
// each; "x" when empty). The key is the record's key's, not stored.
std::string EncodeClaim(const StoredClaim& c);
// Corruption naming `what` (the record's key) when `record` is not one.
Status DecodeClaim(std::string_view what, std::string_view record,
                   StoredClaim* c);

// A counter's roll-up (Db::ReadCached, TopKeys): "u1 AS_OF KEY_COUNT TOTAL
// OUT_OF_RANGE N xFIRST_OUT_OF_RANGE" then N times " VALUE xKEY" (the top
// keys, largest first; a named counter's: none). Keys in hex as a claim's
// holder. The record carries TopKeysResult's as_of_ms, key_count, total,
// out_of_range_keys, first_out_of_range_key and keys.
std::string EncodeRollup(const TopKeysResult& top);
// Corruption naming `what` (the record's key) when `record` is not one.
Status DecodeRollup(std::string_view what, std::string_view record,
                    TopKeysResult* top);

}  // namespace tally::cluster

#endif  // TALLY_CLUSTER_RECORDS_H_
