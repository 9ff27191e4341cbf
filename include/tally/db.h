// Db: an open tally database.
//
// Ownership: Db::Open hands the caller a std::unique_ptr<Db>; destroying it
// closes the database (pending writes already acknowledged stay durable to
// the level Options::sync promised). A Db may not be copied.
//
// Thread safety: every method is safe to call from many threads at once
// without external synchronization. No global lock is taken on the write
// path: plain increments are blind RocksDB merges; once-increments lock one
// stripe per event id around the check and the write.
//
// Retries: only a once-increment is safe to retry after an error or a
// timeout. A plain increment whose call failed with IOError may or may not
// have been counted: its outcome is unknown.
//
// One process: the RocksDB LOCK file makes one process the writer. Opening a
// database another process holds returns Busy naming the path; other
// processes read it with Options::read_only.

#ifndef TALLY_DB_H_
#define TALLY_DB_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tally/backup.h"
#include "tally/batch.h"
#include "tally/options.h"
#include "tally/status.h"
#include "tally/types.h"

namespace tally {

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
};

// What IncrementAsync calls back with.
using IncrementCallback = std::function<void(const Result<IncrementResult>&)>;

class Db {
 public:
  // Opens (or, with create_if_missing, creates) the database at `path`.
  // Creation is atomic for the user: until the new database is whole (every
  // column family and the header durable) its directory holds the marker
  // file TALLY-CREATING; such a directory, left by a creation killed
  // midway, is NotFound to opens without create_if_missing and to
  // read-only opens, and the next creating open discards its contents and
  // creates the database afresh. A directory the caller made (empty) is
  // used in place and keeps its mode.
  // Errors: Busy when another process holds it, or is creating it;
  // InvalidArgument when `path` holds something that is not a tally
  // database; NotSupported when the database was written by a newer
  // format; IOError from the file system.
  static Status Open(const Options& options, const std::string& path,
                     std::unique_ptr<Db>* db);

  Db() = default;
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;
  virtual ~Db() = default;

  // ---- counters ----
  // AlreadyExists when the name is taken; InvalidArgument on a bad name or
  // shard count. A new counter gets a new id, so re-creating a deleted name
  // starts from zero with no markers.
  virtual Status CreateCounter(std::string_view name,
                               const CounterSpec& spec) = 0;
  virtual Result<CounterInfo> DescribeCounter(std::string_view name) = 0;
  // All counters, ordered by name.
  virtual Result<std::vector<CounterInfo>> ListCounters() = 0;
  // Removes the counter, its shards and its markers.
  virtual Status DeleteCounter(std::string_view name) = 0;

  // ---- writes ----
  // Adds `delta` to one shard. The outcome is always kApplied.
  virtual Result<IncrementResult> Increment(
      std::string_view counter, int64_t delta,
      const IncrementOptions& options = {}) = 0;

  // Increment, asynchronously: returns at once; `done` runs exactly once
  // with what Increment would have returned, after the increment is
  // committed (durable too with Options::sync) and readable, on tally's
  // notifier thread (inline, before IncrementAsync returns, when the
  // increment is refused up front or Options::sync is false). One thread
  // can keep many durable increments in flight; they share fsyncs
  // (docs/durability.md). `done` runs holding no lock of tally's, so it may
  // call any method of this Db, CreateCounter and DeleteCounter included;
  // it must not throw or destroy the Db. On the notifier thread, later
  // callbacks wait while `done` runs (commits do not), and an
  // IncrementAsync from `done` never waits for room. With many increments
  // in flight (65536 with sync), IncrementAsync waits for room before it
  // does anything else. NotSupported for counters with an outbox.
  virtual void IncrementAsync(std::string_view counter, int64_t delta,
                              IncrementCallback done,
                              const IncrementOptions& options = {}) = 0;

  // Adds `delta` once per (counter, event_id): kApplied the first time,
  // kDuplicate for a redelivery with the same delta, kConflict (nothing
  // changes) for one with another delta. Marker and shard operand are
  // committed in one atomic write. The marker is looked up first: found,
  // even past its expiry, it answers kDuplicate/kConflict with the shard it
  // holds, whatever time the call claims (also into a bucket past
  // retention). Only a new event is judged by time: on a counter with a
  // dedupe window one older than the window is kOutsideWindow (not
  // counted); one into a bucket past retention is InvalidArgument.
  virtual Result<IncrementResult> IncrementOnce(
      std::string_view counter, std::string_view event_id, int64_t delta,
      const OnceOptions& options = {}) = 0;

