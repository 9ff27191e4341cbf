// Time buckets on the cluster, where they are kept (docs/cluster.md, "Time
// buckets"): each bucket value carries its counter's retention as a TTL,
// its start is in its key's bucket index until it is past retention, and
// DeleteKey and DeleteCounter leave no bucket value or index behind. The
// keys are checked through the cluster client, as an operator would see
// them with redis-cli.

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cluster/app_client.h"
#include "cluster/cluster_target.h"
#include "core/buckets.h"
#include "tally/tally.h"
#include "testutil/testutil.h"

namespace tally::cluster {
namespace {

constexpr int64_t kHour = 3'600'000;
constexpr int64_t kDay = 24 * kHour;
constexpr int64_t kStart = 1'796'083'200'000;  // a UTC midnight

class BucketKeys : public ::testing::Test {
 protected:
  BucketKeys() : clock_(kStart + 12 * kHour) {}

  void SetUp() override {
    static int tests = 0;
    const std::string target =
        test::ClusterTarget("bkt" + std::to_string(++tests) + "-");
    if (target.empty()) GTEST_SKIP() << "no cluster: TALLY_REDIS_ENV is unset";
    Options o;
    o.clock = &clock_;
    ASSERT_OK(Db::Open(o, target, &db_));
    ASSERT_OK(test::ConnectAppClient(target, &keys_, &client_));
  }

  Reply Call(std::vector<std::string> args, const std::string& key) {
    return test::CallOn(client_.get(), std::move(args), key);
  }

  std::optional<std::string> Get(const std::string& key) {
    const Reply r = Call({"GET", key}, key);
    if (r.kind == Reply::Kind::kNil) return std::nullopt;
    return r.str;
  }

  // The bucket starts key `key` of counter `c` holds in shard `shard`.
  std::vector<std::string> Starts(const CounterInfo& c, uint32_t shard,
                                  const std::string& key) {
    const std::string tag = keys_->Tag(c, shard, key);
    const Reply r =
        Call({"ZRANGE", KeySpace::BucketIndex(tag, key), "0", "-1"}, tag);
    std::vector<std::string> out;
    for (const Reply& e : r.elements) out.push_back(e.str);
    return out;
  }

  std::string BucketKey(const CounterInfo& c, const std::string& key,
                        int64_t start) {
    return KeySpace::BucketValue(keys_->Tag(c, 0, key), key, start);
  }

  static IncrementOptions At(int64_t t) { return IncrementOptions{{}, t}; }

