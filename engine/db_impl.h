// DbImpl: the implementation behind tally::Db. Its methods are spread over
// (scripts/check_doc_links keeps this list whole):
//   open.cc         open and close, create, delete and describe counters
//   secondaries.cc  read-only opens: secondary instances, Refresh
//   time_mark.cc    the persisted time mark
//   write_sequence.cc a single op's writer of the one write sequence
//                   (engine/write_sequence.h: RunWrite): Increment,
//                   IncrementOnce, Reset; strict counters' and sharded
//   write_path.cc   Increment, IncrementOnce, the commit of a decided op,
//                   IncrementAsync
//   once_async.cc   IncrementOnceAsync (queued copies: once_in_flight.h)
//   apply.cc        batches (Apply), planned by engine/write_plan.h
//   strict.cc       strict counters: reading a key's value, quotas
//   reservations.cc Reserve, CommitReservation, ReleaseReservation,
//                   GetReservation, ReadHeld (the holds family)
//   reset.cc        Reset (its arguments, and the value it replaces)
//   claims.cc       Claim, CompleteClaim, ReleaseClaim, GetClaim,
//                   ListClaims (the claims family)
//   read_path.cc    exact and range reads, histograms, marker counts
//   marker_reads.cc GetMarker, ListMarkers
//   keyed_reads.cc  ReadKeys, ListKeys, TopKeys, DeleteKey (keyed counters)
//   rollups.cc      roll-ups (keyed: total and top list) and ReadCached
//   outbox.cc       the outbox feed
//   import.cc       ImportCounter
//   verify.cc       Verify
//   admin.cc        Compact, Checkpoint, stats, pending operands
//   stats_publish.cc  publishing the engine figures (engine/stats_file.h)
//   backup.cc       CreateBackup
//
// Ownership: owns the rocksdb::DB, its column family handles, the commit
// pipeline, the catalog and the event locks. Thread safety: as Db.

#ifndef TALLY_ENGINE_DB_IMPL_H_
#define TALLY_ENGINE_DB_IMPL_H_

#include <rocksdb/db.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/async_commits.h"
#include "engine/bucket_retention.h"
#include "engine/rules.h"
#include "engine/catalog.h"
#include "engine/coding.h"
#include "engine/engine_clock.h"
#include "engine/event_locks.h"
#include "engine/once_in_flight.h"
#include "engine/outbox_sequencer.h"
#include "engine/periodic_task.h"
#include "engine/rocksdb_options.h"
#include "engine/write_plan.h"
#include "engine/writer_files.h"
#include "tally/backend.h"
#include "tally/db.h"
#include "util/rocks_status.h"
#include "wal/commit_pipeline.h"
#include "util/mutex.h"

namespace tally::engine {

class OutboxRun;
struct BatchPlan;

// DbImpl is the Db and, privately, its own BackendOps (tally/backend.h):
// the free functions of the other public headers reach the methods marked
// "BackendOps" below through Db::backend_ops.
class DbImpl final : public Db, private BackendOps {
 public:
  // `base_env`: where the files live (engine/open_on_env.h); nullptr for
  // the default Env. Not owned.
  DbImpl(const Options& options, std::string path,
         rocksdb::Env* base_env = nullptr);
  ~DbImpl() override;

  // Opens RocksDB and loads the catalog. Called once, by Db::Open.
  Status Init();

  Status CreateCounter(std::string_view name, const CounterSpec& spec) override;
  Result<CounterInfo> DescribeCounter(std::string_view name) override;
  Result<std::vector<CounterInfo>> ListCounters() override;
  Status DeleteCounter(std::string_view name) override;

  Result<IncrementResult> Increment(CounterRef counter, int64_t delta,
                                    const IncrementOptions& options) override;
  void IncrementAsync(CounterRef counter, int64_t delta,
                      IncrementCallback done,
                      const IncrementOptions& options) override;
  Result<IncrementResult> IncrementOnce(CounterRef counter,
                                        std::string_view event_id,
                                        int64_t delta,
                                        const OnceOptions& options) override;
  void IncrementOnceAsync(CounterRef counter, std::string_view event_id,
                          int64_t delta, IncrementCallback done,
                          const OnceOptions& options) override;
  Status Apply(const Batch& batch,
               std::vector<IncrementResult>* results) override;

