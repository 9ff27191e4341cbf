// The free functions of tally/admin.h, checkpoint.h, backup.h, import.h and
// outbox.h reach a Db's backend through Db's hook only (tally/backend.h),
// never by assuming the engine's DbImpl: a second backend, here one that
// wraps a real database, gets every call through its own BackendOps.

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tally/admin.h"
#include "tally/backend.h"
#include "tally/backup.h"
#include "tally/checkpoint.h"
#include "tally/import.h"
#include "tally/outbox.h"
#include "tally/sync.h"
#include "tests/testutil/exported.h"
#include "tests/testutil/testutil.h"

namespace tally {
namespace {

// Another backend of Db: it keeps a real database and serves every call
// from it, counting the BackendOps calls by name.
class WrappingDb final : public Db, private BackendOps {
 public:
  explicit WrappingDb(std::unique_ptr<Db> inner) : inner_(std::move(inner)) {}

  // How often each BackendOps method was called.
  std::map<std::string, int> calls;

  Status CreateCounter(std::string_view name,
                       const CounterSpec& spec) override {
    return inner_->CreateCounter(name, spec);
  }
  Result<CounterInfo> DescribeCounter(std::string_view name) override {
    return inner_->DescribeCounter(name);
  }
  Result<std::vector<CounterInfo>> ListCounters() override {
    return inner_->ListCounters();
  }
  Status DeleteCounter(std::string_view name) override {
    return inner_->DeleteCounter(name);
  }
  Result<IncrementResult> Increment(CounterRef counter, int64_t delta,
                                    const IncrementOptions& options) override {
    return inner_->Increment(counter, delta, options);
  }
  void IncrementAsync(CounterRef counter, int64_t delta,
                      IncrementCallback done,
                      const IncrementOptions& options) override {
    inner_->IncrementAsync(counter, delta, std::move(done), options);
  }
  Result<IncrementResult> IncrementOnce(CounterRef counter,
                                        std::string_view event_id,
                                        int64_t delta,
                                        const OnceOptions& options) override {
    return inner_->IncrementOnce(counter, event_id, delta, options);
  }
  void IncrementOnceAsync(CounterRef counter, std::string_view event_id,
                          int64_t delta, IncrementCallback done,
                          const OnceOptions& options) override {
    inner_->IncrementOnceAsync(counter, event_id, delta, std::move(done),
                               options);
  }
  Status Apply(const Batch& batch,
               std::vector<IncrementResult>* results) override {
    return inner_->Apply(batch, results);
  }
  Result<int64_t> ReadExact(CounterRef counter,
                            const ReadOptions& options) override {
    return inner_->ReadExact(counter, options);
  }
  Result<int64_t> ReadRange(CounterRef counter, int64_t from_ms,
                            int64_t to_ms,
                            const ReadOptions& options) override {
    return inner_->ReadRange(counter, from_ms, to_ms, options);
  }
  Result<QuotaState> ReadQuota(CounterRef counter,
                               const ReadOptions& options) override {
    return inner_->ReadQuota(counter, options);
  }
  Result<IncrementResult> Reset(CounterRef counter, std::string_view id,
                                int64_t value,
                                const ResetOptions& options) override {
    return inner_->Reset(counter, id, value, options);
  }
  Result<ReservationResult> Reserve(CounterRef counter, std::string_view id,
                                    int64_t units,
                                    int64_t hold_for_ms) override {
    return inner_->Reserve(counter, id, units, hold_for_ms);
  }
  Result<ReservationResult> CommitReservation(CounterRef counter,
                                              std::string_view id) override {
    return inner_->CommitReservation(counter, id);
  }
  Result<ReservationResult> ReleaseReservation(CounterRef counter,
                                               std::string_view id) override {
    return inner_->ReleaseReservation(counter, id);
  }
  Result<ReservationInfo> GetReservation(CounterRef counter,
                                         std::string_view id) override {
    return inner_->GetReservation(counter, id);
  }
  Result<HeldValue> ReadHeld(CounterRef counter,
                             const ReadOptions& options) override {
    return inner_->ReadHeld(counter, options);
  }
  Result<ClaimResult> Claim(std::string_view key, std::string_view holder,
                            int64_t lease_ms) override {
    return inner_->Claim(key, holder, lease_ms);
  }
  Result<ClaimResult> CompleteClaim(std::string_view key, uint64_t token,
                                    std::string_view result,
                                    const Batch& counts) override {
    return inner_->CompleteClaim(key, token, result, counts);
  }
  Result<ClaimResult> ReleaseClaim(std::string_view key,
                                   uint64_t token) override {
    return inner_->ReleaseClaim(key, token);
  }
  Result<ClaimInfo> GetClaim(std::string_view key) override {
    return inner_->GetClaim(key);
  }
  Result<std::vector<ClaimInfo>> ListClaims(
      const ListClaimsOptions& options) override {
    return inner_->ListClaims(options);
  }
  Result<std::vector<int64_t>> ShardCounts(
      CounterRef counter, const ReadOptions& options) override {
    return inner_->ShardCounts(counter, options);
  }
  Result<uint64_t> CountMarkers(CounterRef counter) override {
    return inner_->CountMarkers(counter);
  }
  Result<std::vector<MarkerInfo>> ListMarkers(
      CounterRef counter, const ListMarkersOptions& options) override {
    return inner_->ListMarkers(counter, options);
  }
  Result<std::vector<int64_t>> ReadKeys(
      std::string_view counter, const std::vector<std::string_view>& keys,
      const ReadOptions& options) override {
    return inner_->ReadKeys(counter, keys, options);
  }
  Result<std::vector<KeyValue>> ListKeys(
      std::string_view counter, const ListKeysOptions& options) override {
    return inner_->ListKeys(counter, options);
  }
  Result<TopKeysResult> TopKeys(std::string_view counter, size_t n,
                                const TopKeysOptions& options) override {
    return inner_->TopKeys(counter, n, options);
  }
  Status DeleteKey(std::string_view counter, std::string_view key) override {
    return inner_->DeleteKey(counter, key);
  }
  Result<MarkerInfo> GetMarker(CounterRef counter,
                               std::string_view event_id) override {
    return inner_->GetMarker(counter, event_id);
  }
  Result<CachedValue> ReadCached(std::string_view counter) override {
    return inner_->ReadCached(counter);
  }
  Status RollupNow(std::string_view counter) override {
    return inner_->RollupNow(counter);
  }
  Status Refresh() override { return inner_->Refresh(); }
  const std::string& path() const override { return inner_->path(); }