  test::ManualClock clock_;
  std::unique_ptr<Db> db_;
  std::unique_ptr<KeySpace> keys_;
  std::unique_ptr<ClusterClient> client_;
};

TEST_F(BucketKeys, ABucketValueLivesAsLongAsItsRetention) {
  CounterSpec spec{1};
  spec.bucket = BucketWidth::kDay;
  spec.retention_ms = 2 * kDay;
  ASSERT_OK(db_->CreateCounter("orders", spec));
  ASSERT_OK(db_->Increment("orders", 5));
  const CounterInfo c = db_->DescribeCounter("orders").value();
  const std::string value = BucketKey(c, "", kStart);
  EXPECT_EQ(Get(value), "5");
  const Reply ttl = Call({"PTTL", value}, value);
  ASSERT_EQ(ttl.kind, Reply::Kind::kInteger);
  // Its day ends in 12 h, is kept 2 days more, and 1 h of margin.
  const int64_t want = 12 * kHour + 2 * kDay + kHour;
  EXPECT_LE(ttl.integer, want);
  EXPECT_GT(ttl.integer, want - 60'000);
  EXPECT_EQ(Starts(c, 0, ""), std::vector<std::string>{std::to_string(kStart)});

  // A counter kept forever: no TTL.
  CounterSpec forever{1};
  forever.bucket = BucketWidth::kHour;
  ASSERT_OK(db_->CreateCounter("views", forever));
  ASSERT_OK(db_->Increment("views", 1));
  const CounterInfo v = db_->DescribeCounter("views").value();
  const std::string kept = BucketKey(v, "", kStart + 12 * kHour);
  EXPECT_EQ(Call({"PTTL", kept}, kept).integer, -1);
}

TEST_F(BucketKeys, StartsPastRetentionLeaveTheIndexOnTheNextWrite) {
  CounterSpec spec{1};
  spec.bucket = BucketWidth::kHour;
  spec.retention_ms = kHour;
  ASSERT_OK(db_->CreateCounter("c", spec));
  const CounterInfo c = db_->DescribeCounter("c").value();
  for (int h = 10; h <= 12; ++h) {
    ASSERT_OK(db_->Increment("c", 1, At(kStart + h * kHour)));
  }
  EXPECT_EQ(Starts(c, 0, "").size(), 3u);
  EXPECT_EQ(db_->ReadExact("c").value(), 3);
  // At 14:00 the 10:00 and 11:00 buckets ended more than an hour ago (past
  // retention); the 12:00 one ended 13:00, an hour ago: kept.
  clock_.Advance(2 * kHour);
  EXPECT_EQ(db_->ReadExact("c").value(), 1) << "reads skip them already";
  ASSERT_OK(db_->Increment("c", 1));
  EXPECT_EQ(Starts(c, 0, ""),
            (std::vector<std::string>{std::to_string(kStart + 12 * kHour),
                                      std::to_string(kStart + 14 * kHour)}));
  EXPECT_EQ(db_->ReadExact("c").value(), 2);
}

TEST_F(BucketKeys, DeletesLeaveNoBucketBehind) {
  CounterSpec spec{2};
  spec.keyed = true;
  spec.bucket = BucketWidth::kHour;
  ASSERT_OK(db_->CreateCounter("calls", spec));
  const CounterInfo c = db_->DescribeCounter("calls").value();
  for (const char* key : {"a", "b"}) {
    for (int h = 0; h < 3; ++h) {
      ASSERT_OK(db_->Increment(CounterRef("calls", key), 1,
                               At(kStart + h * kHour)));
    }
  }
  const auto kept = [&](const std::string& key) {
    size_t n = 0;
    for (uint32_t shard = 0; shard < c.shards; ++shard) {
      const std::string tag = keys_->Tag(c, shard, key);
      n += Starts(c, shard, key).size();
      for (int h = 0; h < 3; ++h) {
        n += Get(KeySpace::BucketValue(tag, key, kStart + h * kHour)) ? 1 : 0;
      }
    }
    return n;
  };
  EXPECT_EQ(kept("a"), 6u) << "3 starts and 3 values";
  ASSERT_OK(db_->DeleteKey("calls", "a"));
  EXPECT_EQ(kept("a"), 0u);
  EXPECT_EQ(kept("b"), 6u);
  EXPECT_EQ(db_->ReadKeys("calls", {"a", "b"}).value(),
            (std::vector<int64_t>{0, 3}));
  ASSERT_OK(db_->DeleteCounter("calls"));
  EXPECT_EQ(kept("b"), 0u);

  CounterSpec named{3};
  named.bucket = BucketWidth::kDay;
  ASSERT_OK(db_->CreateCounter("orders", named));
  for (int i = 0; i < 6; ++i) ASSERT_OK(db_->Increment("orders", 1));
  const CounterInfo o = db_->DescribeCounter("orders").value();
  ASSERT_OK(db_->DeleteCounter("orders"));
  for (uint32_t shard = 0; shard < o.shards; ++shard) {
    EXPECT_TRUE(Starts(o, shard, "").empty());
    EXPECT_EQ(Get(KeySpace::BucketValue(keys_->Tag(o, shard, ""), "", kStart)),
              std::nullopt);
  }
}

}  // namespace
}  // namespace tally::cluster
