// Administration of an open database: verify, compact, statistics and
// diagnostics. Free functions on a Db, as RocksDB's and LevelDB's tools sit
// beside their DB class; the data path stays on Db (tally/db.h).
//
// Thread safety: each may run while other threads use the same Db.
// Ownership: each borrows the Db for the call.

#ifndef TALLY_ADMIN_H_
#define TALLY_ADMIN_H_

#include <cstdint>
#include <string_view>

#include "tally/db.h"
#include "tally/status.h"
#include "tally/types.h"

namespace tally {

// Checks every stored record of every column family (meta, shards, events,
// rollups, outbox) and the invariants between them from one consistent
// view: every record decodes as docs/format.md specifies (header, counter
// records, cursors, roll-ups, outbox entries ...); every shard key belongs to a known
// counter and a shard below its count, and its value decodes (and has not
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
Status Verify(Db& db, VerifyReport* report,
              const ProgressFn& progress = nullptr);

// Flushes memtables and compacts every column family (meta, shards, events,
// rollups, outbox: folds all operands, drops deleted counters' keys). Writers only: NotSupported read-only.
// `progress`: bytes (SST and memtable) of the families compacted so far, of
// all of them, reported before each family and at the end.
Status Compact(Db& db, const ProgressFn& progress = nullptr);

// Engine-wide figures. A writer: counted by this Db since it was opened,
// taken now (origin.source kThisProcess). A read-only Db: the figures its
// writer last published (Options::stats_publish_interval_ms), read from the
// database at each call, with their source, writer pid, as-of time, age
// and whether that writer still runs (origin.source kWriter); or all 0 with
// origin.source kNone and origin.problem saying why (none published, or a
// damaged file). Never fails: what went wrong is in origin.problem.
EngineStats GetStats(Db& db);

// Engine figures (as GetStats) plus memory, disk and throttling figures
// from RocksDB as this Db sees them.
Result<DbStats> GetDbStats(Db& db);

// Merge operands not yet folded, summed over the counter's shards: how
// much work an exact read does beyond one value per shard.
Result<uint64_t> PendingOperands(Db& db, std::string_view counter);

// The storage engine this library is built on, for version lines and bug
// reports: "RocksDB MAJOR.MINOR.PATCH".
const char* StorageEngineVersion();

// Runs RocksDB's ldb tool (its LDBTool, the same arguments:
// `--db=DIR [--column_family=shards] scan|get|dump_wal|manifest_dump|...`)
// with tally's merge operator and column families known to it, so its
// reads fold merge operands as the engine does. Returns ldb's exit code (0
// ok, 1 failed); ldb prints its output and errors itself. For tools
// (counterctl ldb): it registers tally's objects in RocksDB's process-wide
// ObjectLibrary.
int RunLdb(int argc, char** argv);

}  // namespace tally

#endif  // TALLY_ADMIN_H_