  // Commits every operation of `batch` in one atomic write; `results` gets
  // one entry per operation, in order. The batch is validated whole first:
  // one bad operation (unknown counter, bad id, overflowing sum) refuses the
  // batch with InvalidArgument/NotFound naming its index, and nothing is
  // written. Copies of one (counter, event_id) inside a batch count once,
  // decided as if the ops came one after another (the first copy accepted
  // counts; later ones are duplicates or conflicts of it, with its shard); a
  // stored marker answers as in IncrementOnce. A new event or a plain
  // increment into a bucket past retention refuses the batch.
  // Plain increments without an affinity key under the random policy all go
  // to one shard per (batch, counter), chosen at random: the batch then
  // folds into one merge per counter.
  virtual Status Apply(const Batch& batch,
                       std::vector<IncrementResult>* results) = 0;

  // ---- reads ----
  // The sum of all shards, read from one consistent snapshot. OutOfRange
  // when the sum lies outside int64 (shards keep their exact sums beyond
  // int64, so such a counter reads again once later increments bring it
  // back; docs/format.md) or a shard is in the sticky overflowed state;
  // Corruption when a stored value is malformed (the message names the key).
  virtual Result<int64_t> ReadExact(std::string_view counter,
                                    const ReadOptions& options = {}) = 0;
  // A bucketed counter's sum over the buckets overlapping [from_ms, to_ms)
  // (ms since the Unix epoch, UTC; from < to), from one consistent view.
  // Buckets past the counter's retention count as empty, whether or not
  // compaction has dropped them yet. "Today" on a day-bucketed counter is
  // [UTC midnight, +24 h); one bucket is [start, start + width).
  // InvalidArgument for a counter without buckets. (ReadExact of a bucketed
  // counter sums every retained bucket.)
  virtual Result<int64_t> ReadRange(std::string_view counter, int64_t from_ms,
                                    int64_t to_ms,
                                    const ReadOptions& options = {}) = 0;
  // Each shard's value, index 0..shards-1, from one consistent snapshot (a
  // bucketed counter's: summed over its retained buckets). OutOfRange when
  // one of them lies outside int64.
  virtual Result<std::vector<int64_t>> ShardCounts(
      std::string_view counter, const ReadOptions& options = {}) = 0;
  // The number of idempotency markers the counter holds (expired ones, not
  // yet dropped by compaction, are not counted; nor by ListEvents/GetEvent).
  virtual Result<uint64_t> CountEvents(std::string_view counter) = 0;

  // ---- roll-ups: cached totals ----
  // The counter's cached total (one Get, no shard scan) with its age and
  // lag. On a writable database a counter never rolled up is rolled up
  // first; a read-only one returns NotFound for it. The value is exact as of
  // `as_of_ms`; ReadExact gives the current one.
  virtual Result<CachedValue> ReadCached(std::string_view counter) = 0;
  // Rolls up one counter, or every counter when `counter` is empty, now.
  // NotSupported on a read-only database. Counters with no increment since
  // their last roll-up in this process are skipped.
  virtual Status RollupNow(std::string_view counter = {}) = 0;

  // Checks every stored record of every column family (meta, shards,
  // events, rollups, outbox) and the invariants between them from one
  // consistent view: every record decodes as docs/format.md specifies
  // (header, counter records, cursors, roll-ups, outbox entries ...);
  // every shard key belongs to a known
  // counter and a shard below its count, and its value decodes (and has not
  // overflowed); every marker decodes, matches its key and sits on the
  // shard its event id hashes to; and for each counter that never had a
  // plain increment, the sum of its shards equals the sum of its markers'
  // deltas (judged by the counter's flags as the snapshot has them). A
  // read-only Db checks its current point (see Refresh). Findings go to
  // `report` (report->ok() when none); the Status is an error only when the
  // check itself could not run (I/O; Busy on a read-only Db whose last
  // Refresh failed mid-way, or whose whole-file checksum failed while the
  // writer changed its files: Refresh and verify again).
  virtual Status Verify(VerifyReport* report) = 0;