  Result<IncrementResult> Reset(CounterRef counter, std::string_view reset_id,
                                int64_t value,
                                const ResetOptions& options) override;
  Result<ReservationResult> Reserve(CounterRef counter,
                                    std::string_view reservation_id,
                                    int64_t units,
                                    int64_t hold_for_ms) override;
  Result<ReservationResult> CommitReservation(
      CounterRef counter, std::string_view reservation_id) override;
  Result<ReservationResult> ReleaseReservation(
      CounterRef counter, std::string_view reservation_id) override;
  Result<ReservationInfo> GetReservation(
      CounterRef counter, std::string_view reservation_id) override;
  Result<HeldValue> ReadHeld(CounterRef counter,
                             const ReadOptions& options) override;

  Result<ClaimResult> Claim(std::string_view key, std::string_view holder,
                            int64_t lease_ms) override;
  Result<ClaimResult> CompleteClaim(std::string_view key, uint64_t token,
                                    std::string_view result,
                                    const Batch& counts) override;
  Result<ClaimResult> ReleaseClaim(std::string_view key,
                                   uint64_t token) override;
  Result<ClaimInfo> GetClaim(std::string_view key) override;
  Result<std::vector<ClaimInfo>> ListClaims(
      const ListClaimsOptions& options) override;

  Result<int64_t> ReadExact(CounterRef counter,
                            const ReadOptions& options) override;
  Result<std::vector<int64_t>> ShardCounts(CounterRef counter,
                                           const ReadOptions& options) override;
  Result<QuotaState> ReadQuota(CounterRef counter,
                               const ReadOptions& options) override;
  Result<int64_t> ReadRange(CounterRef counter, int64_t from_ms,
                            int64_t to_ms, const ReadOptions& options) override;
  Result<uint64_t> CountMarkers(CounterRef counter) override;

  Result<std::vector<MarkerInfo>> ListMarkers(
      CounterRef counter, const ListMarkersOptions& options) override;
  Result<MarkerInfo> GetMarker(CounterRef counter,
                               std::string_view event_id) override;
  Result<std::vector<int64_t>> ReadKeys(
      std::string_view counter, const std::vector<std::string_view>& keys,
      const ReadOptions& options) override;
  Result<std::vector<KeyValue>> ListKeys(
      std::string_view counter, const ListKeysOptions& options) override;
  Result<TopKeysResult> TopKeys(std::string_view counter, size_t n,
                                const TopKeysOptions& options) override;
  Status DeleteKey(std::string_view counter, std::string_view key) override;
  Result<CachedValue> ReadCached(std::string_view counter) override;
  Status RollupNow(std::string_view counter) override;
  Status Refresh() override;
  const std::string& path() const override { return path_; }

  // BackendOps (tally/admin.h, checkpoint.h, backup.h, import.h, outbox.h).
  Result<uint64_t> PendingOperands(std::string_view counter) override;
  Status Compact(const ProgressFn& progress) override;
  Status Checkpoint(const std::string& dir) override;
  Status Verify(VerifyReport* report, const ProgressFn& progress) override;
  Result<BackupInfo> CreateBackup(const std::string& backup_dir,
                                  const ProgressFn& progress) override;
  Status ImportCounter(const CounterImport& counter) override;
  Status ImportOutbox(const std::vector<OutboxEntry>& entries) override;
  Result<std::vector<OutboxEntry>> ReadOutbox(uint64_t after_seq,
                                              size_t limit) override;
  Status AckOutbox(uint64_t through_seq) override;
  Result<OutboxStatus> GetOutboxStatus() override;
  Result<std::string> DatabaseId() override;
  EngineStats GetStats() const override;
  Result<DbStats> GetDbStats() override;

  // Publishes this writer's figures now (engine/test_hooks.h; the stats
  // tick and the close call it too). NotSupported read-only.
  Status PublishStats() { return PublishStatsFile(/*closed=*/false); }

