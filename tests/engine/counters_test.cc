// Counter lifecycle: create, describe, list, delete, reopen.
#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include <atomic>
#include <thread>

#include "engine/coding.h"
#include "engine/rocksdb_options.h"
#include "tally/admin.h"
#include "testutil/db_fixture.h"
#include "testutil/raw_db.h"
#include "testutil/testutil.h"

namespace tally {
namespace {

using test::ManualClock;

class Counters : public test::DbTest {};

TEST_F(Counters, CreateDescribeListDelete) {
  ManualClock clock(1'700'000'000'000);
  Options options;
  options.clock = &clock;
  auto db = Open(options);
  ASSERT_OK(db->CreateCounter("orders-today", {10, ShardPolicy::kRandom}));
  ASSERT_OK(db->CreateCounter("likes", {1, ShardPolicy::kAffinity}));

  auto info = db->DescribeCounter("orders-today");
  ASSERT_OK(info);
  EXPECT_EQ(info->name, "orders-today");
  EXPECT_EQ(info->shards, 10u);
  EXPECT_EQ(info->policy, ShardPolicy::kRandom);
  EXPECT_EQ(info->schema_version, 1u);
  EXPECT_EQ(info->created_at_ms, 1'700'000'000'000);

  auto list = db->ListCounters();
  ASSERT_OK(list);
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].name, "likes");  // ordered by name
  EXPECT_EQ((*list)[1].name, "orders-today");
  EXPECT_NE((*list)[0].id, (*list)[1].id);

  EXPECT_TRUE(db->CreateCounter("likes", {1}).IsAlreadyExists());
  ASSERT_OK(db->DeleteCounter("likes"));
  EXPECT_TRUE(db->DescribeCounter("likes").status().IsNotFound());
  EXPECT_TRUE(db->DeleteCounter("likes").IsNotFound());
  ASSERT_EQ(test::OkValue(db->ListCounters()).size(), 1u);
}

// Re-creating a deleted name must not resurrect its shards or markers.
TEST_F(Counters, RecreatedNameStartsEmpty) {
  auto db = Open();
  ASSERT_OK(db->CreateCounter("c", {4}));
  const uint64_t old_id = test::OkValue(db->DescribeCounter("c")).id;
  ASSERT_OK(db->Increment("c", 5));
  ASSERT_OK(db->IncrementOnce("c", "evt-1", 7));
  ASSERT_OK(db->DeleteCounter("c"));
  ASSERT_OK(db->CreateCounter("c", {4}));
  EXPECT_NE(test::OkValue(db->DescribeCounter("c")).id, old_id);
  EXPECT_EQ(test::OkValue(db->ReadExact("c")), 0);
  EXPECT_EQ(test::OkValue(db->CountMarkers("c")), 0u);
  auto again = db->IncrementOnce("c", "evt-1", 7);
  ASSERT_OK(again);
  EXPECT_EQ(again->outcome, Outcome::kApplied);
}

// Everything survives a close and reopen; ids are never reused.
TEST_F(Counters, ReopenKeepsCountersValuesAndMarkers) {
  uint64_t deleted_id;
  {
    auto db = Open();
    ASSERT_OK(db->CreateCounter("a", {3}));
    ASSERT_OK(db->CreateCounter("gone", {1}));
    deleted_id = test::OkValue(db->DescribeCounter("gone")).id;
    ASSERT_OK(db->DeleteCounter("gone"));
    for (int i = 0; i < 100; ++i) ASSERT_OK(db->Increment("a", 2));
    ASSERT_OK(db->IncrementOnce("a", "e1", 11));
  }
  auto db = Open();
  EXPECT_EQ(test::OkValue(db->ReadExact("a")), 211);
  EXPECT_EQ(test::OkValue(db->CountMarkers("a")), 1u);
  EXPECT_EQ(test::OkValue(db->IncrementOnce("a", "e1", 11)).outcome,
            Outcome::kDuplicate);
  EXPECT_TRUE(db->DescribeCounter("gone").status().IsNotFound());
  ASSERT_OK(db->CreateCounter("new", {1}));
  EXPECT_GT(test::OkValue(db->DescribeCounter("new")).id, deleted_id);
}

// A delete racing with increments of the same counter leaves no orphaned
// shard or marker keys behind: increments hold the catalog's shared lock
// through their commit, the delete takes it exclusively.
TEST_F(Counters, DeleteRacingIncrementsLeavesNoOrphans) {
  uint64_t id;
  {
    auto db = Open();
    ASSERT_OK(db->CreateCounter("c", {4}));
    id = test::OkValue(db->DescribeCounter("c")).id;
    std::atomic<bool> deleting{false};
    std::atomic<int> after_delete{0};
    std::vector<std::thread> writers;
    // Each writer runs until the delete refuses it (NotFound), so every one
    // is still writing when the delete lands, however fast either side is
    // (issue 28, item 16: 3,000 writes each could all end before it).
    for (int t = 0; t < 4; ++t) {
      writers.emplace_back([&, t] {
        for (int i = 0;; ++i) {
          auto r = (i % 2) ? db->Increment("c", 1)
                           : db->IncrementOnce("c", std::to_string(t * 10000000 + i), 1);
          if (!r.ok()) {
            EXPECT_TRUE(r.status().IsNotFound()) << r.status().ToString();
            EXPECT_TRUE(deleting.load());
            after_delete.fetch_add(1);
            return;
          }
        }
      });
    }
    // Delete once the writers are demonstrably running.
    while (tally::GetStats(*db).applied < 500) std::this_thread::yield();
    deleting = true;
    ASSERT_OK(db->DeleteCounter("c"));
    for (auto& w : writers) w.join();
    EXPECT_EQ(after_delete.load(), 4);
  }
  test::RawDb raw(path());
  ASSERT_NE(raw.db(), nullptr);
  for (engine::Family family : {engine::kShards, engine::kEvents}) {
    int left = 0;
    for (auto it = raw.Scan(family); it->Valid(); it->Next()) {
      EXPECT_NE(engine::DecodeFixed64BE(it->key().data()), id);
      ++left;
    }
    EXPECT_EQ(left, 0) << "family " << family;
  }
}

}  // namespace
}  // namespace tally