 private:
  BackendOps& backend_ops() override { return *this; }

  Status Verify(VerifyReport* report, const ProgressFn& progress) override {
    ++calls["Verify"];
    return tally::Verify(*inner_, report, progress);
  }
  Status Compact(const ProgressFn& progress) override {
    ++calls["Compact"];
    return tally::Compact(*inner_, progress);
  }
  EngineStats GetStats() const override {
    ++const_cast<WrappingDb*>(this)->calls["GetStats"];
    return tally::GetStats(*inner_);
  }
  Result<DbStats> GetDbStats() override {
    ++calls["GetDbStats"];
    return tally::GetDbStats(*inner_);
  }
  Result<uint64_t> PendingOperands(std::string_view counter) override {
    ++calls["PendingOperands"];
    return tally::PendingOperands(*inner_, counter);
  }
  Status Checkpoint(const std::string& dir) override {
    ++calls["Checkpoint"];
    return tally::Checkpoint(*inner_, dir);
  }
  Result<BackupInfo> CreateBackup(const std::string& backup_dir,
                                  const ProgressFn& progress) override {
    ++calls["CreateBackup"];
    return tally::CreateBackup(*inner_, backup_dir, progress);
  }
  Status ImportCounter(const CounterImport& counter) override {
    ++calls["ImportCounter"];
    return tally::ImportCounter(*inner_, counter);
  }
  Status ImportOutbox(const std::vector<OutboxEntry>& entries) override {
    ++calls["ImportOutbox"];
    return tally::ImportOutbox(*inner_, entries);
  }
  Result<std::vector<OutboxEntry>> ReadOutbox(uint64_t after_seq,
                                              size_t limit) override {
    ++calls["ReadOutbox"];
    return tally::ReadOutbox(*inner_, after_seq, limit);
  }
  Status AckOutbox(uint64_t through_seq) override {
    ++calls["AckOutbox"];
    return tally::AckOutbox(*inner_, through_seq);
  }
  Result<OutboxStatus> GetOutboxStatus() override {
    ++calls["GetOutboxStatus"];
    return tally::GetOutboxStatus(*inner_);
  }
  Result<std::string> DatabaseId() override {
    ++calls["DatabaseId"];
    return tally::DatabaseId(*inner_);
  }