  // Tests only: runs inside Verify between its copy of the catalog and its
  // snapshot (set before Verify runs, not concurrently).
  void SetVerifyHookForTest(std::function<void()> hook) {
    verify_hook_for_test_ = std::move(hook);
  }
  // Tests only: runs inside every roll-up between its read (snapshot and
  // sum, or a keyed counter's scan) and its write (set while no roll-up
  // runs).
  void SetRollupHookForTest(std::function<void()> hook) {
    rollup_hook_for_test_ = std::move(hook);
  }
  // Tests only: runs inside every Reset that applies, between its read of
  // the value it replaces and its commit, holding the key's stripe (set
  // while no reset runs).
  void SetResetHookForTest(std::function<void()> hook) {
    reset_hook_for_test_ = std::move(hook);
  }
  // engine/test_hooks.h.
  bool CatalogWriterPending() { return catalog_->WriterPending(); }
  wal::GroupCommitStats GroupStatsForTest() const {
    return commit_->GroupStats();
  }
  // Refresh's counts (engine/test_hooks.h); between Refresh calls only.
  void RefreshCountsForTest(uint64_t* catch_ups, uint64_t* reopens) {
    MutexLock serial(&refresh_mu_);
    *catch_ups = refresh_catch_ups_;
    *reopens = refresh_reopens_;
  }
  Status PutRawForTest(Family family, std::string_view key,
                       std::string_view value) {
    return FromRocks(db_->Put(rocksdb::WriteOptions(), handles_.at(family),
                              rocksdb::Slice(key.data(), key.size()),
                              rocksdb::Slice(value.data(), value.size())),
                     "test put");
  }
  // The outbox's seq allocator (OutboxRun; tests set its hook).
  OutboxSequencer* outbox_sequencer() { return &outbox_seq_; }
  // A reserved run's commit failed (OutboxRun): records the watermark past
  // its dead seqs, best effort (a failure here is the database failing,
  // and the next open records it).
  void OutboxRunFailed();

 private:
  // Verify's check of every table file's blocks: a corruption is a finding
  // (*finding), not an error; Busy on a read-only instance whose writer
  // changed its files meanwhile.
  Status VerifyFileChecksums(const rocksdb::ReadOptions& ro,
                             std::string* finding);
  BackendOps& backend_ops() override { return *this; }

  struct Counters {
    std::atomic<uint64_t> applied{0};
    std::atomic<uint64_t> duplicates{0};
    std::atomic<uint64_t> conflicts{0};
    std::atomic<uint64_t> outside_window{0};
    std::atomic<uint64_t> refused{0};
    std::atomic<uint64_t> rejected{0};
  };