  // ---- outbox: the change feed of counters with CounterSpec::outbox ----
  // Entries with seq > after_seq, in seq order, at most `limit`
  // (1..kMaxOutboxRead), never skipping one still committing: a writer
  // returns only entries whose seq and every smaller one are settled; a
  // read-only instance returns them while their seqs follow on, stepping
  // over a missing seq only when its view proves it dead (an entry reserved
  // after it settled, the recorded watermark or the acknowledged cursor).
  // A failed commit's seqs are proven dead by the writer's next entry, or
  // at once, or at its next open (docs/sync.md).
  virtual Result<std::vector<OutboxEntry>> ReadOutbox(uint64_t after_seq,
                                                      size_t limit) = 0;
  // Deletes every entry with seq <= through_seq (durably). Idempotent;
  // InvalidArgument beyond the last settled seq. Writers only.
  virtual Status AckOutbox(uint64_t through_seq) = 0;
  virtual Result<OutboxStatus> GetOutboxStatus() = 0;
  // The database's id: 32 hex characters, random at creation, copied by
  // checkpoints and backups (and so shared by copies: SyncOutbox uses it
  // only for per-device hub shards; entry identities are the origins).
  virtual Result<std::string> DatabaseId() = 0;

  // Read-only databases: catch up with the writer (new counters, deletes,
  // increments) so later reads see a more recent consistent point: one
  // point of the writer's history in every column family (each committed
  // batch whole or absent), never older than the previous one. Reads in
  // progress finish first; no read sees a Refresh half way. Busy when the
  // writer deleted write-ahead logs during each of several attempts (it
  // flushes faster than an open completes): the previous point is kept,
  // unless the failed catch-up had moved it, in which case reads are not
  // known to be one point (Verify returns Busy) until a Refresh succeeds
  // (docs/design.md, readers in other processes). A writer's Db is always
  // current: OK, nothing to do.
  virtual Status Refresh() = 0;

  // Markers of a counter, in event-id byte order (see ListEventsOptions).
  virtual Result<std::vector<MarkerInfo>> ListEvents(
      std::string_view counter, const ListEventsOptions& options) = 0;
  // The marker of one event; NotFound when the event was never counted.
  virtual Result<MarkerInfo> GetEvent(std::string_view counter,
                                      std::string_view event_id) = 0;
  // Merge operands not yet folded, summed over the counter's shards: how
  // much work an exact read does beyond one value per shard.
  virtual Result<uint64_t> PendingOperands(std::string_view counter) = 0;

  // Flushes memtables and compacts every column family (meta, shards,
  // events, rollups, outbox: folds all operands, drops deleted counters'
  // keys). Writers only: NotSupported read-only.
  virtual Status Compact() = 0;
  // Writes a consistent copy of the database to `dir` (which must not
  // exist) with RocksDB's Checkpoint: hard links where possible. The copy
  // opens as an ordinary tally database. Works read-only too (the copy then
  // holds what the writer had committed when the instance last caught up,
  // its WAL included).
  virtual Status Checkpoint(const std::string& dir) = 0;

  // Adds a backup of this database to `backup_dir` (created if missing;
  // see tally/backup.h) and returns its description. Writers and read-only
  // instances alike.
  virtual Result<BackupInfo> CreateBackup(const std::string& backup_dir) = 0;

  // ---- import (restoring an export; see counterctl export/import) ----
  // Creates a counter as exported, with its shard values and markers
  // (see CounterImport), whole or not at all: the values and markers are
  // written first, under a new counter id that no counter record names yet
  // (invisible to every read, increment and Verify; several writes when
  // there are more than kMaxBatchOps), and the counter appears, complete,
  // in the one durable write that adds its record. A failure, or a crash,
  // before that write leaves no counter: its partial data is removed at
  // once, or by the next read-write open after a crash, so a rerun of the
  // same import simply imports it again. AlreadyExists when the name is
  // taken (also by a counter created while the import ran); InvalidArgument,
  // writing nothing, for a malformed value or marker, a marker not on its
  // event id's shard, or an event id given twice; NotSupported for a
  // non-zero shard value of a bucketed counter.
  virtual Status ImportCounter(const CounterImport& counter) = 0;
  // Restores exported outbox entries (at most kMaxBatchOps, one synced
  // atomic write) with their identity, origin and origin_seq, so a hub
  // dedupes any that another copy already synced; `seq` is ignored: they
  // take this database's next seqs, in the given order, and count against
  // Options::outbox_max_entries. Each counter must exist with
  // CounterSpec::outbox (their deltas are in its imported shard values,
  // nothing is counted again). InvalidArgument names the first bad entry
  // (no outbox, bad delta or event id, malformed identity, one identity
  // twice); nothing is written then.
  virtual Status ImportOutbox(const std::vector<OutboxEntry>& entries) = 0;

  virtual EngineStats GetStats() const = 0;
  // Engine counters plus memory, disk and throttling figures from RocksDB,
  // per column family for every family the database has.
  virtual Result<DbStats> GetDbStats() = 0;
  // The path this Db was opened at.
  virtual const std::string& path() const = 0;
};

}  // namespace tally

#endif  // TALLY_DB_H_
