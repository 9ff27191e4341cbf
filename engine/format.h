// The on-disk layout's constants: column family names, meta keys and the
// format version. docs/format.md is the specification; keep them in step.

#ifndef TALLY_ENGINE_FORMAT_H_
#define TALLY_ENGINE_FORMAT_H_

#include <cstdint>

#include "tally/types.h"

namespace tally::engine {

// Bumped when a reader of the previous version could misread new data. A
// database whose header carries a larger version is refused at open.
// A new database is written as version 1; creating its first counter with a
// dedupe window or time buckets (format 2 features an older tally would
// misread) raises the header to 2 in the same write. Format 3 has two
// features, each raising the header to 3 in the write that first uses it:
// outbox identity (entries carry their origin and settled watermark, the
// outbox holds a settled record at key u64be(0)), raised when an outbox
// counter is created or at a writer's open of a database that has one; and
// the time mark (kTimeMarkKey), raised by the first mark: a format-2 tally
// would refuse the unknown meta key as Corruption, and with the bump it says
// "upgrade tally" instead.
// Format 4: keyed counters (CounterMeta.keyed, shard and marker keys that
// carry a key, outbox entries with a key, the rollups top list), raised by
// the creation of the first keyed counter.
// Format 5: strict counters (CounterMeta bounds, markers holding the
// event's answer), raised by the creation of the first strict counter: an
// older tally would write past the bounds.
// Format 6: quotas (a strict counter with time buckets, whose markers hold
// their window's end), raised by the creation of the first one: a format-5
// tally would check a quota's bounds against the wrong value.
// Format 7: resets and reservations (EventMarker.reset, the holds family),
// raised by the first Reset or Reserve: a format-6 tally would answer a
// reset's redelivery as an increment's, and would not see the units held.
// Format 8: claims (the claims family), raised by the first Claim: a
// format-7 tally would not know the family holds anything.
inline constexpr uint32_t kFormatVersion = 8;
inline constexpr uint32_t kBaseFormatVersion = 1;
inline constexpr uint32_t kFormatWindows = 2;
inline constexpr uint32_t kFormatOutboxIdentity = 3;
inline constexpr uint32_t kTimeMarkFormatVersion = 3;
inline constexpr uint32_t kFormatKeyed = 4;
inline constexpr uint32_t kFormatStrict = 5;
inline constexpr uint32_t kFormatQuota = 6;
inline constexpr uint32_t kFormatHolds = 7;
inline constexpr uint32_t kFormatClaims = 8;
// CounterMeta.schema_version written for new counters.
inline constexpr uint32_t kCounterSchemaVersion = 1;

inline constexpr char kMetaFamily[] = "meta";
inline constexpr char kShardsFamily[] = "shards";
inline constexpr char kEventsFamily[] = "events";
inline constexpr char kRollupsFamily[] = "rollups";
inline constexpr char kOutboxFamily[] = "outbox";
inline constexpr char kHoldsFamily[] = "holds";  // format 7
inline constexpr char kClaimsFamily[] = "claims";  // format 8

// The file a creating open writes into the database directory before
// RocksDB makes anything there, and removes once the database is whole
// (engine/creation.h): a directory holding it is an unfinished creation.
inline constexpr char kCreatingMarker[] = "TALLY-CREATING";

// The file a writer publishes its engine figures in for read-only
// processes (engine/stats_file.h), written as kStatsFileTemp and renamed;
// its own format version (not the database's), checked by readers.
inline constexpr char kStatsFile[] = "TALLY-STATS";
inline constexpr char kStatsFileTemp[] = "TALLY-STATS.tmp";
inline constexpr char kStatsFileMagic[] = "TLYSTATS";  // 8 bytes, no NUL
inline constexpr uint32_t kStatsFileVersion = 1;

// meta CF keys: one tag byte, then (for counters) the name bytes.
inline constexpr char kHeaderKey[] = "\x01";
inline constexpr char kCounterKeyTag = '\x02';
// The outbox's acknowledged cursor: u64be(seq), 8 bytes (format 2).
inline constexpr char kOutboxAckedKey[] = "\x03";
// The engine's time high-water mark (engine/engine_clock.h): i64 ms since
// the Unix epoch as u64be, 8 bytes (format 3, kTimeMarkFormatVersion).
inline constexpr char kTimeMarkKey[] = "\x04";
// How often a writer persists the mark (a synced meta write when its time
// moved); also done at open and before tally::Compact. Compaction filters use
// the durable mark, so expired data is dropped up to this much later.
inline constexpr int64_t kTimeMarkIntervalMs = 60'000;
// outbox CF: entries at u64be(seq), seq >= 1; at u64be(0) the recorded
// settled watermark, u64be(seq), 8 bytes (format 3): every seq <= it is
// committed or dead.
inline constexpr uint64_t kOutboxSettledSeq = 0;
// An unfinished import: tag 0x05 + u64be(counter id), value the counter's
// name. Written with the id's allocation, before the counter's shards and
// markers; removed in the write that adds the counter record (the counter
// then appears whole) or, for an import that died, by the next read-write
// open with every key of that id. Not a format-version feature: an older
// tally refuses a database holding one (unknown meta key), misreading
// nothing.
inline constexpr char kImportKeyTag = '\x05';

// CounterMeta.flags bits: tally::kCounterFlagPlainIncrements (types.h),
// set in the same WriteBatch as a counter's first plain increment; from then
// on Verify no longer compares its shard sum with its markers' deltas.
using tally::kCounterFlagPlainIncrements;

// Counter ids start at 1; 0 is never a counter.
inline constexpr uint64_t kFirstCounterId = 1;

// Width of the counter-id prefix of shard and marker keys.
inline constexpr int kCounterIdBytes = 8;
inline constexpr int kShardKeyBytes = kCounterIdBytes + 4;
// A bucketed counter's shard key adds the bucket's start (format 2).
inline constexpr int kBucketShardKeyBytes = kCounterIdBytes + 8 + 4;
inline constexpr int kValueBytes = 8;
// A shard value whose exact sum lies outside int64 ("wide shard values",
// docs/format.md): i128le, 16 bytes. Written by the merge operator only.
inline constexpr int kWideValueBytes = 16;

}  // namespace tally::engine

#endif  // TALLY_ENGINE_FORMAT_H_
