// Options for opening a tally database, the Clock it reads time from, and
// the per-call options of reads and writes (ReadOptions, IncrementOptions,
// OnceOptions; Batch::Add and Batch::AddOnce take the same as the single
// calls).

#ifndef TALLY_OPTIONS_H_
#define TALLY_OPTIONS_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tally/export.h"
#include "tally/types.h"

namespace tally {

// Clock: where tally reads wall time (dedupe windows, marker expiry, time
// buckets and retention, created-at times, roll-up and outbox ages). Tests
// inject their own to move time without sleeping.
//
// The clock may step backwards (NTP correcting a box that ran ahead). tally
// never does: its time is the largest this clock has shown, persisted in the
// database as a high-water mark (docs/design.md, "Time"), and compaction
// drops expired markers and buckets only by a mark already on disk. After a
// backward step tally keeps its time until the clock catches up, so what it
// judged expired while the clock was ahead stays expired: a redelivery whose
// marker was dropped is kOutsideWindow, a dropped bucket stays past
// retention. A clock far ahead by mistake holds tally's time there as long.
//
// Ownership: the caller owns a Clock passed in Options and keeps it alive
// until the Db is destroyed. Thread safety: NowMillis() is called from many
// threads at once and must be safe for that.
class TALLY_EXPORT Clock {
 public:
  virtual ~Clock() = default;
  // Milliseconds since the Unix epoch, UTC.
  virtual int64_t NowMillis() const = 0;
  // The process-wide system clock (never null, never destroyed).
  static const Clock* System();
};

// What a read-only database reads (Options::reads): a combination of these
// bits. Counter names and settings (ListCounters, DescribeCounter) are
// always readable. Each bit is a kind of data, not a storage detail: a
// backend that reads nothing up front (a future Redis Cluster one) ignores
// them.
inline constexpr uint32_t kReadValues = 1u << 0;   // ReadExact, ShardCounts,
                                                   // ReadRange, PendingOperands
inline constexpr uint32_t kReadMarkers = 1u << 1;  // CountMarkers, GetMarker,
                                                   // ListMarkers, GetClaim,
                                                   // ListClaims
inline constexpr uint32_t kReadRollups = 1u << 2;  // ReadCached
inline constexpr uint32_t kReadOutbox = 1u << 3;   // ReadOutbox,
                                                   // GetOutboxStatus
// Everything, and what Verify, GetDbStats, Checkpoint and CreateBackup of a
// read-only database need.
inline constexpr uint32_t kReadAll =
    kReadValues | kReadMarkers | kReadRollups | kReadOutbox;

// How to open a database. A plain value: the caller owns it, Db::Open copies
// what it needs; distinct objects may be used from different threads.
// Db::Open checks every numeric field against the range its comment gives
// (the limits are in tally/limits.h, each with its reason) and refuses a
// value outside it with InvalidArgument naming the field, the value and the
// range; it never clamps.
struct Options {
  // Create the database if `path` does not hold one. Default: true.
  // Ignored (treated as false) when read_only is set.
  bool create_if_missing = true;

  // Open for reading only, also while another process holds the database
  // open for writing (a RocksDB secondary instance: it takes no lock and
  // replays the writer's WAL). Reads see the database as of Open or of the
  // last Db::Refresh(), one point across column families (see Refresh);
  // every write returns NotSupported; Open returns Busy if the writer
  // deleted WAL files during each of several attempts. Default: false.
  // Costs a private temporary directory for the instance's own logs, and
  // keeps every SST file open (RocksDB requires max_open_files=-1).
  bool read_only = false;

  // What a read_only database will read: kRead* bits (above). Default:
  // kReadAll. A read-only open replays the writer's WAL and opens table
  // files only for the data named here, so naming less opens faster beside
  // a busy writer or after a long history (docs/design.md, "readers in
  // other processes"); a call reading anything else returns NotSupported
  // naming this option. 0..kReadAll (0: the counter catalog only). A writer
  // reads everything: it refuses anything but kReadAll.
  uint32_t reads = kReadAll;

  // fsync the WAL before an increment is acknowledged. Default: false, which
  // survives a process crash (whole batches only) but may lose the last
  // writes on power loss. true costs one fsync per commit group
  // (docs/durability.md); concurrent writers share it.
  bool sync = false;

  // Block cache shared by all column families, in bytes. Default: 32 MiB.
  // Split into shards of at least 8 MiB (4 for the default) so a whole
  // marker-file bloom filter (~1.2 MiB per 64 MiB file) stays cached.
  // kMinBlockCacheBytes..kMaxBlockCacheBytes (1 MiB..1 TiB, tally/limits.h).
  size_t block_cache_bytes = size_t{32} << 20;

