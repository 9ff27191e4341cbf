// Named limits. Every input that crosses the public API is checked against
// one of these at the boundary and refused with InvalidArgument, never
// clamped. Changing one is a format decision: see docs/format.md.

#ifndef TALLY_LIMITS_H_
#define TALLY_LIMITS_H_

#include <cstddef>
#include <cstdint>
#include <limits>

namespace tally {

// A counter name: 1..kMaxNameBytes bytes of UTF-8 without control characters.
inline constexpr size_t kMaxNameBytes = 128;
// An event id (idempotency key): 1..kMaxEventIdBytes bytes of UTF-8 without
// control characters.
inline constexpr size_t kMaxEventIdBytes = 256;
// An affinity key (device, thread, user): 1..kMaxAffinityKeyBytes bytes of
// UTF-8 without control characters.
inline constexpr size_t kMaxAffinityKeyBytes = 256;
// Shards per counter: 1..kMaxShards.
inline constexpr uint32_t kMaxShards = 4096;
// Operations in one Batch: 1..kMaxBatchOps.
inline constexpr size_t kMaxBatchOps = 65536;
// Live counters in one database (the catalog is held in memory).
inline constexpr size_t kMaxCounters = 1 << 20;
// Markers one Db::ListMarkers call returns at most (page with start_after).
inline constexpr size_t kMaxListMarkers = 100000;
// Problems one tally::Verify report keeps (the rest are only counted).
inline constexpr size_t kMaxVerifyProblems = 1000;
// Time buckets one read scans at most (Db::ReadExact, ReadRange,
// ShardCounts and the roll-up behind ReadCached): a bucketed counter keeps
// one key per (bucket, shard) it was incremented in, so without this a
// read of a minute-bucketed counter kept forever would cost more every
// minute, without bound. A read that would scan more is refused
// (InvalidArgument naming this limit), never cut short: read in parts with
// ReadRange, or give the counter a retention that keeps fewer buckets.
// 2^16 covers 45 days of minute buckets, 7 years of hour buckets and 179
// years of day buckets, and bounds a read to kMaxReadBuckets keys per shard,
// as many as one full Batch writes.
inline constexpr size_t kMaxReadBuckets = size_t{1} << 16;
// A delta is any int64 except the minimum, whose 8-byte form the engine
// reserves as the stored "overflowed" state of a shard (docs/format.md).
inline constexpr int64_t kMinDelta = std::numeric_limits<int64_t>::min() + 1;
inline constexpr int64_t kMaxDelta = std::numeric_limits<int64_t>::max();

// A counter's dedupe window and bucket retention: at most ten years.
inline constexpr int64_t kMaxDedupeWindowMs = int64_t{3650} * 86400 * 1000;
inline constexpr int64_t kMaxRetentionMs = kMaxDedupeWindowMs;
// An explicit event time: from the Unix epoch to the end of year 9999, UTC.
inline constexpr int64_t kMinEventTimeMs = 0;
inline constexpr int64_t kMaxEventTimeMs = int64_t{253402300799999};

// Options::group_commit_max_bytes: 1..kMaxGroupCommitBytes (64 MiB).
inline constexpr size_t kMaxGroupCommitBytes = size_t{64} << 20;
// Options::group_commit_max_ops: 1..kMaxGroupCommitOps records.
inline constexpr size_t kMaxGroupCommitOps = size_t{1} << 20;
// Options::group_commit_max_delay_us: 0..kMaxGroupCommitDelayUs (100 ms).
inline constexpr uint32_t kMaxGroupCommitDelayUs = 100000;

// Options::outbox_max_entries: 1..kMaxOutboxEntries unacknowledged entries.
inline constexpr uint64_t kMaxOutboxEntries = uint64_t{1} << 32;
// Entries one tally::ReadOutbox call returns at most.
inline constexpr size_t kMaxOutboxRead = 100000;

static_assert(kMaxShards <= (1u << 16), "shard index must stay small");
static_assert(kMaxEventIdBytes >= kMaxNameBytes, "ids are at least names");
static_assert(kMaxBatchOps <= (1u << 20), "a batch must fit one WriteBatch");
static_assert(kMaxGroupCommitOps >= kMaxBatchOps,
              "a group may hold at least one whole Batch");

}  // namespace tally

#endif  // TALLY_LIMITS_H_