  std::unique_ptr<Db> inner_;
};

// Proves each administration, copy and import function runs on the
// backend it is given (its BackendOps), with the real database's answers.
// Named "Backup" so the TSAN pass leaves it out with the other backup tests
// (scripts/dev: RocksDB's BackupEngine threads are not instrumented).
TEST(BackendOpsTest, AdminCopyBackupAndImportReachTheWrappingBackend) {
  test::TempDir dir;
  WrappingDb db(test::OpenOrDie(dir.Sub("db")));
  ASSERT_OK(db.CreateCounter("c", CounterSpec{}));
  ASSERT_OK(db.IncrementOnce("c", "e1", 5, {}));

  VerifyReport report;
  ASSERT_OK(tally::Verify(db, &report));
  EXPECT_TRUE(report.ok());
  EXPECT_EQ(report.markers, 1u);
  ASSERT_OK(tally::PendingOperands(db, "c"));
  ASSERT_OK(tally::Compact(db));
  EXPECT_EQ(test::OkValue(tally::PendingOperands(db, "c")), 0u);
  EXPECT_EQ(tally::GetStats(db).applied, 1u);
  Result<DbStats> stats = tally::GetDbStats(db);
  ASSERT_OK(stats);
  EXPECT_EQ(stats->engine.applied, 1u);

  ASSERT_OK(tally::Checkpoint(db, dir.Sub("copy")));
  Result<BackupInfo> backup = tally::CreateBackup(db, dir.Sub("backups"));
  ASSERT_OK(backup);

  Result<CounterInfo> info = db.DescribeCounter("c");
  ASSERT_OK(info);
  CounterImport im;
  ASSERT_OK(test::ReadExported(&db, *info, 100, &im));
  im.info.name = "imported";
  ASSERT_OK(tally::ImportCounter(db, im));
  EXPECT_EQ(test::OkValue(db.ReadExact("imported", {})), 5);
  EXPECT_EQ(test::OkValue(db.CountMarkers("imported")), 1u);
  // "c" has no outbox: the entry is refused, nothing written.
  OutboxEntry entry;
  entry.counter = "c";
  entry.delta = 1;
  EXPECT_TRUE(tally::ImportOutbox(db, {entry}).IsInvalidArgument());

  for (const char* name :
       {"Verify", "Compact", "GetStats", "GetDbStats", "PendingOperands",
        "Checkpoint", "CreateBackup", "ImportCounter", "ImportOutbox"}) {
    EXPECT_GE(db.calls[name], 1) << name;
  }
  std::unique_ptr<Db> copy = test::OpenOrDie(dir.Sub("copy"));
  EXPECT_EQ(test::OkValue(copy->ReadExact("c")), 5);
}

// Proves the outbox feed runs on the backend it is given, and that
// SyncOutbox, written against the public headers, syncs from it.
TEST(BackendOpsTest, OutboxFeedAndSyncReachTheWrappingBackend) {
  test::TempDir dir;
  WrappingDb edge(test::OpenOrDie(dir.Sub("edge")));
  std::unique_ptr<Db> hub = test::OpenOrDie(dir.Sub("hub"));
  ASSERT_OK(edge.CreateCounter("c", test::OutboxSpec(4)));
  CounterSpec hub_spec;
  hub_spec.shards = 4;
  ASSERT_OK(hub->CreateCounter("c", hub_spec));
  for (int i = 0; i < 3; ++i) {
    ASSERT_OK(edge.IncrementOnce("c", "e" + std::to_string(i), 2, {}));
  }
  Result<std::string> id = tally::DatabaseId(edge);
  ASSERT_OK(id);
  EXPECT_EQ(id->size(), 32u);
  Result<std::vector<OutboxEntry>> entries = tally::ReadOutbox(edge, 0, 10);
  ASSERT_OK(entries);
  ASSERT_EQ(entries->size(), 3u);
  ASSERT_OK(tally::AckOutbox(edge, entries->front().seq));
  EXPECT_EQ(test::OkValue(tally::GetOutboxStatus(edge)).entries, 2u);

  SyncReport sync;
  ASSERT_OK(SyncOutbox(&edge, hub.get(), SyncOptions(), &sync));
  EXPECT_EQ(sync.applied, 2u);
  EXPECT_EQ(test::OkValue(hub->ReadExact("c")), 4);
  EXPECT_EQ(test::OkValue(tally::GetOutboxStatus(edge)).entries, 0u);
  for (const char* name :
       {"ReadOutbox", "AckOutbox", "GetOutboxStatus", "DatabaseId"}) {
    EXPECT_GE(edge.calls[name], 2) << name;
  }
}

}  // namespace
}  // namespace tally
