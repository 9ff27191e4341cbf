// FamilyRecord: one stored record of any tally column family, decoded, and
// the signatures of the per-family decoders and renderers that the table of
// column families (engine/column_families.h) holds. Each family's decoders
// live in its own file (e.g. engine/decode_shards.cc); docs/format.md gives the
// bytes.
//
// Thread safety: plain values and pure functions.

#ifndef TALLY_ENGINE_FAMILY_RECORD_H_
#define TALLY_ENGINE_FAMILY_RECORD_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "engine/rules.h"
#include "engine/coding.h"
#include "schema/records.h"
#include "tally/dump.h"

namespace tally::engine {

// What a key names; set by the family's key decoder.
enum class RecordKind {
  kHeader,         // meta 0x01
  kCounter,        // meta 0x02 + name
  kOutboxCursor,   // meta 0x03
  kTimeMark,       // meta 0x04
  kImportNote,     // meta 0x05 + u64be(id)
  kShard,          // shards
  kMarker,         // events
  kRollup,         // rollups u64be(id)
  kTopList,        // rollups u64be(id) + 0x01: a keyed counter's top keys
  kOutboxSettled,  // outbox u64be(0)
  kOutboxEntry,    // outbox u64be(seq >= 1)
  kHold,           // holds: a reservation, open or closed
  kClaim,          // claims: a claim, by its key
};

struct FamilyRecord {
  RecordKind kind = RecordKind::kHeader;
  // From the key.
  uint64_t counter_id = 0;        // shard, marker, rollup, import-note keys
  std::string counter_key;        // a keyed counter's shard or marker key
  std::string name;               // a counter key's name
  uint32_t shard = 0;             // a shard key's shard
  int64_t bucket_ms = kNoBucket;  // a bucketed shard key's bucket start
  std::string event_id;           // a marker key's event id
  uint64_t seq = 0;               // an outbox entry's key
  // From the value (the one `kind` names).
  uint64_t word = 0;  // cursor, time mark (ms as u64), settled watermark
  ShardValue shard_state = ShardValue::kExact;
  ShardSum shard_value = 0;
  schema::HeaderRecord header;
  schema::CounterRecord counter;
  schema::MarkerRecord marker;
  RollupRecord rollup;
  TopKeysResult top;  // a top list
  schema::OutboxRecord outbox;
  std::string import_name;
  char hold_tag = 0;  // a hold key's: kOpenHoldTag or kClosedHoldTag
  schema::HoldRecord hold;
  std::string claim_key;  // a claim key's bytes
  schema::ClaimRecord claim;
};

// How an entry was written (the WAL shows all of them; a table file only
// holds the values of puts and folded merges).
enum class WriteKind { kPut, kMerge, kDelete };

// Each returns "" when the bytes are what tally writes there, else why not
// (text for a Verify finding or a raw WAL op). A value decoder runs after
// the key decoder, on the record it filled.
using KeyDecoder = std::string (*)(std::string_view key, FamilyRecord* out);
using ValueDecoder = std::string (*)(std::string_view value, FamilyRecord* out);
// Renders a decoded entry for the WAL dump: its op name and fields (counter
// fields carry ids; the dump names them). Returns "" or, for a write tally
// never makes to such a key (a merge into meta), why it is shown raw.
using Renderer = std::string (*)(WriteKind write, const FamilyRecord& rec,
                                 DumpOp* out);

// Field builders for renderers.
DumpField WordField(std::string key, std::string word);
DumpField TextField(std::string key, std::string text,
                    std::string json_key = std::string());
DumpField IntField(std::string key, int64_t v);
DumpField UintField(std::string key, uint64_t v);
DumpField DeltaField(int64_t v);
DumpField TimeField(std::string key, int64_t ms);
DumpField CounterField(uint64_t id);

// Per family (one file each, e.g. engine/decode_shards.cc).
std::string DecodeMetaKey(std::string_view key, FamilyRecord* out);
std::string DecodeMetaValue(std::string_view value, FamilyRecord* out);
std::string RenderMeta(WriteKind write, const FamilyRecord& rec, DumpOp* out);
std::string DecodeShardsKey(std::string_view key, FamilyRecord* out);
std::string DecodeShardsValue(std::string_view value, FamilyRecord* out);
std::string RenderShards(WriteKind write, const FamilyRecord& rec, DumpOp* out);
std::string DecodeEventsKey(std::string_view key, FamilyRecord* out);
std::string DecodeEventsValue(std::string_view value, FamilyRecord* out);
std::string RenderEvents(WriteKind write, const FamilyRecord& rec, DumpOp* out);
std::string DecodeRollupsKey(std::string_view key, FamilyRecord* out);
std::string DecodeRollupsValue(std::string_view value, FamilyRecord* out);
std::string RenderRollups(WriteKind write, const FamilyRecord& rec,
                          DumpOp* out);
std::string DecodeOutboxKey(std::string_view key, FamilyRecord* out);
std::string DecodeOutboxValue(std::string_view value, FamilyRecord* out);
std::string RenderOutbox(WriteKind write, const FamilyRecord& rec, DumpOp* out);
std::string DecodeHoldsKey(std::string_view key, FamilyRecord* out);
std::string DecodeHoldsValue(std::string_view value, FamilyRecord* out);
std::string RenderHolds(WriteKind write, const FamilyRecord& rec, DumpOp* out);
std::string DecodeClaimsKey(std::string_view key, FamilyRecord* out);
std::string DecodeClaimsValue(std::string_view value, FamilyRecord* out);
std::string RenderClaims(WriteKind write, const FamilyRecord& rec,
                         DumpOp* out);

}  // namespace tally::engine

#endif  // TALLY_ENGINE_FAMILY_RECORD_H_