  // Counts `s` in stats_.rejected when it refuses the call (IsRefusal);
  // once per write call, at its end.
  void CountRefusal(const Status& s);
  // NotSupported on a read-only database, else OK.
  Status CheckWritable() const;
  Status OpenWriter(const RocksOptions& ro);
  // Points meta_ ... outbox_ at handles_ (after an open or a swap).
  void BindFamilies();
  // Read-only databases (secondaries.cc): one secondary RocksDB instance and
  // the writer's files as they were when it was opened or caught up.
  struct Secondary {
    std::string dir;  // the instance's own directory (its info log)
    std::unique_ptr<rocksdb::DB> db;
    std::vector<rocksdb::ColumnFamilyHandle*> handles;  // by engine::Family
    WriterFiles seen;
  };
  Status OpenReader(RocksOptions ro);
  // The Options::reads bit whose data family `f` holds; 0 for the families
  // every open has (default, meta).
  static uint32_t ReadBitOf(Family f);
  // NotSupported naming `call` and the missing bits when Options::reads
  // lacks any of `need` (read-only databases; a writer has kReadAll).
  Status CheckReads(uint32_t need, const char* call) const;
  // Opens a secondary instance at one point across families, retrying
  // when the writer deleted a log during the open; Busy after a few tries.
  Status OpenSecondary(Secondary* out);
  Status OpenSecondaryOnce(Secondary* out);
  // Catches `x` (an instance no read uses) up with the writer; *at_point
  // when it is then at one point across families with no entry counted
  // twice (secondaries.cc says when that is known), else it is to be replaced.
  Status CatchUp(Secondary* x, bool* at_point);
  // Makes `fresh` this Db's instance (the catalog held exclusively); the
  // old one goes into `fresh`, to be closed by the caller.
  void SwapSecondary(Secondary* fresh, Catalog::Binding* b);
  static void CloseSecondary(Secondary* s);
  Status CheckpointOnce(const std::string& dir);
  // ---- the write path (engine/write_sequence.h: every write of counts is
  // RunWrite with one of these writers; engine/write_plan.h) ----
  class SingleWrite;      // write_sequence.cc
  class BatchWrite;       // apply.cc
  class OnceAsyncWrite;   // once_async.cc
  class PlainAsyncWrite;  // write_path.cc
  template <typename Writer>
  Status RunWrite(Writer* w);
  // Checks a single call (writable, its arguments) and resolves it.
  Status PlanSingle(const Catalog::Reader& catalog, const WriteOp& op,
                    OpPlan* plan) const;
  // The write sequence of a single op (Increment, IncrementOnce, Reset).
  // `async_call`: IncrementOnceAsync's, written at once (no Options::sync),
  // with its refusals (PlanAsync).
  Result<IncrementResult> WriteSingle(WriteOp op, bool async_call = false);
  // Its check: PlanSingle (PlanAsync for an async call), and a reset's
  // value against the bounds.
  Status CheckSingle(const Catalog::Reader& catalog, const WriteOp& op,
                     bool async_call, OpPlan* plan) const;
  // The stripes a single op takes (EventLocks::kNoStripe: none).
  struct OpStripes {
    uint32_t first = EventLocks::kNoStripe;
    uint32_t second = EventLocks::kNoStripe;
  };
  OpStripes StripesOf(const WriteOp& op, const OpPlan& plan) const;
  // Its decision: core::Decide, then an applied op's rule against its
  // key's value (strict: CheckBounds; reset: AnswerReset).
  Status DecideSingle(const WriteOp& op, const FoundMarker& marker,
                      int64_t now, OpPlan* plan);
  // The first use of a feature raises the database's format (a synced write
  // under the catalog held exclusively): `check` runs first under a shared
  // hold, so a call it refuses raises nothing. Called holding no catalog
  // hold and no stripe (nothing holds a stripe while waiting for the
  // catalog).
  template <typename Check>
  Status RaiseFormatOnFirstUse(uint32_t format, const Check& check) {
    if (catalog_->HasFormat(format)) return Status::OK();
    {
      Catalog::Reader catalog(catalog_.get());
      Status s = check(catalog);
      if (!s.ok()) return s;
    }
    return catalog_->RequireFormat(format);
  }
  // The marker at `key` of counter `c`, if stored.
  Status LookUpMarker(const CounterInfo& c, std::string_view key,
                      FoundMarker* marker);
  // Commits a decided op from `scratch`: an applied one, and a strict
  // once-op's new refusal (its marker only, unless `marker` answered it);
  // counts the outcome.
  Result<IncrementResult> CommitDecided(const WriteOp& op,
                                        const FoundMarker& marker,
                                        int64_t now, OpPlan* plan,
                                        WriteScratch* scratch);
  // ---- strict counters (strict.cc) ----
  // Reservations (engine/reservations.cc).
  // A key's open holds now: the units still held (their time not run out),
  // how many, the earliest end, and (when asked) up to kMaxExpiredClosed
  // open holds whose time ran out, for a Reserve to close.
  struct HoldsNow : HeldNow {
    std::vector<std::pair<std::string, HoldRecord>> expired;
  };
  // Whether counter `c` may have a reservation (probed once per counter
  // per process; a strict counter with a minimum and no buckets only).
  bool MayHoldUnits(const Catalog::Entry& c);
  Status ReadHolds(const CounterInfo& c, std::string_view key, int64_t now,
                   const rocksdb::ReadOptions& ro, bool collect_expired,
                   HoldsNow* out);
  // The units `c`'s key holds now (0 without reservations): what a write
  // of the key checks its minimum with (CheckBounds' `held`).
  Status HeldUnits(const Catalog::Entry& c, std::string_view key, int64_t now,
                   int64_t* held);
  // One reservation call: read, core's HoldStepOf, write.
  Result<ReservationResult> HoldOne(HoldCall call, CounterRef counter,
                                    std::string_view id, int64_t units,
                                    int64_t hold_for_ms);
  // The reservation as stored: open, else closed (*known false: none).
  Status ReadHold(const CounterInfo& c, std::string_view key,
                  std::string_view id, HoldRecord* h, bool* known,
                  bool* is_open);
  // Writes what `step` says of reservation `h` of `c`'s key, and closes
  // the `expired` open holds a Reserve found; one commit.
  Status WriteHoldStep(const Catalog::Entry& c, std::string_view key,
                       const HoldRecord& h, const HoldStep& step,
                       const HoldsNow& holds, int64_t now, bool* first_plain);
  // The counter a reservation call names: strict, with a minimum, without
  // buckets; with its key.
  Status FindHoldCounter(const Catalog::Reader& catalog, CounterRef counter,
                         const Catalog::Entry** out);
  // The value a reset replaces: of `key` (a bucketed counter's: of
  // `bucket`), from one consistent view.
  Status ReadResetValue(const CounterInfo& c, std::string_view key,
                        int64_t bucket, int64_t* value);
  // The value of strict counter `c`'s key `key` (empty: the named
  // counter) in `bucket` (a quota's window; kNoBucket without buckets), 0
  // where none is stored; and of many (key, bucket) slots in one MultiGet.
  Status ReadStrictValue(const CounterInfo& c, std::string_view key,
                         int64_t bucket, int64_t* value);
  Status ReadStrictValues(const CounterInfo& c,
                          const std::vector<StrictSlot>& slots,
                          std::vector<int64_t>* values,
                          const rocksdb::ReadOptions& ro = {});
  // A sliding quota's op: the previous window's use (0 before 1970's
  // second bucket) and how far into `bucket` (the op's) it falls.
  Status ReadPreviousWindow(const CounterInfo& c, const WriteOp& op,
                            int64_t now, int64_t bucket,
                            PreviousWindow* previous);
  // Adds an applied single op's writes to `wb`: its merge, the counter's
  // plain-increment flag when it is its first (*first_plain), a once-op's
  // marker at `marker_key`, and its outbox entry when `outbox` is given
  // (exactly for outbox counters).
  Status AddApplied(const WriteOp& op, const OpPlan& plan, int64_t now,
                    const OutboxRun* outbox, rocksdb::WriteBatch* wb,
                    std::string_view marker_key, std::string* scratch,
                    bool* first_plain);
  // The outbox entry of a single applied op: what it counted (`plan`'s
  // applied delta; a reset's differs from the op's).
  Status AddEntry(const WriteOp& op, const OpPlan& plan, int64_t now,
                  const OutboxRun* outbox, rocksdb::WriteBatch* wb,
                  std::string* scratch);
  // PlanSingle for the async calls: NotSupported for an outbox counter.
  Status PlanAsync(const Catalog::Reader& catalog, const WriteOp& op,
                   OpPlan* plan) const;
  // What IncrementAsync queues once the catalog is released: `counter` is
  // set (and the commit counted in async_) only when `batch` is to be
  // queued; otherwise StartAsync's answer is final.
  struct AsyncStart {
    rocksdb::WriteBatch batch;
    const Catalog::Entry* counter = nullptr;
    bool first_plain = false;
  };
  // IncrementAsync's work under the catalog's shared hold: plans the
  // increment and builds its batch; on a pipeline that is not durable it
  // also commits it. Returns the refusal, or the result the increment has
  // (or will have) once committed.
  Result<IncrementResult> StartAsync(const WriteOp& op, AsyncStart* start);
  // What IncrementOnceAsync queues once the catalog is released: as
  // AsyncStart, plus the copy registered in once_in_flight_ (set exactly
  // when `counter` is). `rode`: the copy rides on a pending one, which now
  // holds its callback and room.
  struct OnceStart {
    AsyncStart async;
    std::shared_ptr<OnceInFlight::Pending> pending;
    bool rode = false;
  };
  // IncrementOnceAsync's work under the catalog's shared hold and the
  // event's stripe (durable pipelines only; engine/once_async.cc). Takes
  // `*done` and `*slot` only when the copy rides.
  Result<IncrementResult> StartOnceAsync(
      const WriteOp& op, IncrementCallback* done,
      wal::CommitPipeline::AsyncSlot* slot, OnceStart* start);
  // The synchronous once paths, holding the stripe of `marker_key`: waits
  // until no IncrementOnceAsync copy of that event is pending.
  void AwaitOnceWritten(std::string_view marker_key) {
    if (!once_in_flight_.Empty()) once_in_flight_.AwaitWritten(marker_key);
  }
  // Books an asynchronous increment of `c` once committed.
  void AsyncApplied(const Catalog::Entry& c, bool first_plain);
  // Apply's work; `results` is the caller's only when it returns OK.
  // `also`, when given, adds its writes to the batch's WriteBatch once
  // nothing can refuse the batch (CompleteClaim's record): they commit
  // with it, also when the batch itself has nothing to write.
  using AlsoWrite = std::function<Status(rocksdb::WriteBatch*)>;
  Status ApplyInto(const Batch& batch, std::vector<IncrementResult>* results,
                   const AlsoWrite& also = nullptr);
  // Claims (engine/claims.cc): the call, decided and committed under the
  // key's stripe of claim_locks_.
  // One claim call: read, core's ClaimStep, write (with CompleteClaim's
  // `counts`, else null).
  Result<ClaimResult> ClaimOne(ClaimCall call, std::string_view key,
                               const ClaimArgs& args, const Batch* counts);
  // Apply's outbox entries, once nothing can refuse the batch.
  Status AddBatchOutbox(const BatchPlan& bp, int64_t now, OutboxRun* outbox,
                        WriteScratch* scratch);
  // Books a committed batch: flags, per-counter and engine counts.
  void BookBatch(const BatchPlan& bp);
  // Books `n` committed increments of `c` (the counter's own count and,
  // when first_plain, its stored flag).
  void Applied(const Catalog::Entry& c, bool first_plain, uint64_t n);
  // Adds the outcomes of a successful call to stats_.
  void CountOutcomes(const OutcomeCounts& n);
  // ---- engine figures (admin.cc, stats_publish.cc) ----
  // This writer's own figures, taken now.
  EngineStats OwnStats() const;
  // Writes OwnStats() to the stats file, marked `closed` or not; serialised
  // by publish_mu_. NotSupported read-only.
  Status PublishStatsFile(bool closed) TALLY_EXCLUDES(publish_mu_);
  // Writers, at the end of Init: publishes once and starts the tick
  // (Options::stats_publish_interval_ms), or removes an earlier writer's
  // file when publishing is off.
  void StartPublishing();
  // At close, after the commit pipeline closed: stops the tick and
  // publishes a last time, marked closed.
  void StopPublishing();
  // Visits every stored shard of a counter, or of one key of a keyed
  // counter (`counter_key`; empty for a named counter), (shard index,
  // value) from one consistent view, checking each key and value.
  Status ScanShards(const CounterInfo& c, std::string_view counter_key,
                    const rocksdb::ReadOptions& ro,
                    const std::function<void(uint32_t, ShardSum)>& visit);
  // Visits a bucketed counter's (or key's) retained buckets starting in
  // [from_bucket, to_bucket) (bucket start, shard index, value), in time
  // order, from one consistent view.
  Status ScanBuckets(
      const CounterInfo& c, std::string_view counter_key,
      const rocksdb::ReadOptions& ro, int64_t from_bucket, int64_t to_bucket,
      const std::function<void(int64_t, uint32_t, ShardSum)>& visit);
  // The exact sum of a counter's (or key's) shards as `ro` sees them.
  Status SumShards(const CounterInfo& c, std::string_view counter_key,
                   const rocksdb::ReadOptions& ro, int64_t* sum);
  // The keys of keyed counter `c` whose shard keys lie in [seek, upper), in
  // key order, each with its value (retained buckets summed); `visit`
  // returns false to stop. A key whose value lies outside kMinDelta..
  // kMaxDelta (an overflowed shard, or shards summing beyond) is visited
  // with `out_of_range` true and value 0: a key's state is that key's, and
  // never stops the scan. engine/keyed_reads.cc.
  Status ScanKeys(const CounterInfo& c, const rocksdb::ReadOptions& ro,
                  std::string_view seek, std::string_view upper,
                  const std::function<bool(std::string_view key, int64_t value,
                                           bool out_of_range)>& visit);
  // A keyed counter's roll-up: total and top list from one scan, outside
  // the catalog hold (it may take seconds). engine/rollups.cc.
  Status RollupKeyed(std::string_view name, bool force);
  // ReadCached's first step: a keyed counter never rolled up in this
  // (writable) process is rolled up now, outside the catalog hold.
  Status RollUpKeyedOnce(std::string_view counter);
  // The counter's stored roll-up at `ro`; a writable open rolls up a named
  // counter that has none yet.
  Status ReadRollupRecord(const Catalog::Entry& c,
                          const rocksdb::ReadOptions& ro, RollupRecord* r);
  // A scan of every key of keyed counter `c` now: total, key count and the
  // top `keep` keys, from one snapshot (engine/keyed_reads.cc).
  Status ScanTop(const CounterInfo& c, size_t keep, TopKeysResult* out);
  // The stored top list; NotFound when the counter has none yet.
  Status ReadTopList(const CounterInfo& c, TopKeysResult* out,
                     const rocksdb::ReadOptions& ro = rocksdb::ReadOptions());
  // Every keyed counter's key count from its stored top list, for
  // GetDbStats (engine/admin.cc): one Get each, in name order.
  Status KeyedCounterFigures(const Catalog::Reader& catalog,
                             std::vector<KeyedCounterStats>* out);
  // Rolls one counter up (the caller holds the catalog shared); `force`
  // also when nothing changed since this process last did.
  Status RollupOne(const Catalog::Entry& c, bool force);
  // Writes the roll-up `r` of `c` (and a keyed counter's top list) unless
  // a roll-up from a newer snapshot was written first; raises r's as_of to
  // the last one's, so a cached total never goes back in value or time.
  // Sets *wrote. Called with the catalog held shared.
  Status CommitRollup(const Catalog::Entry& c, uint64_t applied,
                      RollupRecord* r, const std::string* top_list,
                      bool* wrote);
  // Loads the time mark from meta into clock_ (both kinds of open and
  // Refresh).
  Status LoadTimeMark();
  // Persists clock_'s now as the time mark (a synced meta write) when it is
  // past the durable one, then records it durable; serialised by
  // time_mark_mu_. Writers only: at open, by the tick, before Compact.
  Status AdvanceTimeMark() TALLY_EXCLUDES(time_mark_mu_);
  // The outbox's last stored or acknowledged seq, its acknowledged cursor
  // and its recorded settled watermark (outbox key u64be(0)), as `ro` and
  // `it` (an outbox iterator) see them.
  Status ReadOutboxCursors(const rocksdb::ReadOptions& ro,
                           rocksdb::Iterator* it, uint64_t* last_seq,
                           uint64_t* acked_through, uint64_t* settled);
  // Starts the sequencer from them and makes this open's outbox origin
  // (writers, at open); records the settled watermark when entries exist.
  Status LoadOutbox();
  // Writes the sequencer's watermark as the outbox's recorded settled
  // watermark (serialised, so the stored value only grows).
  Status RecordOutboxSettled() TALLY_EXCLUDES(outbox_settled_mu_);
  // Appends the outbox entry `seq` of an applied increment to `wb`;
  // `settled`: the watermark before its run.
  Status AddOutboxEntry(rocksdb::WriteBatch* wb, uint64_t seq, uint64_t settled,
                        const CounterInfo& c, std::string_view counter_key,
                        std::string_view event_id,
                        int64_t delta, int64_t time_ms, std::string* scratch);

