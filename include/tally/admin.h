// Administration of an open database: verify, compact, statistics and
// diagnostics. Free functions on a Db, as RocksDB's and LevelDB's tools sit
// beside their DB class; the data path stays on Db (tally/db.h).
//
// Thread safety: each may run while other threads use the same Db.
// Ownership: each borrows the Db for the call.

#ifndef TALLY_ADMIN_H_
#define TALLY_ADMIN_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "tally/db.h"
#include "tally/export.h"
#include "tally/status.h"
#include "tally/types.h"

namespace tally {

// How far a long call (Verify, Compact, CreateBackup) has come, for a
// progress display: `done` of `total` units named by `unit` ("records",
// "bytes"); with `estimated` the total is RocksDB's estimate and `done` may
// end above or below it. `unit` is a string literal.
struct ProgressReport {
  const char* unit = "";
  uint64_t done = 0;
  uint64_t total = 0;
  bool estimated = false;
};
// Called as the work goes, at most every few thousand records or few MiB,
// never concurrently with itself; Verify and Compact call it on the
// caller's thread, CreateBackup on RocksDB's copying thread. It must not
// call back into the Db. An empty function: no reports.
using ProgressFn = std::function<void(const ProgressReport&)>;

// What tally::Verify found. `problems` holds one line per broken invariant,
// naming the key or counter; at most kMaxVerifyProblems are kept and
// `problems_dropped` counts the rest.
struct VerifyReport {
  uint64_t counters = 0;    // counter records checked
  uint64_t shard_keys = 0;  // shard keys checked
  uint64_t markers = 0;     // markers checked
  // Counters whose shard sum was compared with their markers' delta sum
  // (those that never had a plain increment and keep their markers and
  // buckets forever); a keyed counter's sums are compared per key.
  uint64_t sums_compared = 0;
  // Keys of keyed counters whose shard sum was compared with their own
  // markers' delta sum.
  uint64_t keys_compared = 0;
  // Reservations checked (format 7): each belongs to a counter that takes
  // them, and each key's value covers what its open ones hold now above
  // its minimum.
  uint64_t reservations = 0;
  std::vector<std::string> problems;
  uint64_t problems_dropped = 0;
  bool ok() const { return problems.empty(); }
};

// Whose figures an EngineStats holds.
enum class StatsSource : uint8_t {
  // Counted by this Db (a read-write open): exact and current.
  kThisProcess = 0,
  // Published by the database's writer for other processes (a read-only
  // Db): as of StatsOrigin::as_of_ms; see StatsOrigin::live.
  kWriter = 1,
  // A read-only Db that found no figures to show (StatsOrigin::problem says
  // why): every figure is 0.
  kNone = 2,
};

TALLY_EXPORT const char* StatsSourceName(
    StatsSource source);  // "this_process" ...

// The writer a read-only Db's figures come from, and their age. A writer
// publishes its figures every Options::stats_publish_interval_ms, once at
// open and a last time when it closes (docs/format.md, "Stats file").
struct StatsOrigin {
  StatsSource source = StatsSource::kThisProcess;
  // The writing process (kThisProcess: this one) and when it opened the
  // database (its Options::clock, ms since the Unix epoch).
  uint64_t writer_pid = 0;
  int64_t writer_started_ms = 0;
  // When the figures were taken (kThisProcess: now) and how old they are
  // by this Db's clock (now - as_of_ms, >= 0).
  int64_t as_of_ms = 0;
  int64_t age_ms = 0;
  // The writer's Options::stats_publish_interval_ms: figures older than a
  // few intervals from a live writer mean its publishing is stuck.
  uint32_t publish_interval_ms = 0;
  // The writer published these at its clean close: they are final.
  bool closed = false;
  // The writer still runs: not closed, and its process (pid and, on Linux,
  // that pid's start time, so a reused pid does not count) exists as this
  // process sees it. A writer killed without closing shows live = false
  // with its last figures and their age. Always true for kThisProcess.
  bool live = false;
  // kNone: why there are no figures (no stats file, or a damaged one,
  // named); empty otherwise.
  std::string problem;
};

// Engine-wide figures since Open, for monitoring. The first four count the
// outcomes (Outcome) of the increments of write calls that succeeded (an
// Apply's ops each count once); a call that failed counts in none of them.
struct EngineStats {
  uint64_t applied = 0;         // increments that changed a counter
  uint64_t duplicates = 0;      // once-increments found already counted
  uint64_t conflicts = 0;       // once-increments refused for a delta mismatch
  uint64_t outside_window = 0;  // once-increments older than their window
  // Strict counters' ops refused at a bound (Outcome::kRefused, copies
  // included; a batch a bound refused counts in `rejected`).
  uint64_t refused = 0;
  // Write calls (Increment, IncrementOnce, IncrementAsync, Apply: one per
  // call, whatever its ops) refused for what they asked, having written
  // nothing: InvalidArgument or OutOfRange (a bad argument, a batch over
  // kMaxBatchOps, a batch's deltas summing beyond int64, an event time past
  // retention), NotFound (no such counter) or NotSupported (a read-only
  // database, IncrementAsync of an outbox counter). Failures of the
  // database are not counted: IOError, Corruption, and Busy for a full
  // outbox (Options::outbox_max_entries).
  uint64_t rejected = 0;
  // A read-only Db only: the write calls it refused itself (counted as
  // `rejected` is), which its writer never sees. Not published; 0 on a
  // writer, whose refusals are all in `rejected`.
  uint64_t reader_rejected = 0;

