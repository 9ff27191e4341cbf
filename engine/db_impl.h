// DbImpl: the implementation behind tally::Db. Its methods are spread over
// open.cc (open and close), write_path.cc (increments and batches) and
// read_path.cc (exact reads, histograms, marker counts).
//
// Ownership: owns the rocksdb::DB, its column family handles, the commit
// pipeline, the catalog and the event locks. Thread safety: as Db.

#ifndef TALLY_ENGINE_DB_IMPL_H_
#define TALLY_ENGINE_DB_IMPL_H_

#include <rocksdb/db.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/bucket_retention.h"
#include "engine/buckets.h"
#include "engine/catalog.h"
#include "engine/coding.h"
#include "engine/event_locks.h"
#include "engine/async_commits.h"
#include "engine/outbox_sequencer.h"
#include "engine/rocksdb_options.h"
#include "tally/db.h"
#include "wal/commit_pipeline.h"

namespace tally::engine {

class DbImpl final : public Db {
 public:
  DbImpl(const Options& options, std::string path);
  ~DbImpl() override;

  // Opens RocksDB and loads the catalog. Called once, by Db::Open.
  Status Init();

  Status CreateCounter(std::string_view name, const CounterSpec& spec) override;
  Result<CounterInfo> DescribeCounter(std::string_view name) override;
  Result<std::vector<CounterInfo>> ListCounters() override;
  Status DeleteCounter(std::string_view name) override;

  Result<IncrementResult> Increment(std::string_view counter, int64_t delta,
                                    const IncrementOptions& options) override;
  void IncrementAsync(std::string_view counter, int64_t delta,
                      IncrementCallback done,
                      const IncrementOptions& options) override;
  Result<IncrementResult> IncrementOnce(std::string_view counter,
                                        std::string_view event_id,
                                        int64_t delta,
                                        const OnceOptions& options) override;
  Status Apply(const Batch& batch,
               std::vector<IncrementResult>* results) override;

  Result<int64_t> ReadExact(std::string_view counter,
                            const ReadOptions& options) override;
  Result<std::vector<int64_t>> ShardCounts(std::string_view counter,
                                           const ReadOptions& options) override;
  Result<int64_t> ReadRange(std::string_view counter, int64_t from_ms,
                            int64_t to_ms, const ReadOptions& options) override;
  Result<uint64_t> CountEvents(std::string_view counter) override;

  Result<std::vector<MarkerInfo>> ListEvents(
      std::string_view counter, const ListEventsOptions& options) override;
  Result<MarkerInfo> GetEvent(std::string_view counter,
                              std::string_view event_id) override;
  Result<uint64_t> PendingOperands(std::string_view counter) override;
  Status Compact() override;
  Result<CachedValue> ReadCached(std::string_view counter) override;
  Status RollupNow(std::string_view counter) override;
  Status Checkpoint(const std::string& dir) override;
  Status Verify(VerifyReport* report) override;
  Result<BackupInfo> CreateBackup(const std::string& backup_dir) override;
  Status ImportCounter(const CounterImport& counter) override;
  Result<std::vector<OutboxEntry>> ReadOutbox(uint64_t after_seq,
                                              size_t limit) override;
  Status AckOutbox(uint64_t through_seq) override;
  Result<OutboxStatus> GetOutboxStatus() override;
  Result<std::string> DatabaseId() override;
  Status Refresh() override;
  EngineStats GetStats() const override;
  Result<DbStats> GetDbStats() override;
  const std::string& path() const override { return path_; }

 private:
  struct Counters {
    std::atomic<uint64_t> applied{0};
    std::atomic<uint64_t> duplicates{0};
    std::atomic<uint64_t> conflicts{0};
    std::atomic<uint64_t> outside_window{0};
    std::atomic<uint64_t> rejected{0};
  };