  const Options options_;
  const std::string path_;
  rocksdb::Env* const base_env_;  // OpenOnEnv's, or nullptr; not owned
  // The engine's monotone time (engine/engine_clock.h), shared with the
  // compaction filters; clock_ is the same object.
  const std::shared_ptr<EngineClock> engine_clock_;
  EngineClock* const clock_;
  Mutex time_mark_mu_;
  bool time_mark_stored_ TALLY_GUARDED_BY(time_mark_mu_) = false;

  std::string secondary_dir_;    // read-only: the instance's own directory
  RocksOptions reader_options_;  // read-only: to open a fresh instance
  WriterFiles reader_seen_;      // read-only: Secondary::seen of db_
  // Read-only: the instance the last Refresh replaced, caught up by the
  // next one (empty before the first Refresh); and how each Refresh went.
  Secondary spare_;
  uint64_t refresh_catch_ups_ TALLY_GUARDED_BY(refresh_mu_) = 0;
  uint64_t refresh_reopens_ TALLY_GUARDED_BY(refresh_mu_) = 0;
  // Serialises Refresh calls (the reader_* fields above are theirs).
  Mutex refresh_mu_;
  std::function<void()> verify_hook_for_test_;
  std::function<void()> rollup_hook_for_test_;
  std::function<void()> reset_hook_for_test_;
  // Orders the writes of roll-ups (engine/rollups.cc, CommitRollup): taken
  // under the catalog hold, never the other way round.
  Mutex rollup_write_mu_;
  std::shared_ptr<rocksdb::Env> env_;  // base_env_, wrapped; outlives db_
  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;  // by engine::Family
  rocksdb::ColumnFamilyHandle* meta_ = nullptr;
  rocksdb::ColumnFamilyHandle* shards_ = nullptr;
  rocksdb::ColumnFamilyHandle* events_ = nullptr;
  rocksdb::ColumnFamilyHandle* rollups_ = nullptr;  // null: an old read-only db
  rocksdb::ColumnFamilyHandle* outbox_ = nullptr;   // null: an old read-only db
  rocksdb::ColumnFamilyHandle* holds_ = nullptr;    // null: an old read-only db
  rocksdb::ColumnFamilyHandle* claims_ = nullptr;   // null: an old read-only db
  OutboxSequencer outbox_seq_;
  // This read-write open's writer incarnation: the origin of every entry it
  // writes (docs/sync.md). Set once at open.
  std::string outbox_origin_;
  Mutex outbox_settled_mu_;  // serialises RecordOutboxSettled