  // Memtable size per column family, in bytes. Default: 16 MiB. Larger
  // memtables absorb more merge operands before a flush folds them.
  // kMinWriteBufferBytes..kMaxWriteBufferBytes (64 KiB..64 GiB).
  size_t write_buffer_bytes = size_t{16} << 20;

  // The most write-ahead log a writer keeps for the next open to replay, in
  // bytes (RocksDB max_total_wal_size). A log is deleted only once every
  // column family with data in it has flushed, so without a bound a busy
  // family keeps old logs alive for the others; once the live logs pass
  // this, RocksDB flushes every family with data in the oldest one. Every
  // MB left costs an open its replay: Db::Open after a crash, and every
  // read-only open beside a running writer (a `counterctl get` ~8 ms of CPU
  // per MB, on top of ~11 ms to start). Default: 4 MiB, which halves the
  // CPU of such a `get` against 8 MiB at ~6-7% more write CPU (flushes and
  // compactions; 3 and 2 MiB cost up to 15-17%; docs/durability.md,
  // "Recovery time").
  // Smaller bounds make more, smaller flushes. The bound also caps a
  // memtable's share of the log: a family that alone fills it is flushed
  // before write_buffer_bytes. The live log may pass the bound by what is
  // written while the flush it triggered runs (12-30% of the bound in the
  // measured runs). A clean close flushes what is left when it is over
  // 1 MiB.
  // Disk: RocksDB reserves (fallocate) each new log file at
  // min(1.1 x write_buffer_bytes, max_wal_bytes) and gives back what was not
  // written when the log is closed, so raising both reserves that much disk
  // for as long as a log is open (64 GiB write buffers reserve ~70 GiB).
  // kMinWalBytes..kMaxWalBytes (1 MiB..1 TiB).
  uint64_t max_wal_bytes = uint64_t{4} << 20;

  // Pending merge operands one shard may hold in the memtable before the
  // write path folds them into a value (RocksDB max_successive_merges).
  // Default: 16. It bounds the read cost of a hot shard, which otherwise
  // folds every pending operand on each read. Its price is paid by every
  // increment, not only every Nth: RocksDB seeks the key in the memtable
  // and walks its pending operands before each merge, and every Nth merge
  // of a key reads and folds them. On the release RocksDB 16 costs a
  // single increment ~11-17% fewer instructions than 64 and halves a hot
  // shard's read p99; 4 costs more (a fold every 4th merge); figures in
  // docs/design.md, "The write path beyond RocksDB's defaults".
  // 0 disables the bound: for write-mostly counters that are rarely read.
  // 0..kMaxPendingOperands (65536).
  // A read_only instance does not apply the bound to the writer's operands
  // it replays from the WAL (RocksDB applies it on the write path only), so
  // its reads of a hot, unflushed shard fold every pending operand.
  size_t max_pending_operands = 16;

  // Lock stripes serialising check-then-write of once-increments with the
  // same event id. Default: 1024. More stripes, fewer false conflicts
  // between unrelated events; each is one mutex on its own 64-byte cache
  // line. 1..kMaxEventLockStripes (2^20).
  uint32_t event_lock_stripes = 1024;

  // How often a background thread rolls up every counter that changed into
  // its cached total (Db::ReadCached), in milliseconds. Default: 1000. 0
  // turns the thread off (RollupNow and ReadCached still work). Ignored for
  // read-only databases. A pass over unchanged counters costs one atomic
  // load per counter; a changed counter costs one exact read and one write.
  // 0..kMaxRollupIntervalMs (one day).
  uint32_t rollup_interval_ms = 1000;

  // How often a writer publishes its engine figures (tally::GetStats) for
  // read-only processes, in milliseconds: a background thread writes them
  // to a small file in the database directory (docs/format.md, "Stats
  // file"), also once at open and a last time at a clean close, so
  // `counterctl stats` beside a running app shows its numbers and their
  // age. Default: 1000. 0 turns publishing off (and a writer then removes
  // a file an earlier writer left); otherwise
  // kMinStatsPublishIntervalMs..kMaxStatsPublishIntervalMs (100 ms..one
  // hour). The write path pays nothing: the thread reads counters the
  // engine keeps anyway. Ignored for read-only databases.
  uint32_t stats_publish_interval_ms = 1000;

  // Expired markers (dedupe windows) and buckets past their retention are
  // dropped by compaction (readers skip them before that). RocksDB compacts
  // a marker or shard file at the latest once it is this old, in seconds, so
  // expired data does not wait for the data volume to trigger a compaction.
  // Default: 86400 (one day). 0: RocksDB's own default (30 days); otherwise
  // kMinExpirySweepSeconds..kMaxExpirySweepSeconds (one hour..ten years).
  uint64_t expiry_sweep_seconds = 86400;

