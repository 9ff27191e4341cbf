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
//
// Db holds the data path (increments, batches, reads, roll-ups, markers) and
// the catalog (create, describe, list, delete counters). The other audiences
// have their own headers of free functions taking a Db&: tally/admin.h
// (verify, compact, stats), tally/checkpoint.h and tally/backup.h (copies),
// tally/import.h (restoring an export), tally/outbox.h (the change feed)
// and tally/sync.h (edge to hub).

#ifndef TALLY_DB_H_
#define TALLY_DB_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tally/batch.h"
#include "tally/export.h"
#include "tally/options.h"
#include "tally/status.h"
#include "tally/types.h"

namespace tally {

// What IncrementAsync calls back with.
using IncrementCallback = std::function<void(const Result<IncrementResult>&)>;

class BackendOps;  // tally/backend.h
namespace internal {
class BackendAccess;
}  // namespace internal

class TALLY_EXPORT Db {
 public:
  // Opens (or, with create_if_missing, creates) the database `target`
  // names; the target chooses the backend. A directory path (anything
  // without a "scheme://" prefix) is a database of the local engine, in
  // that directory. "redis://[USER@]HOST:PORT[,HOST:PORT...][/NAMESPACE]
  // [?replicas=N&wait_ms=T&read_from=replicas]" names a database on a
  // Redis Cluster
  // (docs/cluster.md: what it offers, what it answers NotSupported, and
  // where the password comes from: never the target); "rediss://" (TLS) is
  // NotSupported. Any other "scheme://" is InvalidArgument naming the
  // scheme, never taken for a directory name. (A scheme is RFC 3986's: a
  // letter, then letters, digits, '+', '-' or '.'; matched ignoring case.
  // "/data/a://b" is a path.) A password in the target is not repeated in
  // a message.
  // The local engine's creation is atomic for the user: until the new
  // database is whole (every column family and the header durable) its
  // directory holds the marker file TALLY-CREATING; such a directory, left
  // by a creation killed midway, is NotFound to opens without
  // create_if_missing and to read-only opens, and the next creating open
  // discards its contents and creates the database afresh. A directory the
  // caller made (empty) is used in place and keeps its mode.
  // Errors: Busy when another process holds it, or is creating it;
  // InvalidArgument when `target` is empty or its directory holds
  // something that is not a tally database; NotSupported when the database
  // was written by a newer format; IOError from the file system.
  static Status Open(const Options& options, const std::string& target,
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
  // Every write and read names a CounterRef: a named counter, or one key of
  // a keyed counter. A keyed counter refuses a call without a key, a named
  // one a call with a key (InvalidArgument naming the counter). Keys come
  // into being with their first increment. A once-increment's marker
  // belongs to (counter, key, event id): one event id counts once in each
  // key.
  // Adds `delta` to one shard. The outcome is always kApplied.
  virtual Result<IncrementResult> Increment(
      CounterRef counter, int64_t delta,
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
  virtual void IncrementAsync(CounterRef counter, int64_t delta,
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
      CounterRef counter, std::string_view event_id, int64_t delta,
      const OnceOptions& options = {}) = 0;

  // IncrementOnce, asynchronously: returns at once; `done` runs exactly once
  // with what IncrementOnce would have returned (kApplied, kDuplicate,
  // kConflict, kOutsideWindow, or the refusal), with IncrementAsync's
  // contract: after the once-increment is committed (durable too with
  // Options::sync) and readable, on the notifier thread, holding no lock
  // of tally's; inline, before IncrementOnceAsync returns, when the answer
  // needs no write (a refusal, an event outside the window, a duplicate or
  // conflict of a stored marker) or Options::sync is false. The same room
  // as IncrementAsync (waited for first). Copies of one event id in flight
  // at once count once, whichever threads submit them: the first copy
  // decided counts, and a later copy submitted while it is still queued is
  // decided against it (kDuplicate or kConflict, with its shard) without
  // waiting, its `done` running right after the first copy's; if the first
  // copy's commit fails, such a copy gets the same error (the event was not
  // counted: retry it). An IncrementOnce or Apply holding a copy of an
  // event that is queued waits for that commit. NotSupported for counters
  // with an outbox.
  virtual void IncrementOnceAsync(CounterRef counter, std::string_view event_id,
                                  int64_t delta, IncrementCallback done,
                                  const OnceOptions& options = {}) = 0;

  // Commits every operation of `batch` in one atomic write; `results` gets
  // one entry per operation, in order, only when Apply returns OK: on any
  // error it is left as it was. Each operation is checked as the single
  // call would check it, in the same order and with the same messages.
  // The batch is validated whole first: one bad operation (unknown counter,
  // bad id, overflowing sum) refuses the batch with
  // InvalidArgument/NotFound/OutOfRange naming its index, and nothing is
  // written. Copies of one (counter, event_id) inside a batch count once,
  // decided as if the ops came one after another (the first copy accepted
  // counts; later ones are duplicates or conflicts of it, with its shard); a
  // stored marker answers as in IncrementOnce. A new event or a plain
  // increment into a bucket past retention refuses the batch.
  // Plain increments without an affinity key under the random policy all go
  // to one shard per (batch, counter), chosen at random: the batch then
  // folds into one merge per counter.
  // Strict counters (CounterSpec::bounds): ops of one key are checked one
  // after another against the value the earlier ones leave (a quota's: in
  // each op's own window, by its event time or now); an op that
  // would cross a bound (not saturating) refuses the whole batch with
  // OutOfRange naming its index, the key, the bound and the value, and
  // nothing is written (no refusal is remembered: the batch is not an
  // event). A copy of an event a single call refused earlier is answered
  // kRefused and does not refuse the batch (its answer was given before).
  virtual Status Apply(const Batch& batch,
                       std::vector<IncrementResult>* results) = 0;

  // Sets the value of a counter (one key of a keyed counter; a bucketed
  // counter's: of the bucket holding the reset's event time, by default now;
  // a quota's window then) to `value`,
  // once per (counter, key, reset_id): kApplied the first time, with
  // IncrementResult::applied the delta it took and value `value`;
  // kDuplicate for a redelivery with the same value (nothing changes, the
  // first answer again), kConflict for one with another value or for an
  // id an increment already used (a reset id is an event id of its key:
  // one id is one increment or one reset). A reset is a once-increment of
  // `value` minus the value read under the key's lock (docs/design.md,
  // "Reset"): markers of earlier events stay, so a redelivered event from
  // before the reset is still a duplicate; roll-ups, the outbox and a hub
  // see that delta. Earlier buckets keep their history. A plain increment
  // of a sharded counter that commits while the reset runs is kept on top
  // of `value`. On a counter with a dedupe window the reset must carry its
  // event time (ResetOptions), and one older than now - window is
  // kOutsideWindow and changes nothing, as a once-increment's: a late
  // redelivery whose marker has expired is never applied again.
  // InvalidArgument for a value outside a strict counter's bounds or a
  // missing event time; OutOfRange when value minus the current value is
  // beyond int64.
  virtual Result<IncrementResult> Reset(CounterRef counter,
                                        std::string_view reset_id,
                                        int64_t value = 0,
                                        const ResetOptions& options = {}) = 0;

  // ---- reservations: units held for a while (stock during checkout) ----
  // Strict counters with a minimum and no time buckets only (else
  // InvalidArgument). A reservation (one key's, by its id) holds `units`
  // (1..kMaxDelta) for `hold_for_ms` (1..kMaxHoldMs) of the engine's
  // clock: while held, the units count against the minimum for every
  // other op of the key (a take may only use what is available: the value
  // less the held units), but the value itself does not move until the
  // reservation is committed, which takes the units for good; a release,
  // or the hold running out, gives them back without a write. Every call is
  // idempotent by (counter, key, reservation_id); each answers the
  // reservation's state after it (ReservationResult). docs/design.md,
  // "Reservations".
  // Reserve: kApplied and kHeld; kRefused and kRefused when fewer than
  // `units` are available (remembered: a retry answers kDuplicate with
  // state kRefused and holds nothing); a retry of a known id: kDuplicate with
  // its state now (kHeld, kExpired once its hold ran out, kCommitted,
  // kReleased, kRefused), or kConflict when `units` differ (nothing changes).
  virtual Result<ReservationResult> Reserve(CounterRef counter,
                                            std::string_view reservation_id,
                                            int64_t units,
                                            int64_t hold_for_ms) = 0;
  // Takes a held reservation's units from the value: kApplied and
  // kCommitted; kDuplicate for a committed one; kRefused for one that is
  // released, expired (its hold ran out first: nothing is taken) or was
  // refused. NotFound for an unknown id.
  virtual Result<ReservationResult> CommitReservation(
      CounterRef counter, std::string_view reservation_id) = 0;
  // Gives a held reservation's units back: kApplied and kReleased;
  // kDuplicate for a released, expired or refused one (nothing is held);
  // kRefused for a committed one. NotFound for an unknown id.
  virtual Result<ReservationResult> ReleaseReservation(
      CounterRef counter, std::string_view reservation_id) = 0;
  // One reservation as stored now; NotFound for an unknown id.
  virtual Result<ReservationInfo> GetReservation(
      CounterRef counter, std::string_view reservation_id) = 0;
  // A strict counter's (key's) value, what its open reservations hold
  // now and what is available to take, from one consistent view. Works on
  // read-only databases.
  virtual Result<HeldValue> ReadHeld(CounterRef counter,
                                     const ReadOptions& options = {}) = 0;

  // ---- claims: a side effect done once (docs/claims.md) ----
  // A claim (by `key`, 1..kMaxClaimKeyBytes of UTF-8 without control
  // characters) is a lease with a fencing token and a permanent
  // completion marker: the Redis `SET key NX EX` lock, with what it lacks.
  // Claim asks for `key` for `holder` (1..kMaxHolderBytes, one worker) for
  // `lease_ms` (1..kMaxLeaseMs) of the engine's clock (Options::clock):
  // kAcquired with a new token (the previous grant's plus one; 1 first)
  // when it is new, released, or its lease ran out; kAcquired with the
  // same token and the lease renewed (repeated) when `holder` holds it;
  // kBusy (holder, lease_until_ms) when another holder's lease runs;
  // kDone (token, ended_at_ms, result) once completed: the side effect
  // was done, whoever asks.
  virtual Result<ClaimResult> Claim(std::string_view key,
                                    std::string_view holder,
                                    int64_t lease_ms) = 0;
  // Completes the claim `token` holds, recording `result`
  // (0..kMaxClaimResultBytes of UTF-8) for good, and applies `counts` (a
  // Batch, checked and answered as Db::Apply checks it) in the same atomic
  // write: the completion and its counts are both committed or neither.
  // kCompleted when `token` is the claim's grant and it is held (also
  // after its lease ran out, as long as nobody was granted it since: the
  // token, not the clock, decides); kCompleted, repeated, when this token
  // completed it already (nothing is counted again); kStaleToken when
  // another grant replaced it, or it was released, or another token
  // completed it (nothing changes). NotFound for a key never claimed;
  // InvalidArgument for a token never granted (0, or past the latest);
  // a refused `counts` batch returns its error and the claim stays held.
  virtual Result<ClaimResult> CompleteClaim(std::string_view key,
                                            uint64_t token,
                                            std::string_view result,
                                            const Batch& counts = Batch()) = 0;
  // Gives up the claim `token` holds without completing it (a worker that
  // failed; an operator freeing a stuck claim): kReleased (repeated when
  // this token released it already); kStaleToken when another grant
  // replaced it; kDone when it was completed (nothing changes). The next
  // Claim acquires it with a higher token. NotFound and InvalidArgument as
  // CompleteClaim.
  virtual Result<ClaimResult> ReleaseClaim(std::string_view key,
                                           uint64_t token) = 0;
  // One claim as stored (state kExpired for a held one whose lease ran
  // out); NotFound for a key never claimed. Works on read-only databases
  // opened with kReadMarkers.
  virtual Result<ClaimInfo> GetClaim(std::string_view key) = 0;
  // Claims in key byte order from one snapshot, filtered (see
  // ListClaimsOptions). Works on read-only databases as GetClaim.
  virtual Result<std::vector<ClaimInfo>> ListClaims(
      const ListClaimsOptions& options) = 0;

  // ---- reads ----
  // The sum of all shards, read from one consistent snapshot. OutOfRange
  // when the sum lies outside int64 (shards keep their exact sums beyond
  // int64, so such a counter reads again once later increments bring it
  // back; docs/format.md) or a shard is in the sticky overflowed state;
  // Corruption when a stored value is malformed (the message names the key).
  // A bucketed counter sums its retained buckets; InvalidArgument naming
  // kMaxReadBuckets when there are more than that (limits.h): the read is
  // refused, never cut short; read it in ranges (ReadRange).
  virtual Result<int64_t> ReadExact(CounterRef counter,
                                    const ReadOptions& options = {}) = 0;
  // A bucketed counter's sum over the buckets overlapping [from_ms, to_ms)
  // (ms since the Unix epoch, UTC; from < to), from one consistent view.
  // Buckets past the counter's retention count as empty, whether or not
  // compaction has dropped them yet. "Today" on a day-bucketed counter is
  // [UTC midnight, +24 h); one bucket is [start, start + width).
  // InvalidArgument for a counter without buckets, and for a range holding
  // more than kMaxReadBuckets retained buckets (read it in parts). (ReadExact
  // of a bucketed counter sums every retained bucket.)
  virtual Result<int64_t> ReadRange(CounterRef counter, int64_t from_ms,
                                    int64_t to_ms,
                                    const ReadOptions& options = {}) = 0;
  // Each shard's value, index 0..shards-1, from one consistent snapshot (a
  // bucketed counter's: summed over its retained buckets, refused as
  // ReadExact is beyond kMaxReadBuckets). OutOfRange when one of them lies
  // outside int64.
  virtual Result<std::vector<int64_t>> ShardCounts(
      CounterRef counter, const ReadOptions& options = {}) = 0;

  // A quota's window now (a strict counter with time buckets; one key of a
  // keyed one): its use, what an increment may still take, and when it
  // ends, by the engine's clock (Options::clock, never stepping back), from
  // one consistent view. Works on read-only databases. InvalidArgument for
  // a counter that is not a quota; NotFound; Corruption as ReadExact.
  virtual Result<QuotaState> ReadQuota(CounterRef counter,
                                       const ReadOptions& options = {}) = 0;

  // ---- keyed counters (CounterSpec::keyed) ----
  // The values of `keys` (1..kMaxReadKeys of them) of one keyed counter,
  // in the order given, from one consistent snapshot: one MultiGet of every
  // key's shards (a bucketed counter: one scan per key, in that snapshot).
  // A key never incremented (or deleted) reads 0; a key may repeat.
  // InvalidArgument naming the index of a bad key; NotFound; OutOfRange
  // and Corruption as ReadExact.
  virtual Result<std::vector<int64_t>> ReadKeys(
      std::string_view counter, const std::vector<std::string_view>& keys,
      const ReadOptions& options = {}) = 0;
  // Keys of a keyed counter with their values, in key byte order from one
  // snapshot (see ListKeysOptions): it reads the keys it returns and no
  // others. A key whose increments were deleted is gone; one whose
  // increments sum to 0 is listed with 0.
  virtual Result<std::vector<KeyValue>> ListKeys(
      std::string_view counter, const ListKeysOptions& options) = 0;
  // The `n` (1..kMaxTopKeys) keys with the largest values. By default from
  // the counter's roll-up (one Get; as of its as_of_ms, like ReadCached: a
  // writable database rolls up a counter never rolled up first, a
  // read-only one answers NotFound), else (TopKeysOptions::exact) by a scan
  // of every key now. The roll-up keeps the top kMaxTopKeys and the total
  // (ReadCached of a keyed counter) of a scan of the whole counter; the
  // worker rolls a keyed counter up at most once per nine times its last
  // scan took (docs/design.md, "Keyed counters").
  virtual Result<TopKeysResult> TopKeys(std::string_view counter, size_t n,
                                        const TopKeysOptions& options = {}) = 0;
  // Removes one key of a keyed counter: its shards, markers and
  // reservations (range deletes, in one atomic write). Its later increments
  // start from 0 and a redelivered once-increment counts again. OK when the key
  // holds nothing.
  virtual Status DeleteKey(std::string_view counter, std::string_view key) = 0;
  // ---- markers: the idempotency marker of each event a once-increment
  // counted (CounterSpec::dedupe_window_ms says how long one is kept) ----
  // The number of markers the counter holds (expired ones, not yet dropped
  // by compaction, are not counted; nor by ListMarkers/GetMarker).
  // Of a keyed counter: of one key, or of every key when the key is empty.
  virtual Result<uint64_t> CountMarkers(CounterRef counter) = 0;
  // Markers of a counter, in event-id byte order (see ListMarkersOptions).
  // A keyed counter's, of one key (the key is required).
  virtual Result<std::vector<MarkerInfo>> ListMarkers(
      CounterRef counter, const ListMarkersOptions& options) = 0;
  // The marker of one event; NotFound when the event was never counted.
  virtual Result<MarkerInfo> GetMarker(CounterRef counter,
                                       std::string_view event_id) = 0;

  // ---- roll-ups: cached totals ----
  // The counter's cached total (one Get, no shard scan) with its age and
  // lag. On a writable database a counter never rolled up is rolled up
  // first; a read-only one returns NotFound for it. The value is exact as of
  // `as_of_ms`; ReadExact gives the current one. A roll-up reads as
  // ReadExact does, so a bucketed counter beyond kMaxReadBuckets has none
  // (the roll-up is refused with ReadExact's InvalidArgument).
  virtual Result<CachedValue> ReadCached(std::string_view counter) = 0;
  // Rolls up one counter, or every counter when `counter` is empty, now.
  // NotSupported on a read-only database. Counters with no increment since
  // their last roll-up in this process are skipped.
  virtual Status RollupNow(std::string_view counter = {}) = 0;

  // Read-only databases: catch up with the writer (new counters, deletes,
  // increments) so later reads see a more recent consistent point: one
  // point of the writer's history in every column family (each committed
  // batch whole or absent), never older than the previous one. Reads in
  // progress finish first; no read sees a Refresh half way. Incremental
  // where that is safe: from the second Refresh on, a spare instance (the
  // one the previous Refresh replaced) replays only what the writer wrote
  // since, and a fresh instance is opened instead when the writer flushed
  // counter values the spare had replayed or changed its files during the
  // catch-up (docs/design.md, readers in other processes). Busy when the
  // writer flushed and deleted or replaced write-ahead logs during each of
  // several attempts to open a fresh instance (it flushes faster than an
  // open completes): the previous point is kept. A writer's Db is always
  // current: OK, nothing to do.
  virtual Status Refresh() = 0;

  // The target this Db was opened at (the local engine: its directory).
  virtual const std::string& path() const = 0;

 private:
  friend class internal::BackendAccess;
  // The one way in for the free functions of tally/admin.h,
  // tally/checkpoint.h, tally/backup.h (CreateBackup), tally/import.h and
  // tally/outbox.h (tally/backend.h says why). Every backend implements it;
  // the object lives as long as this Db.
  virtual BackendOps& backend_ops() = 0;
};

}  // namespace tally

#endif  // TALLY_DB_H_