  // Before commit_: its `written` hooks remove entries until Close.
  OnceInFlight once_in_flight_;
  std::unique_ptr<wal::CommitPipeline> commit_;
  // Bucket retention rules, kept by the catalog, read by the shards
  // family's compaction filter.
  std::shared_ptr<RetentionRules> retention_ =
      std::make_shared<RetentionRules>();
  std::unique_ptr<Catalog> catalog_;
  EventLocks event_locks_;
  // Claims' stripes: taken before anything else (CompleteClaim then
  // applies its counts, which take event_locks_), never while holding one.
  EventLocks claim_locks_;
  Counters stats_;
  AsyncCommits async_;

  // The roll-up worker (Options::rollup_interval_ms) and the time-mark
  // tick (kTimeMarkIntervalMs); both stopped before the database closes.
  PeriodicTask rollup_task_;
  PeriodicTask time_mark_task_;
  // Engine figures for other processes (stats_publish.cc): Options::clock
  // at Init, whether this writer publishes, and the tick.
  // stats_env_ is RocksOptions::db.env (env_, or the default private one).
  rocksdb::Env* stats_env_ = nullptr;
  int64_t opened_ms_ = 0;
  bool publishing_ = false;
  Mutex publish_mu_;
  PeriodicTask stats_task_;
};

}  // namespace tally::engine

#endif  // TALLY_ENGINE_DB_IMPL_H_
