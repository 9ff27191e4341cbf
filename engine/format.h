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
// misread) raises the header to 2 in the same write.
inline constexpr uint32_t kFormatVersion = 2;
inline constexpr uint32_t kBaseFormatVersion = 1;
// CounterMeta.schema_version written for new counters.
inline constexpr uint32_t kCounterSchemaVersion = 1;

inline constexpr char kMetaFamily[] = "meta";
inline constexpr char kShardsFamily[] = "shards";
inline constexpr char kEventsFamily[] = "events";
inline constexpr char kRollupsFamily[] = "rollups";
inline constexpr char kOutboxFamily[] = "outbox";

// The file a creating open writes into the database directory before
// RocksDB makes anything there, and removes once the database is whole
// (engine/creation.h): a directory holding it is an unfinished creation.
inline constexpr char kCreatingMarker[] = "TALLY-CREATING";

// meta CF keys: one tag byte, then (for counters) the name bytes.
inline constexpr char kHeaderKey[] = "\x01";
inline constexpr char kCounterKeyTag = '\x02';
// The outbox's acknowledged cursor: u64be(seq), 8 bytes (format 2).
inline constexpr char kOutboxAckedKey[] = "\x03";

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

}  // namespace tally::engine

#endif  // TALLY_ENGINE_FORMAT_H_
