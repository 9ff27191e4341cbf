// RedisDb: class Db on a Redis Cluster (docs/cluster.md). The counting
// rules are core/'s, decided here in the client; each write is committed
// by one call of the function tally_write (cluster/functions/tally.lua) on
// the master holding its hash tag, which checks the event's marker and
// writes marker and increment atomically there. The catalog is a hash of
// its own; a counter's shards (a keyed counter's: shard and key group)
// carry their own hash tags, so a counter spreads over slots and masters
// (cluster/keys.h).
//
// What differs from the local engine, by construction (docs/cluster.md has
// the table): a batch is atomic per hash tag, not whole; a read gathers
// the shards with one pipelined request per node and is not one snapshot;
// a shard's value is bounded by int64 (an increment past it is refused
// with OutOfRange; the engine keeps exact sums beyond); calls that need
// local files (checkpoints, backups, compaction, the WAL) and outboxes
// answer NotSupported naming why.
//
// Ownership: Db::Open hands the RedisDb to the caller; it owns its
// ClusterClient. Thread safety: as Db, every method from many threads at
// once (the catalog cache is under a mutex; the client is thread-safe).

#ifndef TALLY_CLUSTER_REDIS_DB_H_
#define TALLY_CLUSTER_REDIS_DB_H_

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cluster/client/cluster_client.h"
#include "cluster/guarded_call.h"
#include "cluster/keys.h"
#include "cluster/records.h"
#include "cluster/target.h"
#include "core/claims.h"
#include "core/holds.h"
#include "core/findings.h"
#include "core/write_op.h"
#include "tally/backend.h"
#include "tally/db.h"
#include "util/mutex.h"
#include "util/thread_annotations.h"

namespace tally::cluster {

// Opens a Db on the Redis Cluster `target` names (cluster/target.h):
// connects as its user, checks that every master holds the tally function
// library of this build's version (NotSupported naming the node and what
// it holds otherwise: deploy it with scripts/redis_cluster load-functions).
Status OpenCluster(const Options& options, const std::string& target,
                   std::unique_ptr<Db>* db);

// A read of `args` on the slot of `key` (a key, or its tag); from a
// replica where the client reads from them and `replica_ok`, else from
// the master (a record a guarded write compares with).
Command ReadCommand(std::vector<std::string> args, const std::string& key,
                    bool replica_ok = true);
// A write of `args` on the master of the slot of `key` (a key, or its
// tag), not resent when its outcome is unknown.
Command WriteCommand(std::vector<std::string> args, const std::string& key);

// OutOfRange: counter `counter`'s shards sum beyond int64.
Status SumBeyond(std::string_view counter);
// InvalidArgument: `call` needs a keyed counter and `c` is not.
Status NotKeyed(const CounterInfo& c, std::string_view call);
// Calls `fn(name, expiry)` for each entry of `index` (the reply of ZRANGE
// ... WITHSCORES of a marker or forward index) not expired at `now` by
// the client's clock (expiry 0: kept forever).
void ForEachUnexpired(
    const Reply& index, int64_t now,
    const std::function<void(const std::string&, int64_t)>& fn);
// The exact sum of `n` shard values.
__int128 SumOfShards(const int64_t* values, size_t n);

// The write path's state (cluster/write_call.h, cluster/redis_commit.cc).
struct PlannedOp;
struct WriteCall;
struct TagCall;
struct TagCalls;

class RedisDb final : public Db, private BackendOps {
 public:
  RedisDb(const Options& options, std::string path, Target target,
          std::unique_ptr<ClusterClient> client);
  ~RedisDb() override;

  // Checks the function library on every master.
  Status CheckFunctions();

  // ---- counters (redis_catalog.cc) ----
  Status CreateCounter(std::string_view name, const CounterSpec& spec) override;
  Result<CounterInfo> DescribeCounter(std::string_view name) override;
  Result<std::vector<CounterInfo>> ListCounters() override;
  Status DeleteCounter(std::string_view name) override;

  // ---- writes (redis_writes.cc) ----
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

  // ---- reservations (redis_holds.cc) ----
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

  // ---- claims (redis_claims.cc; docs/cluster.md, "Claims") ----
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

  // ---- roll-ups (redis_rollups.cc; docs/cluster.md, "Roll-ups") ----
  Result<TopKeysResult> TopKeys(std::string_view counter, size_t n,
                                const TopKeysOptions& options) override;
  Result<CachedValue> ReadCached(std::string_view counter) override;
  Status RollupNow(std::string_view counter) override;

