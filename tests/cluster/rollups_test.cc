// Roll-ups on the cluster (docs/cluster.md, "Roll-ups"), where several
// clients share one stored roll-up per counter: an older scan never
// replaces a newer roll-up, only the client that made a roll-up knows the
// increments since, Options::rollup_interval_ms makes a cached read
// refresh a stale one, and a key whose shards sum beyond int64 is left out
// of the total and named.
//
// Public API only; without a cluster (TALLY_REDIS_ENV) the tests skip.

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cluster/api_checks.h"
#include "cluster/cluster_target.h"
#include "tally/limits.h"
#include "tally/tally.h"

namespace tally {
namespace {

constexpr int64_t kStart = 1'796'126'400'000;

class ClusterRollups : public ::testing::Test {
 protected:
  ClusterRollups() : early_(kStart), late_(kStart + 10'000) {}

  void SetUp() override {
    static int tests = 0;
    target_ = test::ClusterTarget("rollup" + std::to_string(++tests) + "-");
    if (target_.empty()) GTEST_SKIP() << "no cluster: TALLY_REDIS_ENV is unset";
    ASSERT_OK(Open(&early_, 0, &a_));
    ASSERT_OK(Open(&late_, 0, &b_));
  }

  Status Open(Clock* clock, uint32_t interval, std::unique_ptr<Db>* db) {
    Options o;
    o.clock = clock;
    o.rollup_interval_ms = interval;
    return Db::Open(o, target_, db);
  }

  test::TestClock early_, late_;
  std::string target_;
  std::unique_ptr<Db> a_, b_;  // a_ by early_, b_ by late_
};

TEST_F(ClusterRollups, AnOlderScanNeverReplacesANewerRollup) {
  ASSERT_OK(a_->CreateCounter("views", CounterSpec{4}));
  ASSERT_OK(a_->Increment("views", 5));
  ASSERT_OK(b_->RollupNow("views"));  // as of kStart + 10 s
  ASSERT_OK(a_->Increment("views", 7));
  ASSERT_OK(a_->RollupNow("views"));  // scanned at kStart: older
  const CachedValue cached = test::Got(a_->ReadCached("views"));
  EXPECT_EQ(cached.as_of_ms, kStart + 10'000);
  EXPECT_EQ(cached.value, 5);
  // The client whose roll-up is not the stored one cannot know the lag.
  EXPECT_FALSE(cached.lag_increments_known);
  const CachedValue by_b = test::Got(b_->ReadCached("views"));
  EXPECT_TRUE(by_b.lag_increments_known);
  EXPECT_EQ(by_b.lag_increments, 0u) << "b applied nothing since its roll-up";
}

TEST_F(ClusterRollups, AStaleRollupIsRefreshedByACachedRead) {
  std::unique_ptr<Db> every_second;
  ASSERT_OK(Open(&early_, 1000, &every_second));
  ASSERT_OK(a_->CreateCounter("c", CounterSpec{2}));
  ASSERT_OK(a_->Increment("c", 1));
  EXPECT_EQ(test::Got(every_second->ReadCached("c")).value, 1);
  ASSERT_OK(a_->Increment("c", 2));
  early_.Advance(999);
  EXPECT_EQ(test::Got(every_second->ReadCached("c")).value, 1);
  EXPECT_EQ(test::Got(a_->ReadCached("c")).value, 1)
      << "without an interval the stored roll-up answers";
  early_.Advance(1);
  const CachedValue fresh = test::Got(every_second->ReadCached("c"));
  EXPECT_EQ(fresh.value, 3);
  EXPECT_EQ(fresh.lag_ms, 0);
}

TEST_F(ClusterRollups, AKeyBeyondInt64IsLeftOutAndNamed) {
  CounterSpec keyed{2};
  keyed.keyed = true;
  ASSERT_OK(a_->CreateCounter("k", keyed));
  ASSERT_OK(a_->Increment({"k", "small"}, 3));
  // Each shard holds at most int64: fill both with the maximum.
  const CounterRef big("k", "big");
  for (int i = 0; i < 64; ++i) {
    const std::vector<int64_t> shards = test::Got(a_->ShardCounts(big));
    if (shards[0] == kMaxDelta && shards[1] == kMaxDelta) break;
    const Result<IncrementResult> r = a_->Increment(big, kMaxDelta);
    ASSERT_TRUE(r.ok() || r.status().IsOutOfRange()) << r.status().ToString();
  }
  ASSERT_TRUE(a_->ReadExact(big).status().IsOutOfRange());
  const Result<CachedValue> cached = a_->ReadCached("k");
  ASSERT_TRUE(cached.status().IsOutOfRange()) << cached.status().ToString();
  EXPECT_NE(cached.status().message().find("'big'"), std::string::npos)
      << cached.status().ToString();
  const TopKeysResult top = test::Got(a_->TopKeys("k", 10));
  EXPECT_EQ(top.key_count, 2u);
  EXPECT_EQ(top.out_of_range_keys, 1u);
  EXPECT_EQ(top.first_out_of_range_key, "big");
  ASSERT_EQ(top.keys.size(), 1u);
  EXPECT_EQ(top.keys[0].key, "small");
  EXPECT_EQ(top.total, 3);
}

}  // namespace
}  // namespace tally
