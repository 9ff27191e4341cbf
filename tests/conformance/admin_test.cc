// Conformance: administration through the free functions (tally/admin.h,
// checkpoint.h, backup.h) and read-only instances. Verify and GetStats
// are every backend's; compaction, checkpoints and backups a backend with
// local files offers (BackendFactory::local_files) and any other answers
// NotSupported; read-only instances likewise (read_only_instances).
#include "tally/admin.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "conformance/conformance.h"
#include "tally/backup.h"
#include "tally/checkpoint.h"
#include "tally/outbox.h"

namespace tally::conformance {
namespace {

class Admin : public ConformanceTest {
 protected:
  // A bit of every kind of data: named, keyed, strict, bucketed and
  // windowed counters, once-increments, a reset, a reservation, a claim.
  void Fill() {
    ASSERT_OK(db_->CreateCounter("views", CounterSpec{4}));
    CounterSpec keyed{2};
    keyed.keyed = true;
    ASSERT_OK(db_->CreateCounter("likes", keyed));
    CounterSpec stock;
    stock.bounds = CounterBounds::AtLeast(0);
    stock.keyed = true;
    ASSERT_OK(db_->CreateCounter("stock", stock));
    CounterSpec hourly{2};
    hourly.bucket = BucketWidth::kHour;
    hourly.dedupe_window_ms = kDay;
    ASSERT_OK(db_->CreateCounter("hourly", hourly));
    for (int i = 0; i < 20; ++i) {
      const std::string id = "e" + std::to_string(i);
      ASSERT_OK(db_->IncrementOnce("views", id, 1));
      ASSERT_OK(
          db_->IncrementOnce({"likes", "p" + std::to_string(i % 3)}, id, 1));
      ASSERT_OK(db_->IncrementOnce("hourly", id, 2, OnceOptions{Now(), {}}));
    }
    ASSERT_OK(db_->Increment({"stock", "sku"}, 5));
    ASSERT_OK(db_->IncrementOnce({"stock", "sku"}, "order-1", -2));
    ASSERT_OK(db_->Reset("views", "reset-1", 3));
    ASSERT_OK(db_->Reserve({"stock", "sku"}, "cart-1", 1, kHour));
    ASSERT_OK(db_->Claim("job-1", "worker", kMinute));
  }
  // What Fill leaves, read back through `db`.
  static void ExpectFilled(Db& db) {
    EXPECT_EQ(Got(db.ReadExact("views")), 3);
    EXPECT_EQ(Got(db.ReadKeys("likes", {"p0", "p1", "p2"})),
              (std::vector<int64_t>{7, 7, 6}));
    EXPECT_EQ(Got(db.ReadExact({"stock", "sku"})), 3);
    EXPECT_EQ(Got(db.ReadExact("hourly")), 40);
    EXPECT_EQ(Got(db.CountMarkers("views")), 21u);
    EXPECT_EQ(Got(db.GetClaim("job-1")).holder, "worker");
    EXPECT_EQ(Got(db.GetReservation({"stock", "sku"}, "cart-1")).units, 1);
  }
};

TEST_P(Admin, VerifyFindsNothingWrongWithWhatTheApiWrote) {
  ASSERT_NO_FATAL_FAILURE(Fill());
  VerifyReport report;
  ASSERT_OK(Verify(*db_, &report));
  EXPECT_TRUE(report.ok()) << test::Dump(report);
  EXPECT_EQ(report.problems_dropped, 0u);
  EXPECT_EQ(report.counters, Got(db_->ListCounters()).size());
  uint64_t markers = 0;
  for (const CounterInfo& c : Got(db_->ListCounters())) {
    markers += Got(db_->CountMarkers(c.name));
  }
  EXPECT_EQ(report.markers, markers);
  EXPECT_EQ(report.reservations, 1u);
}

TEST_P(Admin, GetStatsCountsEveryOutcomeSinceOpen) {
  ASSERT_OK(db_->CreateCounter("c", CounterSpec{2}));
  CounterSpec windowed;
  windowed.dedupe_window_ms = kMinute;
  ASSERT_OK(db_->CreateCounter("w", windowed));
  CounterSpec stock;
  stock.bounds = CounterBounds::AtLeast(0);
  ASSERT_OK(db_->CreateCounter("stock", stock));
  ASSERT_OK(db_->Increment("c", 1));            // applied
  ASSERT_OK(db_->IncrementOnce("c", "e1", 1));  // applied
  ASSERT_OK(db_->IncrementOnce("c", "e1", 1));  // duplicate
  ASSERT_OK(db_->IncrementOnce("c", "e1", 2));  // conflict
  ASSERT_OK(db_->IncrementOnce("w", "old", 1, OnceOptions{0, {}}));  // outside
  ASSERT_OK(db_->Increment("stock", -1));                            // refused
  EXPECT_FALSE(db_->Increment("nope", 1).ok());                      // rejected
  Batch b;
  b.Add("c", 1);
  b.AddOnce("c", "e2", 1);
  b.AddOnce("c", "e1", 1);
  std::vector<IncrementResult> r;
  ASSERT_OK(db_->Apply(b, &r));  // 2 applied, 1 duplicate
  const EngineStats s = GetStats(*db_);
  EXPECT_EQ(s.applied, 4u);
  EXPECT_EQ(s.duplicates, 2u);
  EXPECT_EQ(s.conflicts, 1u);
  EXPECT_EQ(s.outside_window, 1u);
  EXPECT_EQ(s.refused, 1u);
  EXPECT_EQ(s.rejected, 1u);
  EXPECT_EQ(s.origin.source, StatsSource::kThisProcess);
  EXPECT_TRUE(s.origin.live);
  // Counted since this Db was opened.
  Reopen();
  ASSERT_NE(db_, nullptr);
  EXPECT_EQ(GetStats(*db_).applied, 0u);
}

TEST_P(Admin, CompactKeepsEveryValueOrIsNotSupported) {
  ASSERT_NO_FATAL_FAILURE(Fill());
  const Status s = Compact(*db_);
  if (!backend().local_files) {
    EXPECT_TRUE(Fails(s, Code::kNotSupported));
    return;
  }
  ASSERT_OK(s);
  ExpectFilled(*db_);
}

TEST_P(Admin, ACheckpointOpensAsTheSameDatabaseOrIsNotSupported) {
  ASSERT_NO_FATAL_FAILURE(Fill());
  const std::string dir = Sub("checkpoint");
  const Status s = Checkpoint(*db_, dir);
  if (!backend().local_files) {
    EXPECT_TRUE(Fails(s, Code::kNotSupported));
    return;
  }
  ASSERT_OK(s);
  ASSERT_OK(db_->Increment("views", 100));  // after the checkpoint
  std::unique_ptr<Db> copy;
  ASSERT_OK(Db::Open(BaseOptions(), dir, &copy));
  ExpectFilled(*copy);
  EXPECT_EQ(Got(DatabaseId(*copy)), Got(DatabaseId(*db_)));
  // The copy is a database of its own.
  ASSERT_OK(copy->Increment("views", 1));
  EXPECT_EQ(Got(db_->ReadExact("views")), 103);
  EXPECT_EQ(Got(copy->ReadExact("views")), 4);
  // A checkpoint never overwrites.
  EXPECT_FALSE(Checkpoint(*db_, dir).ok());
}

// "Backup" in the name: the TSAN pass leaves backup tests out (scripts/dev:
// RocksDB's BackupEngine threads are not instrumented).
TEST_P(Admin, ABackupRestoresAsTheSameDatabaseOrIsNotSupported) {
  ASSERT_NO_FATAL_FAILURE(Fill());
  const std::string backups = Sub("backups");
  const Result<BackupInfo> first = CreateBackup(*db_, backups);
  if (!backend().local_files) {
    EXPECT_TRUE(Fails(first, Code::kNotSupported));
    return;
  }
  ASSERT_OK(first);
  ASSERT_OK(db_->Increment("views", 100));
  const BackupInfo second = Got(CreateBackup(*db_, backups));
  EXPECT_GT(second.id, first->id);
  std::vector<BackupInfo> list;
  ASSERT_OK(ListBackups(backups, &list));
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].id, first->id);
  EXPECT_EQ(list[1].id, second.id);
  ASSERT_OK(VerifyBackup(backups, first->id));
  ASSERT_OK(RestoreBackup(backups, first->id, Sub("restored")));
  std::unique_ptr<Db> restored;
  ASSERT_OK(Db::Open(BaseOptions(), Sub("restored"), &restored));
  ExpectFilled(*restored);
  EXPECT_EQ(Got(restored->IncrementOnce("views", "e7", 1)).outcome,
            Outcome::kDuplicate);
  EXPECT_TRUE(Fails(VerifyBackup(backups, second.id + 1), Code::kNotFound));
}

