// Two clients of one database on the cluster (two processes, or two Db
// handles of one): each caches the catalog, so one must notice when the
// other deletes a counter, or deletes it and creates it again under the
// same name (a new id). A stale client must neither count into the deleted
// counter (an increment lost with it) nor read its old values: a write or
// read of a deleted counter answers NotFound, and one of a re-created name
// reaches the new counter.
//
// Public API only; without a cluster (TALLY_REDIS_ENV) the tests skip.

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "cluster/cluster_target.h"
#include "tally/tally.h"

namespace tally {
namespace {

class TwoClients : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string target = test::ClusterTarget(
        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    if (target.empty()) GTEST_SKIP() << "no cluster: TALLY_REDIS_ENV is unset";
    ASSERT_TRUE(Db::Open(Options(), target, &a_).ok());
    ASSERT_TRUE(Db::Open(Options(), target, &b_).ok());
    target_ = target;
  }

  std::string target_;
  std::unique_ptr<Db> a_;
  std::unique_ptr<Db> b_;
};

// Options::read_only on a cluster: a client whose writes are refused and
// whose reads are live (no Refresh needed, none refused).
TEST_F(TwoClients, AReadOnlyClientReadsLiveAndRefusesWrites) {
  Options ro;
  ro.read_only = true;
  std::unique_ptr<Db> reader;
  ASSERT_TRUE(Db::Open(ro, target_, &reader).ok());
  ASSERT_TRUE(a_->CreateCounter("c", CounterSpec{4}).ok());
  CounterSpec keyed{2};
  keyed.keyed = true;
  ASSERT_TRUE(a_->CreateCounter("k", keyed).ok());
  ASSERT_TRUE(a_->IncrementOnce("c", "e1", 3).ok());
  ASSERT_TRUE(a_->Increment(CounterRef("k", "p"), 2).ok());
  EXPECT_EQ(reader->ReadExact("c").value(), 3);
  EXPECT_EQ(reader->GetMarker("c", "e1").value().delta, 3);
  EXPECT_EQ(reader->ListCounters().value().size(), 2u);
  const auto refused = [](const Status& s) {
    return s.IsNotSupported() &&
           s.message().find("read-only") != std::string::npos;
  };
  EXPECT_TRUE(refused(reader->Increment("c", 1).status()));
  EXPECT_TRUE(refused(reader->IncrementOnce("c", "e2", 1).status()));
  Batch b;
  b.AddOnce("c", "e3", 1);
  std::vector<IncrementResult> results;
  EXPECT_TRUE(refused(reader->Apply(b, &results)));
  EXPECT_TRUE(refused(reader->CreateCounter("d", CounterSpec{})));
  EXPECT_TRUE(refused(reader->DeleteCounter("c")));
  EXPECT_TRUE(refused(reader->DeleteKey("k", "p")));
  // Nothing of those writes landed; the writer's next one is read at once.
  ASSERT_TRUE(a_->Increment("c", 10).ok());
  EXPECT_EQ(reader->ReadExact("c").value(), 13);
  EXPECT_EQ(reader->ReadKeys("k", {"p"}).value(), std::vector<int64_t>{2});
}

TEST_F(TwoClients, AStaleClientReachesTheRecreatedCounter) {
  ASSERT_TRUE(a_->CreateCounter("c", CounterSpec{4}).ok());
  ASSERT_TRUE(a_->Increment("c", 5).ok());
  ASSERT_TRUE(b_->IncrementOnce("c", "e1", 1).ok());  // b caches "c"
  ASSERT_EQ(b_->ReadExact("c").value(), 6);
  // a deletes "c" and creates it again: a new id, empty.
  ASSERT_TRUE(a_->DeleteCounter("c").ok());
  ASSERT_TRUE(a_->CreateCounter("c", CounterSpec{4}).ok());
  ASSERT_TRUE(a_->Increment("c", 2).ok());
  // b reads and writes the new counter, not the deleted one.
  Result<int64_t> read = b_->ReadExact("c");
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read.value(), 2);
  ASSERT_TRUE(b_->Increment("c", 1).ok());
  // The deleted counter's marker went with it: e1 counts in the new one.
  Result<IncrementResult> once = b_->IncrementOnce("c", "e1", 1);
  ASSERT_TRUE(once.ok()) << once.status().ToString();
  EXPECT_EQ(once.value().outcome, Outcome::kApplied);
  EXPECT_EQ(a_->ReadExact("c").value(), 4);
}

TEST_F(TwoClients, AStaleClientGetsNotFoundForADeletedCounter) {
  CounterSpec keyed{2};
  keyed.keyed = true;
  ASSERT_TRUE(a_->CreateCounter("c", CounterSpec{4}).ok());
  ASSERT_TRUE(a_->CreateCounter("k", keyed).ok());
  ASSERT_TRUE(b_->Increment("c", 1).ok());
  ASSERT_TRUE(b_->Increment(CounterRef("k", "post-1"), 1).ok());
  ASSERT_TRUE(a_->DeleteCounter("c").ok());
  ASSERT_TRUE(a_->DeleteCounter("k").ok());
  EXPECT_TRUE(b_->Increment("c", 1).status().IsNotFound());
  EXPECT_TRUE(b_->IncrementOnce("c", "e2", 1).status().IsNotFound());
  EXPECT_TRUE(b_->ReadExact("c").status().IsNotFound());
  EXPECT_TRUE(b_->ShardCounts("c").status().IsNotFound());
  EXPECT_TRUE(
      b_->Increment(CounterRef("k", "post-1"), 1).status().IsNotFound());
  EXPECT_TRUE(b_->ReadKeys("k", {"post-1"}).status().IsNotFound());
  // Nothing was counted into the deleted counters' keys meanwhile.
  EXPECT_TRUE(a_->ListCounters().value().empty());
}

// DatabaseId on a cluster: made once by the first writable client that
// asks, the same for every client after; a read-only client asking first
// gets NotFound and makes none.
TEST_F(TwoClients, EveryClientSeesOneDatabaseId) {
  Options ro;
  ro.read_only = true;
  std::unique_ptr<Db> reader;
  ASSERT_TRUE(Db::Open(ro, target_, &reader).ok());
  EXPECT_TRUE(DatabaseId(*reader).status().IsNotFound());
  const Result<std::string> id = DatabaseId(*a_);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  EXPECT_EQ(id.value().size(), 32u);
  EXPECT_EQ(DatabaseId(*b_).value(), id.value());
  EXPECT_EQ(DatabaseId(*reader).value(), id.value());
  EXPECT_EQ(DatabaseId(*a_).value(), id.value()) << "made once";
}

}  // namespace
}  // namespace tally
