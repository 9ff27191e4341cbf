// Import restores an exported counter exactly: values, shards, markers,
// flags; redeliveries after the move are still duplicates.
#include <gtest/gtest.h>

#include "engine/format.h"
#include "engine/shard_picker.h"
#include "testutil/testutil.h"

namespace tally {
namespace {

using test::OpenOrDie;
using test::TempDir;

// Copies every counter of `from` into `to` through the public API, the way
// counterctl export/import does (markers in pages).
void CopyAll(Db* from, Db* to) {
  for (const CounterInfo& c : *from->ListCounters()) {
    ASSERT_OK(to->ImportCounter(c));
    auto shards = from->ShardCounts(c.name);
    ASSERT_OK(shards);
    for (uint32_t i = 0; i < shards->size(); ++i) {
      if ((*shards)[i] != 0) {
        ASSERT_OK(to->ImportShardValue(c.name, i, (*shards)[i]));
      }
    }
    ListEventsOptions page;
    page.limit = 7;  // small pages: the copy must stitch them
    for (;;) {
      auto markers = from->ListEvents(c.name, page);
      ASSERT_OK(markers);
      ASSERT_OK(to->ImportMarkers(c.name, *markers));
      if (markers->size() < page.limit) break;
      page.start_after = markers->back().event_id;
    }
  }
}

TEST(Import, RoundTripIsExact) {
  TempDir dir;
  test::ManualClock clock(5000);
  Options o;
  o.clock = &clock;
  auto a = OpenOrDie(dir.Sub("a"), o);
  ASSERT_OK(a->CreateCounter("orders", {5}));
  ASSERT_OK(a->CreateCounter("views", {3, ShardPolicy::kAffinity}));
  for (int i = 0; i < 40; ++i) {
    ASSERT_OK(a->IncrementOnce("orders", "ord-" + std::to_string(i), i % 4 + 1));
    clock.Advance(10);
  }
  IncrementOptions dev;
  dev.affinity_key = "device-1";
  ASSERT_OK(a->Increment("views", 9, dev));
  ASSERT_OK(a->IncrementOnce("views", "v-1", 2));

  auto b = OpenOrDie(dir.Sub("b"));
  CopyAll(a.get(), b.get());
  for (const char* name : {"orders", "views"}) {
    EXPECT_EQ(*a->ReadExact(name), *b->ReadExact(name)) << name;
    EXPECT_EQ(*a->ShardCounts(name), *b->ShardCounts(name)) << name;
    EXPECT_EQ(*a->CountEvents(name), *b->CountEvents(name)) << name;
    auto ia = a->DescribeCounter(name), ib = b->DescribeCounter(name);
    EXPECT_EQ(ia->shards, ib->shards);
    EXPECT_EQ(ia->policy, ib->policy);
    EXPECT_EQ(ia->created_at_ms, ib->created_at_ms);
    EXPECT_EQ(ia->flags, ib->flags);
  }
  EXPECT_NE(b->DescribeCounter("views")->flags & engine::kCounterFlagPlainIncrements, 0u);
  EXPECT_EQ(b->GetEvent("orders", "ord-7")->created_at_ms,
            a->GetEvent("orders", "ord-7")->created_at_ms);
  VerifyReport r;
  ASSERT_OK(b->Verify(&r));
  EXPECT_TRUE(r.ok()) << (r.problems.empty() ? "" : r.problems[0]);
  EXPECT_EQ(r.sums_compared, 1u);
  // Exactly-once survives the move.
  EXPECT_EQ(b->IncrementOnce("orders", "ord-3", 4)->outcome, Outcome::kDuplicate);
}

TEST(Import, RefusesBadOrRepeatedMarkersWritingNothing) {
  TempDir dir;
  auto db = OpenOrDie(dir.path());
  CounterInfo info;
  info.name = "c";
  info.shards = 4;
  ASSERT_OK(db->ImportCounter(info));
  EXPECT_TRUE(db->ImportCounter(info).IsAlreadyExists());
  ASSERT_OK(db->IncrementOnce("c", "taken", 1));
  auto shard_of = [](const char* id) { return engine::ShardOfKey(id, 4); };

  Status wrong = db->ImportMarkers(
      "c", {MarkerInfo{"x", (shard_of("x") + 1) % 4, 1, 0}});
  EXPECT_TRUE(wrong.IsInvalidArgument()) << wrong.ToString();
  EXPECT_NE(wrong.message().find("hashes to shard"), std::string::npos);

  Status dup = db->ImportMarkers("c", {MarkerInfo{"new-1", shard_of("new-1"), 1, 0},
                                       MarkerInfo{"taken", shard_of("taken"), 1, 0}});
  EXPECT_TRUE(dup.IsAlreadyExists()) << dup.ToString();
  EXPECT_EQ(*db->CountEvents("c"), 1u) << "a refused import writes nothing";
  EXPECT_TRUE(db->GetEvent("c", "new-1").status().IsNotFound());
  EXPECT_TRUE(db->ImportShardValue("c", 4, 1).IsInvalidArgument());
  EXPECT_TRUE(db->ImportShardValue("nope", 0, 1).IsNotFound());
  ASSERT_OK(db->ImportMarkers("c", {MarkerInfo{"new-1", shard_of("new-1"), 1, 0}}));
  EXPECT_EQ(db->IncrementOnce("c", "new-1", 1)->outcome, Outcome::kDuplicate);
}

}  // namespace
}  // namespace tally
