// Item 15 (issue 12): with SyncOutbox's shard_by_edge every entry of an
// edge lands on one hub shard. An edge that spread +INT64_MAX, +1 and
// -INT64_MAX over three shards reads 1; the hub, which gets the three on one
// shard with a compaction between sync batches, must read 1 too, not the
// overflowed state.
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "engine/rules.h"
#include "tally/admin.h"
#include "tally/db.h"
#include "tally/outbox.h"
#include "tally/sync.h"
#include "testutil/db_fixture.h"
#include "testutil/testutil.h"

namespace tally {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

// An affinity key that puts an increment on `shard` of `shards`.
std::string KeyForShard(uint32_t shard, uint32_t shards) {
  for (int i = 0;; ++i) {
    std::string key = "k" + std::to_string(i);
    if (engine::ShardOfKey(key, shards) == shard) return key;
  }
}

class HubOverflow : public test::DbTest {};

TEST_F(HubOverflow, Item15_EdgeSpreadSumsPastInt64OnOneHubShard) {
  Options o;
  o.rollup_interval_ms = 0;
  auto edge = OpenAt("edge", o);
  auto hub = OpenAt("hub", o);
  CounterSpec spec;
  spec.shards = 3;
  spec.policy = ShardPolicy::kAffinity;
  spec.outbox = true;
  ASSERT_OK(edge->CreateCounter("c", spec));
  ASSERT_OK(hub->CreateCounter("c", {8}));
  const int64_t deltas[] = {kMax, 1, -kMax};
  for (uint32_t shard = 0; shard < 3; ++shard) {
    const std::string key = KeyForShard(shard, 3);
    IncrementOptions io;
    io.affinity_key = key;
    ASSERT_OK(edge->Increment("c", deltas[shard], io));
  }
  EXPECT_EQ(test::OkValue(edge->ReadExact("c")), 1);

  SyncOptions options;
  options.batch_entries = 1;  // one entry per hub write
  options.shard_by_edge = true;
  options.on_batch = [&](const SyncReport&) {
    ASSERT_OK(tally::Compact(*hub));
  };
  SyncReport report;
  ASSERT_OK(SyncOutbox(edge.get(), hub.get(), options, &report));
  EXPECT_EQ(report.applied, 3u);
  EXPECT_EQ(report.batches, 3u);

  EXPECT_EQ(test::OkValue(hub->ReadExact("c")), 1);
  auto shards = hub->ShardCounts("c");
  ASSERT_OK(shards);
  const uint32_t hub_shard =
      engine::ShardOfKey(test::OkValue(tally::DatabaseId(*edge)), 8);
  EXPECT_EQ((*shards)[hub_shard], 1);
  VerifyReport v;
  ASSERT_OK(tally::Verify(*hub, &v));
  EXPECT_TRUE(v.ok()) << v.problems.front();
  ASSERT_OK(tally::Compact(*hub));
  EXPECT_EQ(test::OkValue(hub->ReadExact("c")), 1);
}

// Between the batches the hub's shard is past int64: a read then says so
// (OutOfRange), and says the value is still there, not lost.
TEST_F(HubOverflow, Item15_ReadWhileBeyondInt64IsOutOfRangeThenRecovers) {
  auto db = Open();
  ASSERT_OK(db->CreateCounter("c", {1}));
  ASSERT_OK(db->Increment("c", kMax));
  ASSERT_OK(tally::Compact(*db));
  ASSERT_OK(db->Increment("c", 1));
  ASSERT_OK(tally::Compact(*db));
  Status s = db->ReadExact("c").status();
  EXPECT_TRUE(s.IsOutOfRange()) << s.ToString();
  EXPECT_NE(s.message().find("beyond int64"), std::string::npos)
      << s.ToString();
  EXPECT_TRUE(db->ShardCounts("c").status().IsOutOfRange());
  ASSERT_OK(db->Increment("c", -kMax));
  EXPECT_EQ(test::OkValue(db->ReadExact("c")), 1);
  ASSERT_OK(tally::Compact(*db));
  EXPECT_EQ(test::OkValue(db->ReadExact("c")), 1);
  EXPECT_EQ(test::OkValue(db->ShardCounts("c")).at(0), 1);
}

}  // namespace
}  // namespace tally