  // Unacknowledged outbox entries the database holds at most (counters with
  // CounterSpec::outbox). An increment that would pass the cap is refused
  // with Busy naming it, and nothing is written: sync and acknowledge
  // (SyncOutbox, tally::AckOutbox) to make room. Default: 1,000,000 (~60 MB).
  // 1..kMaxOutboxEntries.
  uint64_t outbox_max_entries = 1000000;

  // Where time comes from. Default: nullptr, the system clock. Not owned.
  const Clock* clock = nullptr;

  // What Open does with a write-ahead log damaged before its last record
  // (a torn last record, left by a crash, is always tolerated). Default:
  // false, refuse with Corruption naming the log file, since replaying only
  // part of it would silently drop acknowledged increments. true: replay up
  // to the damage and drop the rest (a consistent earlier state: whole
  // batches only, markers and shards still agree). Also for disks whose
  // write cache may lose or reorder writes on power loss.
  bool salvage_wal = false;

  // Group commit, used only when `sync` is true: concurrent increments are
  // gathered by one leader into one RocksDB write and one fsync, and each
  // returns once its group is durable and readable (docs/durability.md).
  // These three bound one group; the leader's own commit always goes, however
  // large. With sync false, increments take RocksDB's plain write path and
  // these are ignored.
  //
  // The most bytes of serialized WriteBatch data one group holds. Default:
  // 1 MiB (an increment is ~40 bytes, a once-increment ~100 plus its event
  // id). Larger groups share one fsync among more increments but hold every
  // member until the whole group is in the memtable.
  // 1..kMaxGroupCommitBytes.
  size_t group_commit_max_bytes = size_t{1} << 20;

  // The most WriteBatch records one group holds (an increment is 1 record, a
  // once-increment 2, an Apply one per marker and per touched shard).
  // Default: 16384. 1..kMaxGroupCommitOps.
  size_t group_commit_max_ops = 16384;

  // How long the leader of a group waits for more increments to join before
  // it writes, in microseconds, unless a bound above is reached first.
  // Default: 0, write at once: increments that arrive while a group's fsync
  // runs already form the next group, which is enough under load. A delay
  // helps a few producers share fsyncs, at the price of that much added
  // latency on every durable increment. 0..kMaxGroupCommitDelayUs.
  uint32_t group_commit_max_delay_us = 0;
};

// Per-read options. A plain value, like Options.
struct ReadOptions {
  // Verify block checksums on every read. Default: true.
  bool verify_checksums = true;
};

// Per-call choices of a plain increment. A plain value; the affinity key is
// only read during the call.
struct IncrementOptions {
  // Hashed to pick the shard (the stable hash of docs/format.md). Empty:
  // random shard, allowed only under ShardPolicy::kRandom.
  std::string_view affinity_key;
  // When the event happened, ms since the Unix epoch (UTC): a bucketed
  // counter counts it in that time's bucket. kEventTimeNow (default): now.
  // Ignored by counters without buckets (after its range is checked).
  int64_t event_time_ms = kEventTimeNow;
  // Strict counters (CounterSpec::bounds): an increment that would cross a
  // bound applies what fits instead of being refused (IncrementResult::
  // applied says how much; kRefused only when nothing fits). Ignored by
  // other counters.
  bool saturate = false;
};

// Per-call choices of a once-increment. A plain value.
struct OnceOptions {
  // When the event happened, in ms since the Unix epoch (UTC); the same in
  // every copy of the event. Required (InvalidArgument without it) on a
  // counter with a dedupe window, where an event older than now - window is
  // refused as Outcome::kOutsideWindow: the time of delivery could not tell
  // a late redelivery, whose marker may be gone, from a new event. Ignored
  // by counters without a window (after its range is checked). A bucketed
  // counter counts the event in that time's bucket (now when not given).
  int64_t event_time_ms = kEventTimeNow;
  // Empty (default): the shard is the hash of the event id. Else the hash
  // of this key picks it ("pinned"; SyncOutbox puts each edge's increments
  // in its own hub shard). A redelivery's outcome and reported shard come
  // from the marker, with or without the key (a key given is still checked).
  std::string_view affinity_key;
  // As IncrementOptions::saturate; what was applied is remembered for the
  // event like the rest of its answer.
  bool saturate = false;
};

// Per-call choices of a reset (Db::Reset). A plain value.
struct ResetOptions {
  // When the reset was issued, in ms since the Unix epoch (UTC); the same in
  // every copy of it. As OnceOptions::event_time_ms: required
  // (InvalidArgument without it) on a counter with a dedupe window, where a
  // reset older than now - window is answered Outcome::kOutsideWindow and
  // changes nothing (its marker may be gone: only the time it was issued
  // tells a late redelivery from a new reset); a bucketed counter's reset
  // sets the bucket holding that time (now when not given).
  int64_t event_time_ms = kEventTimeNow;
};

}  // namespace tally

#endif  // TALLY_OPTIONS_H_