TEST_P(Admin, AReadOnlyInstanceReadsTheWriterAndRefusesWrites) {
  ASSERT_NO_FATAL_FAILURE(Fill());
  Options ro = BaseOptions();
  ro.read_only = true;
  std::unique_ptr<Db> reader;
  const Status s = TryOpen(ro, &reader);
  if (!backend().read_only_instances) {
    EXPECT_TRUE(Fails(s, Code::kNotSupported));
    return;
  }
  ASSERT_OK(s);
  ExpectFilled(*reader);
  EXPECT_EQ(Got(reader->GetMarker("views", "e3")).delta, 1);
  EXPECT_EQ(Got(reader->ReadHeld({"stock", "sku"})).held, 1);
  // Every write is refused.
  EXPECT_TRUE(Fails(reader->Increment("views", 1), Code::kNotSupported));
  EXPECT_TRUE(
      Fails(reader->IncrementOnce("views", "x", 1), Code::kNotSupported));
  EXPECT_TRUE(
      Fails(reader->CreateCounter("new", CounterSpec{}), Code::kNotSupported));
  EXPECT_TRUE(Fails(reader->DeleteCounter("views"), Code::kNotSupported));
  EXPECT_TRUE(Fails(reader->Claim("job-2", "w", kMinute), Code::kNotSupported));
  EXPECT_TRUE(Fails(reader->RollupNow(), Code::kNotSupported));
  // It sees the writer's later writes after a Refresh.
  ASSERT_OK(db_->Increment("views", 10));
  ASSERT_OK(db_->CreateCounter("later", CounterSpec{}));
  ASSERT_OK(reader->Refresh());
  EXPECT_EQ(Got(reader->ReadExact("views")), 13);
  EXPECT_EQ(Got(reader->ListCounters()).size(), 5u);
  EXPECT_EQ(Got(db_->ReadExact("views")), 13);
  ASSERT_OK(db_->Refresh());  // a writer is always current
}

TALLY_CONFORMANCE_SUITE(Admin);

}  // namespace
}  // namespace tally::conformance
