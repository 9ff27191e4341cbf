// Verify on the cluster (docs/cluster.md, "Verify") finds the damage a
// client could leave with the app user's rights, or a bad operator write
// with redis-cli: a count without its marker, a malformed marker, a marker
// in another shard's tag, a tag without its live key, a malformed claim
// or reservation. Each is planted through the cluster client into a
// database the API wrote, which Verify first finds sound.

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "cluster/api_checks.h"
#include "cluster/app_client.h"
#include "cluster/cluster_target.h"
#include "cluster/records.h"
#include "core/shard_picker.h"
#include "tally/tally.h"

namespace tally::cluster {
namespace {

class VerifyCluster : public ::testing::Test {
 protected:
  void SetUp() override {
    static int tests = 0;
    const std::string target =
        test::ClusterTarget("verify" + std::to_string(++tests) + "-");
    if (target.empty()) GTEST_SKIP() << "no cluster: TALLY_REDIS_ENV is unset";
    ASSERT_OK(Db::Open(Options(), target, &db_));
    ASSERT_OK(test::ConnectAppClient(target, &keys_, &client_));
    CounterSpec keyed{2};
    keyed.keyed = true;
    ASSERT_OK(db_->CreateCounter("likes", keyed));
    for (const char* key : {"a", "b"}) {
      for (int i = 0; i < 5; ++i) {
        ASSERT_OK(db_->IncrementOnce({"likes", key}, "e" + std::to_string(i), 1));
      }
    }
    CounterSpec stock;
    stock.bounds = CounterBounds::AtLeast(0);
    ASSERT_OK(db_->CreateCounter("stock", stock));
    ASSERT_OK(db_->Increment("stock", 10));
    ASSERT_OK(db_->Reserve("stock", "cart", 2, 60'000));
    ASSERT_OK(db_->Claim("job", "w1", 60'000));
    likes_ = test::Got(db_->DescribeCounter("likes"));
  }

  // The problems Verify reports (the test fails when Verify fails).
  std::vector<std::string> Problems() {
    VerifyReport report;
    const Status s = Verify(*db_, &report);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return report.problems;
  }

  static bool Has(const std::vector<std::string>& problems,
                  const std::string& part) {
    for (const std::string& p : problems) {
      if (p.find(part) != std::string::npos) return true;
    }
    return false;
  }

  void Call(std::vector<std::string> args, const std::string& key) {
    const Reply r = test::CallOn(client_.get(), std::move(args), key);
    ASSERT_TRUE(r.ok()) << r.str;
  }

  // The tag of event `e` of key `key` of likes_ (its own shard).
  std::string TagOf(const std::string& key, const std::string& e) {
    return keys_->Tag(likes_, core::ShardOfKey(e, likes_.shards), key);
  }

  std::unique_ptr<Db> db_;
  std::unique_ptr<KeySpace> keys_;
  std::unique_ptr<ClusterClient> client_;
  CounterInfo likes_;
};

TEST_F(VerifyCluster, WhatTheApiWroteIsSound) {
  VerifyReport report;
  ASSERT_OK(Verify(*db_, &report));
  EXPECT_TRUE(report.ok()) << report.problems[0];
  EXPECT_EQ(report.counters, 2u);
  EXPECT_EQ(report.markers, 10u);
  EXPECT_EQ(report.reservations, 1u);
  EXPECT_EQ(report.sums_compared, 1u) << "likes: once-only, kept forever";
  EXPECT_EQ(report.keys_compared, 4u) << "keys a and b in each of 2 shards";
}

TEST_F(VerifyCluster, ACountWithoutItsMarkerIsFound) {
  const std::string tag = TagOf("a", "e0");
  Call({"INCRBY", KeySpace::Value(tag, "a"), "3"}, tag);
  EXPECT_TRUE(Has(Problems(), "key 'a': value"));
}

TEST_F(VerifyCluster, AMalformedOrMisplacedMarkerIsFound) {
  const std::string tag = TagOf("a", "e1");
  const std::string name = KeySpace::MarkerName("a", "e1");
  Call({"SET", KeySpace::Marker(tag, name), "m1 garbage"}, tag);
  EXPECT_TRUE(Has(Problems(), "is malformed"));
  MarkerInfo moved;
  moved.shard = 1 - core::ShardOfKey("e1", likes_.shards);
  moved.delta = 1;
  Call({"SET", KeySpace::Marker(tag, name), EncodeMarker(moved)}, tag);
  EXPECT_TRUE(Has(Problems(), "found in shard"));
}

TEST_F(VerifyCluster, ATagWithoutItsLiveKeyIsFound) {
  const std::string tag = TagOf("b", "e2");
  Call({"DEL", KeySpace::Live(tag)}, tag);
  EXPECT_TRUE(Has(Problems(), "no live key"));
}

TEST_F(VerifyCluster, MalformedClaimsAndReservationsAreFound) {
  const std::string claims = keys_->ClaimTag("job");
  Call({"SET", KeySpace::Claim(claims, "job"), "k1 0"}, claims);
  const CounterInfo stock = test::Got(db_->DescribeCounter("stock"));
  const std::string tag = keys_->Tag(stock, 0, "");
  Call({"SET", KeySpace::Holds(tag, ""), "h1 zz"}, tag);
  const std::vector<std::string> problems = Problems();
  EXPECT_TRUE(Has(problems, "claim record"));
  EXPECT_TRUE(Has(problems, ":h' are malformed")) << testing::PrintToString(problems);
}

}  // namespace
}  // namespace tally::cluster