  // Roll-ups (Db::ReadCached), judged by the writer: of the counters with
  // increments applied by the writer since its last roll-up of them (none
  // since it opened counts as a roll-up at its open, or the counter's
  // creation if later), how many there are, the most such increments one
  // of them has, and the longest time since one of them was rolled up, in
  // ms of Options::clock. All 0 when every counter's cached total is
  // current.
  uint64_t rollups_behind = 0;
  uint64_t rollup_lag_increments = 0;
  int64_t rollup_lag_ms = 0;
  // tally's group commit (Options::sync = true; wal/group_commit.h): the
  // synced group writes so far, the commits they held (members per group on
  // average: group_members / group_commits) and the most one held. All 0
  // with sync = false, where RocksDB groups unsynced writes itself.
  uint64_t group_commits = 0;
  uint64_t group_members = 0;
  uint64_t group_largest = 0;
  // Entries in the shards family's memtables (RocksDB's
  // rocksdb.num-entries-active-mem-table + num-entries-imm-mem-tables):
  // the merge operands (and folded values) not yet flushed, an upper bound
  // on what exact reads fold beyond one value per shard before the next
  // flush. Operands already flushed to files and not yet compacted are not
  // counted (tally::PendingOperands counts one counter's exactly).
  uint64_t pending_operands = 0;