  // Counts a refused call and passes its Status through.
  Status Reject(Status s);
  // NotSupported on a read-only database, else OK.
  Status CheckWritable() const;
  Status OpenWriter(const RocksOptions& ro);
  Status OpenReader(RocksOptions ro);
  Status CheckpointOnce(const std::string& dir);
  // Where a plain increment goes: shard, bucket (or none), and the clock
  // reading it used (0 when it needed none).
  struct PlainPlan {
    uint32_t shard = 0;
    int64_t bucket = kNoBucket;
    int64_t now = 0;
  };
  Status PlanPlain(const Catalog::Entry& c, const IncrementOptions& options,
                   PlainPlan* plan);
  // The common front of Increment and IncrementAsync: checks the call,
  // finds the counter (*c) and plans it; refusals are counted (Reject).
  Status PreparePlain(const Catalog::Reader& catalog, std::string_view counter,
                      int64_t delta, const IncrementOptions& options,
                      const Catalog::Entry** c, PlainPlan* plan);
  // Adds the increment's merge (and the counter's plain-increment flag when
  // it is its first) to `wb`.
  Status AddPlainMerge(const Catalog::Entry& c, const PlainPlan& plan,
                       int64_t delta, rocksdb::WriteBatch* wb,
                       std::string* scratch, bool* first_plain);
  // Books `n` committed increments of `c`.
  void Applied(const Catalog::Entry& c, bool first_plain, uint64_t n);
  // Picks a plain increment's shard under the counter's policy.
  Status PickPlainShard(const CounterInfo& c, std::string_view affinity_key,
                        uint32_t* shard) const;
  // Visits every stored shard of a counter (shard index, value) from one
  // consistent view, checking each key and value.
  Status ScanShards(const CounterInfo& c, const rocksdb::ReadOptions& ro,
                    const std::function<void(uint32_t, int64_t)>& visit);
  // Visits a bucketed counter's retained buckets starting in
  // [from_bucket, to_bucket) (bucket start, shard index, value), in time
  // order, from one consistent view.
  Status ScanBuckets(
      const CounterInfo& c, const rocksdb::ReadOptions& ro,
      int64_t from_bucket, int64_t to_bucket,
      const std::function<void(int64_t, uint32_t, int64_t)>& visit);
  // The exact sum of a counter's shards as `ro` sees them.
  Status SumShards(const CounterInfo& c, const rocksdb::ReadOptions& ro,
                   int64_t* sum);
  // Rolls one counter up (the caller holds the catalog shared); `force`
  // also when nothing changed since this process last did.
  // `written`, when given, receives the record written (untouched when the
  // counter was skipped).
  Status RollupOne(const Catalog::Entry& c, bool force,
                   RollupRecord* written = nullptr);
  // The roll-up worker's loop.
  void RollupLoop();
  // The outbox's last stored (or acknowledged) seq and acknowledged cursor.
  Status ReadOutboxCursors(uint64_t* last_seq, uint64_t* acked_through);
  // Starts the sequencer from them (writers, at open).
  Status LoadOutbox();
  // Appends the outbox entry `seq` of an applied increment to `wb`.
  Status AddOutboxEntry(rocksdb::WriteBatch* wb, uint64_t seq,
                        const CounterInfo& c, std::string_view event_id,
                        int64_t delta, int64_t time_ms, std::string* scratch);

  const Options options_;
  const std::string path_;
  const Clock* const clock_;

  std::string secondary_dir_;  // read-only: the instance's own directory
  std::shared_ptr<rocksdb::Env> env_;  // Options::env, wrapped; outlives db_
  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;  // by engine::Family
  rocksdb::ColumnFamilyHandle* meta_ = nullptr;
  rocksdb::ColumnFamilyHandle* shards_ = nullptr;
  rocksdb::ColumnFamilyHandle* events_ = nullptr;
  rocksdb::ColumnFamilyHandle* rollups_ = nullptr;  // null: an old read-only db
  rocksdb::ColumnFamilyHandle* outbox_ = nullptr;   // null: an old read-only db
  OutboxSequencer outbox_seq_;

  std::unique_ptr<wal::CommitPipeline> commit_;
  // Bucket retention rules, kept by the catalog, read by the shards
  // family's compaction filter.
  std::shared_ptr<RetentionRules> retention_ =
      std::make_shared<RetentionRules>();
  std::unique_ptr<Catalog> catalog_;
  EventLocks event_locks_;
  Counters stats_;
  AsyncCommits async_;

  // The roll-up worker (Options::rollup_interval_ms); stopped and joined
  // before the database closes.
  std::thread rollup_thread_;
  std::mutex rollup_mu_;
  std::condition_variable rollup_cv_;
  bool rollup_stop_ = false;  // guarded by rollup_mu_
};

}  // namespace tally::engine

#endif  // TALLY_ENGINE_DB_IMPL_H_
