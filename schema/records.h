// Plain C++ views of tally's FlatBuffer records, with encode and
// verify-then-decode helpers. The generated header stays private to
// records.cc and marker_writer.cc, so a schema change recompiles two files.
//
// Every Decode* verifies the buffer (FlatBuffers Verifier plus the file
// identifier and the required fields) and returns Corruption naming the
// record kind on any failure: bytes read from disk are never trusted.

#ifndef TALLY_SCHEMA_RECORDS_H_
#define TALLY_SCHEMA_RECORDS_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "core/claims.h"
#include "core/holds.h"
#include "tally/status.h"

namespace tally::schema {

struct HeaderRecord {
  uint32_t format_version = 0;
  uint64_t next_counter_id = 0;
  int64_t created_at_ms = 0;
  std::string db_id;
};

struct CounterRecord {
  uint64_t id = 0;
  std::string name;
  uint32_t shard_count = 0;
  uint8_t policy = 0;  // tally::ShardPolicy
  uint32_t schema_version = 0;
  int64_t created_at_ms = 0;
  uint32_t flags = 0;
  int64_t dedupe_window_ms = 0;  // format 2; 0: markers kept forever
  uint8_t bucket = 0;            // format 2; tally::BucketWidth
  int64_t retention_ms = 0;      // format 2; 0: buckets kept forever
  bool outbox = false;           // format 2
  bool keyed = false;            // format 4
  bool has_min = false;          // format 5: a strict counter's bounds
  int64_t min_value = 0;
  bool has_max = false;
  int64_t max_value = 0;
  bool sliding = false;          // format 6: a sliding-window quota
};

// Format 5: what a strict counter's marker remembers of the event's answer.
struct StrictAnswer {
  bool refused = false;
  int64_t asked = 0;  // the delta the event asked for
  int64_t value = 0;  // the value it left, or the value that refused it
  int64_t window_ends_ms = 0;  // format 6: a quota's window end; else 0
  int64_t remaining = 0;       // format 6: a quota's answered room; else 0
  bool reset = false;          // format 7: a reset's marker (Db::Reset)
  bool remaining_kept = false;  // `remaining` is the answered room, any kind
};

struct MarkerRecord {
  std::string event_id;
  uint64_t counter_id = 0;
  uint32_t shard = 0;
  int64_t delta = 0;
  int64_t created_at_ms = 0;
  int64_t expires_at_ms = 0;  // format 2; 0: never
  bool pinned = false;        // format 2: shard from an affinity key
  bool strict = false;        // format 5: `answer` is set (format 7: also
                              // on a sharded counter's reset marker)
  StrictAnswer answer;
};

// What a duplicate check needs of a marker (DecodeMarkerAnswer).
struct MarkerAnswer {
  int64_t delta = 0;
  uint32_t shard = 0;
  bool strict = false;
  StrictAnswer answer;  // when strict
};

// Format 7: a reservation (holds family); format 8: a claim (claims
// family). The records are the rules' own values (core/).
using HoldRecord = core::HoldRecord;
using ClaimRecord = core::ClaimRecord;

struct OutboxRecord {
  uint64_t seq = 0;
  std::string counter;
  std::string event_id;  // empty for a plain increment
  int64_t delta = 0;
  int64_t time_ms = 0;
  std::string origin;       // format 3; empty in older entries
  uint64_t origin_seq = 0;  // format 3; 0: seq
  uint64_t settled = 0;     // format 3; the writer's watermark at reservation
  std::string key;          // format 4; a keyed counter's key, else empty
};

// What EncodeOutbox writes: views, so the hot path copies nothing twice.
struct OutboxFields {
  uint64_t seq = 0;
  std::string_view counter;
  std::string_view key;  // format 4; empty for a named counter
  std::string_view event_id;
  int64_t delta = 0;
  int64_t time_ms = 0;
  std::string_view origin;
  uint64_t origin_seq = 0;  // 0: seq
  uint64_t settled = 0;
};

// Encode* replace *out with the record's bytes.
void EncodeHeader(const HeaderRecord& rec, std::string* out);
void EncodeCounter(const CounterRecord& rec, std::string* out);
// Hot path (one per once-increment): writes the builder's exact bytes
// without a builder (schema/marker_writer.cc), so it allocates only when
// *out must grow (or for an event id over kMaxEventIdBytes).
void EncodeMarker(std::string_view event_id, uint64_t counter_id,
                  uint32_t shard, int64_t delta, int64_t created_at_ms,
                  std::string* out, int64_t expires_at_ms = 0,
                  bool pinned = false, const StrictAnswer* strict = nullptr);
// Hot path too (one per increment of an outbox counter): reuses a
// thread-local builder.
void EncodeOutbox(const OutboxFields& fields, std::string* out);

void EncodeHold(const HoldRecord& rec, std::string* out);
void EncodeClaim(const ClaimRecord& rec, std::string* out);

Status DecodeHeader(std::string_view bytes, HeaderRecord* rec);
// Also checks state (0..4), units > 0 and the required id.
Status DecodeHold(std::string_view bytes, HoldRecord* rec);
// Also checks the state (held, released, done), token >= 1, a holder, a
// lease after its grant, an end exactly when not held, and a result only
// when done.
Status DecodeClaim(std::string_view bytes, ClaimRecord* rec);
Status DecodeCounter(std::string_view bytes, CounterRecord* rec);
Status DecodeMarker(std::string_view bytes, MarkerRecord* rec);
Status DecodeOutbox(std::string_view bytes, OutboxRecord* rec);
// Verifies a marker and returns only what a duplicate check needs (delta,
// shard, a strict counter's answer), without copying the event id.
Status DecodeMarkerAnswer(std::string_view bytes, MarkerAnswer* out);
// Verifies a marker and returns only its expiry (0: never): what the
// expired-marker compaction filter needs.
Status DecodeMarkerExpiry(std::string_view bytes, int64_t* expires_at_ms);

}  // namespace tally::schema

#endif  // TALLY_SCHEMA_RECORDS_H_
