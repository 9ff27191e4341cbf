// Named limits. Every input that crosses the public API is checked against
// one of these at the boundary and refused with InvalidArgument, never
// clamped. Changing one is a format decision: see docs/format.md.

#ifndef TALLY_LIMITS_H_
#define TALLY_LIMITS_H_

#include <cstddef>
#include <cstdint>
#include <limits>

namespace tally {

// Each limit says why it is that number. Most are sanity bounds: far past
// any sensible use, they turn a unit mistake (bytes for KiB, seconds for
// milliseconds) into a clear error instead of a database that misbehaves.

// A counter name: 1..kMaxNameBytes bytes of UTF-8 without control characters.
// Every counter's name is in memory (the catalog) and in its meta key: 128
// bytes holds any dotted metric name while the catalog of kMaxCounters names
// stays under 128 MiB.
inline constexpr size_t kMaxNameBytes = 128;
// An event id (idempotency key): 1..kMaxEventIdBytes bytes of UTF-8 without
// control characters. It is stored in its marker's key and its outbox
// entry: 256 bytes holds a UUID, a message-queue topic/partition/offset or a
// request URL's id with room to spare, and keeps a marker key small enough
// for the bloom-filtered marker family to stay cache-resident.
inline constexpr size_t kMaxEventIdBytes = 256;
// An affinity key (device, thread, user): 1..kMaxAffinityKeyBytes bytes of
// UTF-8 without control characters. Only hashed, never stored; the same
// bound as an event id, so an event id can serve as one.
inline constexpr size_t kMaxAffinityKeyBytes = 256;
// Shards per counter: 1..kMaxShards. An exact read looks up every shard: at
// 4096 one read already costs thousands of lookups, while contention on one
// counter stops falling long before (one shard per writing thread is enough).
inline constexpr uint32_t kMaxShards = 4096;
// Operations in one Batch: 1..kMaxBatchOps. A batch is one atomic
// WriteBatch built in memory, holding its event-lock stripes throughout:
// 65536 operations keep it a few MiB and fit one group commit whole
// (kMaxGroupCommitOps, checked below).
inline constexpr size_t kMaxBatchOps = 65536;
// Live counters in one database. The catalog holds every counter in memory
// and Open reads them all: 2^20 is a few hundred MiB of catalog and a
// second-scale open, the most one process should pay.
inline constexpr size_t kMaxCounters = 1 << 20;
// A counter key (CounterRef::key, keyed counters): 1..kMaxKeyBytes bytes
// of UTF-8 without control characters, validated as names are. The same
// bound as a name: a post id, a URL path or an API key fits, and a marker
// key (id, key, separator, event id) stays under 400 bytes.
inline constexpr size_t kMaxKeyBytes = 128;
// Keys one Db::ReadKeys call reads at most: one MultiGet of keys x shards
// from one snapshot, its keys and values built in memory (a feed page reads
// 50; 1,024 keys of 64 shards is 65,536 lookups, a few ms of work).
inline constexpr size_t kMaxReadKeys = 1024;
// Keys one Db::ListKeys call returns at most (page with start_after): one
// page is built in memory, 10,000 of the longest key is under 2 MiB.
inline constexpr size_t kMaxListKeys = 10000;
// Keys a keyed counter's roll-up keeps in its top list, the most
// Db::TopKeys returns (exact or not): the list is one rollups record,
// rewritten whole at each roll-up, under 140 KiB at the longest keys.
inline constexpr size_t kMaxTopKeys = 1000;
// Markers one Db::ListMarkers call returns at most (page with start_after).
// One page is built in memory: 100,000 markers of the longest event id is
// under 30 MiB.
inline constexpr size_t kMaxListMarkers = 100000;
// Problems one tally::Verify report keeps (the rest are only counted): a
// report is read by a person, and a thousand problems already say the
// database is damaged throughout.
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

// A counter's dedupe window and bucket retention: at most ten years. Longer
// than any redelivery or reporting period, and expiry arithmetic (event time
// plus window, up to kMaxEventTimeMs) stays far inside int64.
inline constexpr int64_t kMaxDedupeWindowMs = int64_t{3650} * 86400 * 1000;
inline constexpr int64_t kMaxRetentionMs = kMaxDedupeWindowMs;
// An explicit event time: from the Unix epoch to the end of year 9999, UTC.
// Every accepted time prints as a four-digit-year ISO 8601 date (counterctl)
// and bucket starts computed from it cannot overflow.
inline constexpr int64_t kMinEventTimeMs = 0;
inline constexpr int64_t kMaxEventTimeMs = int64_t{253402300799999};

// Options::block_cache_bytes: kMinBlockCacheBytes..kMaxBlockCacheBytes
// (1 MiB..1 TiB). tally keeps index and filter blocks in the cache, and
// the filter of one full 64 MiB marker file is ~1.2 MiB: a smaller cache
// cannot keep even one, so every lookup reads filters from disk again (0
// would be a cache that holds nothing). 1 TiB is past the memory of any
// machine tally runs on: a larger value is a unit mistake.
inline constexpr size_t kMinBlockCacheBytes = size_t{1} << 20;
inline constexpr size_t kMaxBlockCacheBytes = size_t{1} << 40;
// Options::write_buffer_bytes: kMinWriteBufferBytes..kMaxWriteBufferBytes
// (64 KiB..64 GiB): the range RocksDB (7.8, 64-bit) accepts for a column
// family's write_buffer_size. Its option sanitizing silently clips any other
// value into that range; tally refuses the value instead.
inline constexpr size_t kMinWriteBufferBytes = size_t{64} << 10;
inline constexpr size_t kMaxWriteBufferBytes = size_t{64} << 30;
// Options::max_wal_bytes: kMinWalBytes..kMaxWalBytes (1 MiB..1 TiB). Each
// time the live logs pass the bound every family with data in the oldest log
// is flushed: below 1 MiB (about 10,000 once-increments) that is a flush of
// each family every few thousand increments, small table files made faster
// than compaction merges them. 1 TiB is past any disk's worth of log to
// replay: a larger value is a unit mistake (use a large bound to leave it
// to the memtables).
inline constexpr uint64_t kMinWalBytes = uint64_t{1} << 20;
inline constexpr uint64_t kMaxWalBytes = uint64_t{1} << 40;
// Options::max_pending_operands: 0 (no bound) or 1..kMaxPendingOperands.
// The bound exists to cap what one read of a hot shard folds; a bound as
// large as a whole Batch (kMaxBatchOps) no longer caps anything a read
// should pay (BM_HotReadAfterBurst in docs/benchmarks.md): use 0 instead.
inline constexpr size_t kMaxPendingOperands = kMaxBatchOps;
// Options::event_lock_stripes: 1..kMaxEventLockStripes. Every stripe is one
// cache-line-aligned mutex allocated at Open: 2^20 stripes are 64 MiB, and
// past a few thousand, false conflicts are already rare.
inline constexpr uint32_t kMaxEventLockStripes = uint32_t{1} << 20;
// Options::rollup_interval_ms: 0 (no roll-up thread) or
// 1..kMaxRollupIntervalMs (one day). A cached total staler than a day is
// not a cache anyone reads; turn the thread off with 0 instead.
inline constexpr uint32_t kMaxRollupIntervalMs = 86400000;
// Options::stats_publish_interval_ms: 0 (not published) or
// kMinStatsPublishIntervalMs..kMaxStatsPublishIntervalMs. Each publish
// writes and renames a file: more than ten a second costs the writer's disk
// renames no operator reads that fast; figures an hour old are no live
// view (turn publishing off with 0 instead).
inline constexpr uint32_t kMinStatsPublishIntervalMs = 100;
inline constexpr uint32_t kMaxStatsPublishIntervalMs = 3'600'000;
// Options::expiry_sweep_seconds: 0 (RocksDB's own default) or
// kMinExpirySweepSeconds..kMaxExpirySweepSeconds (one hour..ten years).
// Each sweep rewrites every marker and shard file older than the period:
// more often than hourly the database would spend its disk bandwidth
// rewriting itself. A sweep rarer than the longest dedupe window or
// retention (kMaxRetentionMs) sweeps nothing that had expired.
inline constexpr uint64_t kMinExpirySweepSeconds = 3600;
inline constexpr uint64_t kMaxExpirySweepSeconds = kMaxRetentionMs / 1000;

// Options::reads: 0..kReadAll (tally/options.h), the kRead* bits: any
// other bit names no data a database holds.

// Options::group_commit_max_bytes: 1..kMaxGroupCommitBytes (64 MiB). A group
// is concatenated into one in-memory WriteBatch and applied to the memtable
// at once; 64 times the default is far past where sharing one fsync among
// more writes still gains anything.
inline constexpr size_t kMaxGroupCommitBytes = size_t{64} << 20;
// Options::group_commit_max_ops: 1..kMaxGroupCommitOps records: 16 whole
// Batches (at least one, checked below), for the same reason.
inline constexpr size_t kMaxGroupCommitOps = size_t{1} << 20;
// Options::group_commit_max_delay_us: 0..kMaxGroupCommitDelayUs (100 ms).
// The delay is added to every durable increment: past 100 ms (a hundred
// fsyncs of a typical SSD) it costs far more latency than it can save.
inline constexpr uint32_t kMaxGroupCommitDelayUs = 100000;

// Options::outbox_max_entries: 1..kMaxOutboxEntries unacknowledged entries.
// At ~60 bytes an entry 2^32 of them are ~256 GiB waiting for a hub that has
// long stopped syncing; the bound also keeps the sequencer's pending-count
// arithmetic (engine/outbox_sequencer.h) far from overflow.
inline constexpr uint64_t kMaxOutboxEntries = uint64_t{1} << 32;
// Entries one tally::ReadOutbox call returns at most: one page is built in
// memory, as for kMaxListMarkers.
inline constexpr size_t kMaxOutboxRead = 100000;

// Db::Reserve's hold_for_ms: 1..kMaxHoldMs (30 days). A hold is a
// checkout or a seat being booked, not storage: units held longer belong in
// a take (commit) that a later increment gives back.
inline constexpr int64_t kMaxHoldMs = int64_t{30} * 86400 * 1000;
// Reservations of one key held at once: 1..kMaxOpenHolds. Every write of
// the key reads them all (what is available is its value less what they
// hold), so the bound caps that read; Reserve past it is OutOfRange.
inline constexpr size_t kMaxOpenHolds = 1024;

// Claims (Db::Claim, docs/claims.md). A claim key names one side effect
// (an item to insert, a mail to send): an event id's rules and length.
inline constexpr size_t kMaxClaimKeyBytes = kMaxEventIdBytes;
// A holder names one worker (a host and pid, a thread): 1..kMaxHolderBytes
// of UTF-8 without control characters, stored in every claim it holds.
inline constexpr size_t kMaxHolderBytes = 128;
// Db::Claim's lease_ms: 1..kMaxLeaseMs (7 days). A lease covers one piece
// of work; a holder that dies keeps the key from everyone else until its
// lease ends, so a week is already far past any job that should hold one.
inline constexpr int64_t kMaxLeaseMs = int64_t{7} * 86400 * 1000;
// Db::CompleteClaim's result: 0..kMaxClaimResultBytes of UTF-8 (a row id,
// a message id: a reference to what the side effect made, not its data).
// Every completed claim keeps its result for good.
inline constexpr size_t kMaxClaimResultBytes = 4096;
// Claims one Db::ListClaims call returns at most (page with start_after):
// one page is built in memory, 10,000 of the longest results is ~45 MiB.
inline constexpr size_t kMaxListClaims = 10000;

static_assert(kMaxShards <= (1u << 16), "shard index must stay small");
static_assert(kMaxEventIdBytes >= kMaxNameBytes, "ids are at least names");
static_assert(kMaxBatchOps <= (1u << 20), "a batch must fit one WriteBatch");
static_assert(kMaxGroupCommitOps >= kMaxBatchOps,
              "a group may hold at least one whole Batch");

}  // namespace tally

#endif  // TALLY_LIMITS_H_