  // ---- reads (redis_reads.cc) ----
  Result<int64_t> ReadExact(CounterRef counter,
                            const ReadOptions& options) override;
  Result<int64_t> ReadRange(CounterRef counter, int64_t from_ms, int64_t to_ms,
                            const ReadOptions& options) override;
  Result<QuotaState> ReadQuota(CounterRef counter,
                               const ReadOptions& options) override;
  Result<std::vector<int64_t>> ShardCounts(
      CounterRef counter, const ReadOptions& options) override;
  Result<std::vector<int64_t>> ReadKeys(
      std::string_view counter, const std::vector<std::string_view>& keys,
      const ReadOptions& options) override;
  Result<std::vector<KeyValue>> ListKeys(
      std::string_view counter, const ListKeysOptions& options) override;
  Status DeleteKey(std::string_view counter, std::string_view key) override;
  Result<uint64_t> CountMarkers(CounterRef counter) override;
  Result<std::vector<MarkerInfo>> ListMarkers(
      CounterRef counter, const ListMarkersOptions& options) override;
  Result<MarkerInfo> GetMarker(CounterRef counter,
                               std::string_view event_id) override;

  Status Refresh() override { return Status::OK(); }
  const std::string& path() const override { return path_; }

 private:
  BackendOps& backend_ops() override { return *this; }

  // ---- BackendOps (redis_unsupported.cc) ----
  Status Verify(VerifyReport* report, const ProgressFn& progress) override;
  Status Compact(const ProgressFn& progress) override;
  EngineStats GetStats() const override;
  Result<DbStats> GetDbStats() override;
  Result<uint64_t> PendingOperands(std::string_view counter) override;
  Status Checkpoint(const std::string& dir) override;
  Result<BackupInfo> CreateBackup(const std::string& backup_dir,
                                  const ProgressFn& progress) override;
  Status ImportCounter(const CounterImport& counter) override;
  Status ImportOutbox(const std::vector<OutboxEntry>& entries) override;
  Result<std::vector<OutboxEntry>> ReadOutbox(uint64_t after_seq,
                                              size_t limit) override;
  Status AckOutbox(uint64_t through_seq) override;
  Result<OutboxStatus> GetOutboxStatus() override;
  Result<std::string> DatabaseId() override;

  // ---- the catalog (redis_catalog.cc) ----
  // The counter named `name`: from the cache, else read from the catalog
  // (and cached). NotFound (core::CounterNotFound) when it has none.
  Status FindCounter(std::string_view name, CounterInfo* c);
  // As FindCounter, then the key against the counter (keyed or not; with
  // `whole_ok` a keyed counter may be named without a key).
  Status FindRef(CounterRef ref, bool whole_ok, CounterInfo* c);
  // Records durably that counter `c` had a plain increment (CounterInfo::
  // flags), once per counter and process.
  Status RecordPlain(const CounterInfo& c);
  // Drops a cached counter: a write found its tag's live key gone.
  void Forget(std::string_view name, uint64_t id);
  // Drops the cached counter `name`, whatever its id.
  void Uncache(std::string_view name);
  // NotSupported when the Db was opened with Options::read_only (its
  // writes are refused; its reads are live, as any client's).
  Status CheckWritable() const;
  // Steps of creating a counter (redis_catalog.cc), shared by
  // ImportCounter (redis_import.cc).
  Status CheckNewName(std::string_view name);
  Status NewCounterId(uint64_t* id);
  Status RunChunked(const std::vector<Command>& cmds, std::string_view what);
  std::vector<Command> LiveKeys(const CounterInfo& c) const;
  Status Publish(const CounterInfo& c, const std::vector<Command>& written);
  void DropWritten(const std::vector<Command>& written);
  void ImportValues(const CounterInfo& c, const CounterImport& im,
                    std::vector<Command>* out) const;
  void ImportMarkers(const CounterInfo& c, const CounterImport& im,
                     int64_t now, std::vector<Command>* out) const;
  // What a call that needs local files answers (`why` says so).
  Status NeedsFiles(std::string_view call, std::string_view why) const;
  // What an outbox call, or a counter with an outbox, answers.
  Status NoOutbox(std::string_view what) const;
  // NotSupported for a spec the cluster has no counterpart of (an outbox).
  Status CheckSpecBuilt(const CounterSpec& spec) const;

  // ---- reservations (redis_holds.cc) ----
  struct HoldView;
  // The counter `ref` names, when it takes reservations (else
  // InvalidArgument, core::CheckTakesHolds).
  Status FindHoldCounter(CounterRef ref, CounterInfo* c);
  // One MGET of key `key`'s live key, value, open holds and (unless `id`
  // is empty) reservation `id`'s record.
  Status ReadHoldView(const CounterInfo& c, std::string_view key,
                      std::string_view id, HoldView* v);
  // As ReadHoldView after FindHoldCounter, once more when the counter
  // turns out deleted since it was cached.
  Status ReadHolds(CounterRef ref, std::string_view id, CounterInfo* c,
                   HoldView* v);
  bool HoldWrite(const CounterInfo& c, std::string_view key,
                 const HoldView& v, const core::HoldRecord& h,
                 const core::HoldStep& step, int64_t now, GuardedCall* g);
  Status HoldRound(core::HoldCall call, const CounterInfo& c,
                   std::string_view key, std::string_view id, int64_t units,
                   int64_t hold_for_ms, GuardedCall::Outcome* outcome,
                   ReservationResult* out);
  Result<ReservationResult> HoldOne(core::HoldCall call, CounterRef counter,
                                    std::string_view id, int64_t units,
                                    int64_t hold_for_ms);