  // Where these figures come from (see StatsOrigin).
  StatsOrigin origin;
};

// Storage figures of one column family.
struct FamilyStats {
  std::string name;             // "meta", "shards", ... (docs/format.md)
  uint64_t sst_bytes = 0;       // live SST files
  uint64_t memtable_bytes = 0;  // active and immutable memtables
  uint64_t estimated_keys = 0;  // RocksDB's estimate
  uint64_t l0_files = 0;
};

// A keyed counter's number of keys, estimated (DbStats::keyed_counters):
// the key count its last roll-up stored with its top list (TopKeysResult::
// key_count), exact as of that roll-up and one Get to read, never a scan.
// RocksDB's own estimate (rocksdb.estimate-num-keys) is per column family,
// not per key range, and counts every shard, bucket and pending operand of
// a key, so it cannot give keys per counter (docs/design.md, "Keys per
// keyed counter").
struct KeyedCounterStats {
  std::string name;
  // False until the counter is first rolled up (RollupNow, the roll-up
  // worker, TopKeys); `keys` and the times are 0 then.
  bool rolled_up = false;
  uint64_t keys = 0;     // keys with a stored value as of as_of_ms
  int64_t as_of_ms = 0;  // Options::clock when the roll-up read them
  int64_t lag_ms = 0;    // now - as_of_ms (>= 0)
  // Increments applied and keys deleted since the roll-up, counted in this
  // process (as CachedValue::lag_increments): each makes or removes at
  // most one key, so the count now lies in keys +- changes_since. Known
  // only in a writer that has rolled the counter up itself.
  uint64_t changes_since = 0;
  bool changes_since_known = false;
};

// What tally::GetDbStats reports: this process's engine counters and the
// RocksDB figures that matter for a counter database.
struct DbStats {
  // Counted by this process since Open (a writer), or the figures the
  // writer last published (a read-only Db): engine.origin says which.
  EngineStats engine;
  // Every column family the database has open, in docs/format.md's order
  // (a read-only open of a database no writer of this version has opened
  // lacks the families added since).
  std::vector<FamilyStats> families;
  // The figures of the family named `name`, or null.
  const FamilyStats* Family(const std::string& name) const {
    for (const FamilyStats& f : families) {
      if (f.name == name) return &f;
    }
    return nullptr;
  }
  uint64_t block_cache_usage_bytes = 0;
  uint64_t block_cache_capacity_bytes = 0;
  // RocksDB's write throttling: the delayed rate now (0: none) and whether
  // writes are stopped.
  uint64_t delayed_write_rate = 0;
  bool writes_stopped = false;
  // RocksDB's count of background errors, and the error this Db latched
  // (empty when none).
  uint64_t background_errors = 0;
  std::string latched_error;
  // Every keyed counter's keys, estimated, in name order (one Get each).
  std::vector<KeyedCounterStats> keyed_counters;
};

// Checks every stored record of every column family (meta, shards, events,
// rollups, outbox) and the invariants between them from one consistent
// view: every record decodes as docs/format.md specifies (header, counter
// records, cursors, roll-ups, outbox entries ...); every shard key belongs to a
// known counter and a shard below its count, and its value decodes (and has not
// overflowed); every marker decodes, matches its key and sits on the
// shard its event id hashes to; and for each counter that never had a
// plain increment, the sum of its shards equals the sum of its markers'
// deltas (judged by the counter's flags as the snapshot has them). A
// read-only Db checks its current point (see Db::Refresh). Findings go to
// `report` (report->ok() when none); the Status is an error only when the
// check itself could not run (I/O; Busy on a read-only Db whose whole-file
// checksum failed while the writer changed its files: Refresh and verify
// again; NotSupported on a read-only Db opened without all of
// Options::reads).
// `progress`: records checked of RocksDB's estimate of what the families
// hold (after a first pass over every file's checksums, which it does not
// report).
TALLY_EXPORT Status Verify(Db& db, VerifyReport* report,
                           const ProgressFn& progress = nullptr);

// Flushes memtables and compacts every column family (meta, shards, events,
// rollups, outbox: folds all operands, drops deleted counters' keys). Writers
// only: NotSupported read-only. `progress`: bytes (SST and memtable) of the
// families compacted so far, of all of them, reported before each family and at
// the end.
TALLY_EXPORT Status Compact(Db& db, const ProgressFn& progress = nullptr);

// Engine-wide figures. A writer: counted by this Db since it was opened,
// taken now (origin.source kThisProcess). A read-only Db: the figures its
// writer last published (Options::stats_publish_interval_ms), read from the
// database at each call, with their source, writer pid, as-of time, age
// and whether that writer still runs (origin.source kWriter); or all 0 with
// origin.source kNone and origin.problem saying why (none published, or a
// damaged file). Never fails: what went wrong is in origin.problem.
TALLY_EXPORT EngineStats GetStats(Db& db);

// Engine figures (as GetStats) plus memory, disk and throttling figures
// from RocksDB as this Db sees them.
TALLY_EXPORT Result<DbStats> GetDbStats(Db& db);

// Merge operands not yet folded, summed over the counter's shards: how
// much work an exact read does beyond one value per shard.
TALLY_EXPORT Result<uint64_t> PendingOperands(Db& db, std::string_view counter);

// The storage engine this library is built on, for version lines and bug
// reports: "RocksDB MAJOR.MINOR.PATCH".
TALLY_EXPORT const char* StorageEngineVersion();

// Runs RocksDB's ldb tool (its LDBTool, the same arguments:
// `--db=DIR [--column_family=shards] scan|get|dump_wal|manifest_dump|...`)
// with tally's merge operator and column families known to it, so its
// reads fold merge operands as the engine does. Returns ldb's exit code (0
// ok, 1 failed); ldb prints its output and errors itself. For tools
// (counterctl ldb): it registers tally's objects in RocksDB's process-wide
// ObjectLibrary.
TALLY_EXPORT int RunLdb(int argc, char** argv);

}  // namespace tally

#endif  // TALLY_ADMIN_H_
