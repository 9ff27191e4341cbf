// What an acknowledgement means with the target's replicas=N (WAIT N on
// the write's connection): a write N replicas did not confirm in wait_ms
// is not acknowledged (IOError saying so), though its master holds it; one
// they confirmed is. The test cluster has one replica per master, so
// replicas=1 is met and replicas=2 never is.
//
// Public API only; without a cluster (TALLY_REDIS_ENV) the tests skip.

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "cluster/cluster_target.h"
#include "tally/tally.h"

namespace tally {
namespace {

TEST(Durability, AWriteItsReplicaConfirmedIsAcknowledged) {
  const std::string target = test::ClusterTarget("dura");
  if (target.empty()) GTEST_SKIP() << "no cluster: TALLY_REDIS_ENV is unset";
  std::unique_ptr<Db> db;
  ASSERT_TRUE(Db::Open(Options(), target + "?replicas=1&wait_ms=2000", &db)
                  .ok());
  ASSERT_TRUE(db->CreateCounter("c", CounterSpec{4}).ok());
  for (int i = 0; i < 20; ++i) {
    Result<IncrementResult> r =
        db->IncrementOnce("c", "e" + std::to_string(i), 1);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
  EXPECT_EQ(db->ReadExact("c").value(), 20);
}

TEST(Durability, AWriteTooFewReplicasConfirmedIsNotAcknowledged) {
  const std::string target = test::ClusterTarget("durb");
  if (target.empty()) GTEST_SKIP() << "no cluster: TALLY_REDIS_ENV is unset";
  std::unique_ptr<Db> plain;
  ASSERT_TRUE(Db::Open(Options(), target, &plain).ok());
  ASSERT_TRUE(plain->CreateCounter("c", CounterSpec{1}).ok());
  std::unique_ptr<Db> db;
  ASSERT_TRUE(
      Db::Open(Options(), target + "?replicas=2&wait_ms=50", &db).ok());
  Result<IncrementResult> r = db->IncrementOnce("c", "e1", 5);
  ASSERT_TRUE(r.status().IsIOError()) << r.status().ToString();
  EXPECT_NE(r.status().message().find("1 of the 2 replicas"),
            std::string::npos)
      << r.status().ToString();
  // The master holds it: a retry under the event id answers what it
  // counted, and never counts it twice.
  Result<IncrementResult> again = plain->IncrementOnce("c", "e1", 5);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again.value().outcome, Outcome::kDuplicate);
  EXPECT_EQ(plain->ReadExact("c").value(), 5);
}

// The records written by guarded compare-and-sets (reservations, claims,
// roll-ups) are acknowledged as every write is: not when too few replicas
// confirmed them.
TEST(Durability, GuardedWritesTooFewReplicasConfirmedAreNotAcknowledged) {
  const std::string target = test::ClusterTarget("durg");
  if (target.empty()) GTEST_SKIP() << "no cluster: TALLY_REDIS_ENV is unset";
  std::unique_ptr<Db> plain;
  ASSERT_TRUE(Db::Open(Options(), target, &plain).ok());
  CounterSpec stock;
  stock.bounds = CounterBounds::AtLeast(0);
  ASSERT_TRUE(plain->CreateCounter("stock", stock).ok());
  ASSERT_TRUE(plain->Increment("stock", 10).ok());
  std::unique_ptr<Db> db;
  ASSERT_TRUE(
      Db::Open(Options(), target + "?replicas=2&wait_ms=50", &db).ok());
  for (const Status& s :
       {db->Reserve("stock", "cart", 2, 60'000).status(),
        db->Claim("job", "w1", 60'000).status(), db->RollupNow("stock")}) {
    EXPECT_TRUE(s.IsIOError()) << s.ToString();
    EXPECT_NE(s.message().find("1 of the 2 replicas"), std::string::npos)
        << s.ToString();
  }
  // On the master all the same: a retry answers what was written.
  const Result<ReservationResult> again = plain->Reserve("stock", "cart", 2,
                                                         60'000);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again.value().outcome, Outcome::kDuplicate);
}

// read_from=replicas: reads go to each slot's replica; what a replica
// confirmed before the write was acknowledged (replicas=1) is there.
TEST(Durability, ReplicaReadsSeeWhatTheReplicasConfirmed) {
  const std::string target = test::ClusterTarget("durc");
  if (target.empty()) GTEST_SKIP() << "no cluster: TALLY_REDIS_ENV is unset";
  std::unique_ptr<Db> writer;
  ASSERT_TRUE(
      Db::Open(Options(), target + "?replicas=1&wait_ms=2000", &writer).ok());
  std::unique_ptr<Db> reader;
  ASSERT_TRUE(
      Db::Open(Options(), target + "?read_from=replicas", &reader).ok());
  ASSERT_TRUE(writer->CreateCounter("c", CounterSpec{8}).ok());
  for (int i = 0; i < 40; ++i) {
    ASSERT_TRUE(writer->IncrementOnce("c", "e" + std::to_string(i), 2).ok());
  }
  Result<int64_t> v = reader->ReadExact("c");
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v.value(), 80);
  EXPECT_EQ(reader->CountMarkers("c").value(), 40u);
  std::unique_ptr<Db> bad;
  EXPECT_TRUE(Db::Open(Options(), target + "?read_from=nearest", &bad)
                  .IsInvalidArgument());
}

}  // namespace
}  // namespace tally