  // ---- reads (redis_reads.cc) ----
  // A read's time range [from, to) in ms (ReadRange).
  using TimeRange = std::pair<int64_t, int64_t>;
  // The values of `keys` (one empty key: a named counter's) in each shard
  // of counter `c`, key by key, and whether a tag read had no live key. A
  // bucketed counter's: the sum of its retained buckets (those overlapping
  // `range` when given).
  Status ReadValues(const CounterInfo& c,
                    const std::vector<std::string_view>& keys,
                    const TimeRange* range, std::vector<int64_t>* values,
                    bool* gone);
  std::pair<int64_t, int64_t> BucketsOf(const CounterInfo& c,
                                        const TimeRange* range) const;
  Status ReadBuckets(const CounterInfo& c,
                     const std::vector<std::string_view>& keys,
                     const TimeRange* range, std::vector<int64_t>* values,
                     bool* gone);
  Status SumBuckets(const CounterInfo& c, const std::vector<Command>& gets,
                    const std::vector<size_t>& owner, size_t n,
                    std::vector<int64_t>* values);
  // Finds the counter `ref` names (`keyed_read`: a keyed counter by name
  // alone, for ReadKeys) and reads `keys` of it (in `range`: ReadRange,
  // which refuses a counter without buckets), once more when it turns out
  // deleted since it was cached.
  Result<int64_t> ReadSum(CounterRef counter, const TimeRange* range);
  Status ReadCounter(CounterRef ref, bool keyed_read,
                     const std::vector<std::string_view>& keys,
                     CounterInfo* c, std::vector<int64_t>* values,
                     const TimeRange* range = nullptr);
  // Every key of keyed counter `c`, sorted, from its key indexes.
  Status AllKeys(const CounterInfo& c, std::vector<std::string>* keys);
  // (tag, marker name) of each unexpired marker of `c` (of one key of a
  // keyed counter when `key` is given).
  Status MarkerNames(const CounterInfo& c, std::string_view key,
                     std::vector<std::pair<std::string, std::string>>* names);

  // ---- claims (redis_claims.cc, claim_counts.cc) ----
  struct ClaimRead;
  // One claim call: read the record, step by core::ClaimStep, write it
  // back guarded on what was read (again when another client wrote in
  // between); CompleteClaim's counts in two steps (FinishCompletion).
  Result<ClaimResult> ClaimOne(core::ClaimCall call, std::string_view key,
                               const core::ClaimArgs& args,
                               const Batch* counts);
  // Reads the record of claim `key` from its master.
  Status ReadClaim(std::string_view key, ClaimRead* read);
  // Writes `next` where `read` still stands (*written false otherwise:
  // nothing was written).
  Status WriteClaim(std::string_view key, const ClaimRead& read,
                    const StoredClaim& next, bool* written);
  // The second step of a completion with counts: applies the counts of the
  // completing record `marked` under their derived event ids, then writes
  // it done (or, for a refused batch nothing of which was sent, held again
  // with the next attempt, and returns the refusal). *stale: the record
  // changed meanwhile (nothing decided; the caller reads again).
  Status FinishCompletion(std::string_view key, const ClaimRead& marked,
                          const Batch& counts, ClaimResult* r, bool* stale);
  // Reads the records of claim `keys` and appends those `filter` passes to
  // *out, up to `limit` in all.
  Status ListRecords(const std::vector<std::string>& keys, ClaimFilter filter,
                     size_t limit, std::vector<ClaimInfo>* out);
  // Checks a claim's counts as a batch of once-ops, as far as can be
  // before they are marked (counters, keys, arguments, strict bounds now).
  Status CheckBatch(const std::vector<core::WriteOp>& ops);

