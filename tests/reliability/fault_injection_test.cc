// Fault injection: the disk fails under a live database (writes, fsync, no
// space), through a RocksDB FileSystem wrapper passed in Options::env. The
// engine must return the error, latch it (every later write fails fast with
// the same error until reopen), never acknowledge a write it did not make,
// and after reopening on a healthy disk hold everything it acknowledged.

#include <gtest/gtest.h>
#include <rocksdb/env.h>

#include <memory>
#include <string>

#include "reliability/fault_fs.h"
#include "tally/admin.h"
#include "tally/db.h"
#include "testutil/testutil.h"

namespace tally {
namespace {

class FaultInjection : public ::testing::Test {
 protected:
  void SetUp() override {
    fs_ = std::make_shared<test::FaultFs>();
    env_ = rocksdb::NewCompositeEnv(fs_);
  }

  std::unique_ptr<Db> Open(bool sync = false) {
    Options o;
    o.sync = sync;
    // No background roll-up writes: the test's own call must be the first
    // to meet the injected fault.
    o.rollup_interval_ms = 0;
    return test::OpenOrDie(dir_.Sub("db"), o, env_.get());
  }

  // Acknowledged increments: `n` once-increments of 1..n on "c".
  int64_t Acknowledge(Db* db, int n, const std::string& prefix) {
    int64_t sum = 0;
    for (int i = 1; i <= n; ++i) {
      auto r = db->IncrementOnce("c", prefix + std::to_string(i), i);
      EXPECT_OK(r);
      if (r.ok() && r->outcome == Outcome::kApplied) sum += i;
    }
    return sum;
  }

  // After a fault: every write fails fast with the same code, naming the
  // first failure, also once the disk is healthy again, until reopen.
  void ExpectLatched(Db* db, const Status& first) {
    fs_->Heal();
    const int faults = fs_->injected();
    auto same = [&first](const Status& s) {
      return s.code() == first.code() &&
             s.ToString().find("First failure: " + first.ToString()) !=
                 std::string::npos;
    };
    auto again = db->Increment("c", 1);
    EXPECT_TRUE(same(again.status())) << again.status().ToString();
    auto once = db->IncrementOnce("c", "after-fault", 1);
    EXPECT_TRUE(same(once.status())) << once.status().ToString();
    Batch b;
    b.Add("c", 1);
    std::vector<IncrementResult> results;
    Status batch = db->Apply(b, &results);
    EXPECT_TRUE(same(batch)) << batch.ToString();
    EXPECT_TRUE(results.empty());
    Status create = db->CreateCounter("new", {1});
    EXPECT_TRUE(same(create)) << create.ToString();
    EXPECT_EQ(fs_->injected(), faults);  // healed: nothing new was injected
  }

  // Reopens on the healed disk: the value is what was acknowledged (the
  // failed write never reached the file, so it is not there either), and
  // Verify is clean.
  void ExpectAcknowledged(std::unique_ptr<Db> db, int64_t acknowledged) {
    db.reset();
    fs_->Heal();
    auto reopened = Open();
    ASSERT_NE(reopened, nullptr);
    auto v = reopened->ReadExact("c");
    ASSERT_OK(v);
    EXPECT_EQ(*v, acknowledged);
    VerifyReport report;
    ASSERT_OK(tally::Verify(*reopened, &report));
    EXPECT_TRUE(report.ok()) << report.problems.front();
    // The database takes writes again.
    ASSERT_OK(reopened->Increment("c", 1));
  }

  test::TempDir dir_;
  std::shared_ptr<test::FaultFs> fs_;
  std::unique_ptr<rocksdb::Env> env_;
};

TEST_F(FaultInjection, WalWriteErrorIsReturnedLatchedAndNothingIsLost) {
  auto db = Open();
  ASSERT_OK(db->CreateCounter("c", {4}));
  const int64_t acked = Acknowledge(db.get(), 50, "a-");
  fs_->Inject(test::Fault::kWriteError, ".log");
  auto failed = db->IncrementOnce("c", "lost", 1000);
  ASSERT_FALSE(failed.ok());
  EXPECT_TRUE(failed.status().IsIOError()) << failed.status().ToString();
  EXPECT_NE(failed.status().ToString().find("injected write failure"),
            std::string::npos)
      << failed.status().ToString();
  EXPECT_GE(fs_->injected(), 1);
  ExpectLatched(db.get(), failed.status());
  ExpectAcknowledged(std::move(db), acked);
}

TEST_F(FaultInjection, NoSpaceSaysSoAndIsLatched) {
  auto db = Open();
  ASSERT_OK(db->CreateCounter("c", {4}));
  const int64_t acked = Acknowledge(db.get(), 20, "a-");
  fs_->Inject(test::Fault::kNoSpace, ".log");
  Batch b;
  for (int i = 0; i < 10; ++i) b.AddOnce("c", "b-" + std::to_string(i), 7);
  std::vector<IncrementResult> results;
  Status s = db->Apply(b, &results);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find("no space left"), std::string::npos)
      << s.ToString();
  EXPECT_TRUE(results.empty());  // no result claims an increment
  ExpectLatched(db.get(), s);
  ExpectAcknowledged(std::move(db), acked);
}

// fsync fails after the data reached the OS: the increment is not
// acknowledged, yet it may be in the file after reopen. A redelivery of the
// same event must then count it exactly once either way.
TEST_F(FaultInjection, FsyncErrorIsNotAcknowledgedAndRetryCountsOnce) {
  auto db = Open(/*sync=*/true);
  ASSERT_OK(db->CreateCounter("c", {4}));
  const int64_t acked = Acknowledge(db.get(), 20, "a-");
  fs_->Inject(test::Fault::kSyncError, ".log");
  auto failed = db->IncrementOnce("c", "unsure", 1000);
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().ToString().find("injected fsync failure"),
            std::string::npos)
      << failed.status().ToString();
  ExpectLatched(db.get(), failed.status());
  db.reset();
  fs_->Heal();
  auto reopened = Open(/*sync=*/true);
  ASSERT_NE(reopened, nullptr);
  auto before = reopened->ReadExact("c");
  ASSERT_OK(before);
  EXPECT_TRUE(*before == acked || *before == acked + 1000) << *before;
  auto retry = reopened->IncrementOnce("c", "unsure", 1000);
  ASSERT_OK(retry);
  EXPECT_EQ(retry->outcome,
            *before == acked ? Outcome::kApplied : Outcome::kDuplicate);
  auto after = reopened->ReadExact("c");
  ASSERT_OK(after);
  EXPECT_EQ(*after, acked + 1000);
}

// A flush (background SST write) fails: Compact reports it and the database
// stops taking writes; the acknowledged increments are in the WAL.
TEST_F(FaultInjection, FlushErrorStopsWritesAndLosesNothing) {
  auto db = Open();
  ASSERT_OK(db->CreateCounter("c", {4}));
  const int64_t acked = Acknowledge(db.get(), 30, "a-");
  fs_->Inject(test::Fault::kWriteError, ".sst");
  Status compact = tally::Compact(*db);
  ASSERT_FALSE(compact.ok());
  EXPECT_NE(compact.ToString().find("injected write failure"),
            std::string::npos)
      << compact.ToString();
  fs_->Heal();
  auto write = db->Increment("c", 1);
  ASSERT_FALSE(write.ok()) << "a write was acknowledged after a failed flush";
  ExpectLatched(db.get(), write.status());
  ExpectAcknowledged(std::move(db), acked);
}

}  // namespace
}  // namespace tally