  // ---- writes (redis_writes.cc) ----
  // Plans, decides and commits `ops` (one call's, or a batch's). `gone`:
  // a tag refused the write because its counter was deleted since this
  // client cached it (that tag wrote nothing). `sent` (optional): whether
  // any op was sent to be written (on an error: something may be written).
  Status Execute(const std::vector<core::WriteOp>& ops, bool batch,
                 std::vector<IncrementResult>* results, bool* gone,
                 bool* sent = nullptr);
  // IOError unless the replicas the target asks for (replicas=N)
  // confirmed write `r` of `what`.
  Status CheckAcked(const std::string& what, const Reply& r) const;
  // Sends guarded write `g` (`what` names it), with the target's WAIT:
  // *outcome, and IOError when written but not confirmed by the replicas
  // the target asks for (as every write of the backend).
  Status RunGuarded(const GuardedCall& g, const std::string& what,
                    GuardedCall::Outcome* outcome);
  bool Acked(const Reply& r) const;  // CheckAcked's test, no message made
  Status Plan(const std::vector<core::WriteOp>& ops, int64_t now,
              WriteCall* call);
  size_t StrictKeyOf(const CounterInfo& c, const core::WriteOp& op,
                     uint32_t shard, int64_t now, WriteCall* call,
                     std::unordered_map<std::string, size_t>* of);
  static core::PreviousWindow PreviousOf(const WriteCall& call,
                                         const PlannedOp& p, int64_t now);
  Status Decide(int64_t now, WriteCall* call);
  Status DecideAll(int64_t now, WriteCall* call, bool* need_lookup);
  Status LookUpMarkers(WriteCall* call);
  Status TakeStored(WriteCall* call, size_t marker, const std::string& key,
                    const std::string& record, bool* follow);
  Status Commit(int64_t now, WriteCall* call);
  Status CommitForwards(int64_t now, WriteCall* call, bool* moved);
  Status CommitWrites(int64_t now, WriteCall* call, bool* moved,
                      bool* stale);
  Status ReadState(WriteCall* call);
  Status ReadStrict(WriteCall* call);
  Status ReadResets(WriteCall* call);
  Status CheckReply(const std::string& tag, const Reply& r, size_t n,
                    size_t counter, WriteCall* call);
  Status TakeReply(const TagCalls& calls, const TagCall& t, const Reply& r,
                   WriteCall* call, bool* moved, bool* stale);
  Status CheckAsync(const core::WriteOp& op);
  Result<IncrementResult> WriteOne(const core::WriteOp& op);

  // Runs `commands`, with the target's WAIT when `writes`.
  Status Run(const std::vector<Command>& commands, std::vector<Reply>* replies,
             bool writes);

  // ---- Verify (redis_verify.cc) ----
  struct TagLists;
  // Per key of a tag: its value, and its markers' delta sum.
  using KeySums = std::map<std::string, std::pair<int64_t, __int128>>;
  Status ListTags(const CounterInfo& c, std::vector<TagLists>* lists);
  Status VerifyTags(const CounterInfo& c, const std::vector<TagLists>& lists,
                    VerifyReport* report);
  void VerifyMarkers(const CounterInfo& c, const TagLists& t,
                     const std::vector<Reply>& r, size_t* at, KeySums* sums,
                     const std::string& where, VerifyReport* report);
  void VerifyHolds(const CounterInfo& c, const TagLists& t,
                   const std::vector<Reply>& r, size_t* at,
                   const std::string& where, VerifyReport* report);
  Status VerifyClaims(core::Findings* findings);

  // ---- roll-ups (redis_rollups.cc) ----
  std::string RollupTagOf(const CounterInfo& c) const;
  Status ScanCounter(const CounterInfo& c, size_t keep, TopKeysResult* out);
  Status ReadRollup(const CounterInfo& c, std::optional<std::string>* raw,
                    TopKeysResult* top);
  Status RollUp(const CounterInfo& c);
  Status CachedRollup(const CounterInfo& c, TopKeysResult* top);
  void NoteApplied(uint64_t id, uint64_t n);

  const Options options_;
  const Clock* const clock_;
  const std::string path_;
  const Target target_;
  const KeySpace keys_;
  std::unique_ptr<ClusterClient> client_;

  mutable Mutex mu_;
  std::map<std::string, CounterInfo, std::less<>> cache_ TALLY_GUARDED_BY(mu_);

  std::atomic<uint64_t> applied_{0};
  std::atomic<uint64_t> duplicates_{0};
  std::atomic<uint64_t> conflicts_{0};
  std::atomic<uint64_t> outside_window_{0};
  std::atomic<uint64_t> refused_{0};
  // The roll-ups this process made (counter id -> when, and its applied
  // count then) and the increments it applied since to those counters:
  // CachedValue::lag_increments.
  struct RollupSeen {
    int64_t as_of_ms = 0;
    uint64_t applied = 0;
  };
  std::map<uint64_t, RollupSeen> rolled_up_ TALLY_GUARDED_BY(mu_);
  std::map<uint64_t, uint64_t> applied_of_ TALLY_GUARDED_BY(mu_);
  std::atomic<bool> any_rollups_{false};
  std::atomic<uint64_t> rejected_{0};
};

}  // namespace tally::cluster

#endif  // TALLY_CLUSTER_REDIS_DB_H_
