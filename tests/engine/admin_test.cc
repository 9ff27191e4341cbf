// Marker listing, pending-operand counts, compaction and checkpoints.
#include <gtest/gtest.h>

#include "tally/admin.h"
#include "tally/checkpoint.h"
#include "tally/limits.h"
#include "testutil/db_fixture.h"
#include "testutil/testutil.h"

namespace tally {
namespace {

using test::ManualClock;

class Admin : public test::DbTest {};

TEST_F(Admin, ListAndGetEvents) {
  ManualClock clock(1000);
  Options o;
  o.clock = &clock;
  auto db = Open(o);
  ASSERT_OK(db->CreateCounter("c", {4}));
  for (int i = 0; i < 10; ++i) {
    ASSERT_OK(db->IncrementOnce("c", "e" + std::to_string(i), i + 1));
    clock.Advance(100);  // e<i> created at 1000 + 100 * i
  }
  ListMarkersOptions all;
  auto page = db->ListMarkers("c", all);
  ASSERT_OK(page);
  ASSERT_EQ(page->size(), 10u);
  EXPECT_EQ((*page)[0].event_id, "e0");
  EXPECT_EQ((*page)[9].event_id, "e9");
  EXPECT_EQ((*page)[3].delta, 4);
  EXPECT_EQ((*page)[3].created_at_ms, 1300);

  ListMarkersOptions paged;
  paged.limit = 4;
  std::vector<std::string> seen;
  for (;;) {
    auto p = db->ListMarkers("c", paged);
    ASSERT_OK(p);
    for (const MarkerInfo& m : *p) seen.push_back(m.event_id);
    if (p->size() < paged.limit) break;
    paged.start_after = p->back().event_id;
  }
  ASSERT_EQ(seen.size(), 10u) << "paging must neither skip nor repeat";
  for (int i = 0; i < 10; ++i) EXPECT_EQ(seen[i], "e" + std::to_string(i));

  ListMarkersOptions since;
  since.since_ms = 1700;
  auto recent = db->ListMarkers("c", since);
  ASSERT_OK(recent);
  ASSERT_EQ(recent->size(), 3u);
  EXPECT_EQ(recent->front().event_id, "e7");

  auto one = db->GetMarker("c", "e5");
  ASSERT_OK(one);
  EXPECT_EQ(one->delta, 6);
  EXPECT_EQ(one->shard, test::OkValue(db->IncrementOnce("c", "e5", 6)).shard);
  EXPECT_TRUE(db->GetMarker("c", "nope").status().IsNotFound());
  EXPECT_TRUE(db->GetMarker("c", "").status().IsInvalidArgument());
  ListMarkersOptions bad;
  bad.limit = 0;
  EXPECT_TRUE(db->ListMarkers("c", bad).status().IsInvalidArgument());
  bad.limit = kMaxListMarkers + 1;
  EXPECT_TRUE(db->ListMarkers("c", bad).status().IsInvalidArgument());
}

// Without the operand bound, increments pile up as operands; a compaction
// folds them and leaves every value as it was.
TEST_F(Admin, CompactFoldsPendingOperands) {
  Options o;
  o.max_pending_operands = 0;
  auto db = Open(o);
  ASSERT_OK(db->CreateCounter("c", {2}));
  for (int i = 0; i < 100; ++i) ASSERT_OK(db->Increment("c", 1));
  auto pending = tally::PendingOperands(*db, "c");
  ASSERT_OK(pending);
  EXPECT_GE(*pending, 90u);
  ASSERT_OK(tally::Compact(*db));
  EXPECT_EQ(test::OkValue(tally::PendingOperands(*db, "c")), 0u);
  EXPECT_EQ(test::OkValue(db->ReadExact("c")), 100);
}

TEST_F(Admin, CheckpointOpensAsADatabase) {
  auto db = Open();
  ASSERT_OK(db->CreateCounter("c", {3}));
  for (int i = 0; i < 20; ++i) ASSERT_OK(db->IncrementOnce("c", std::to_string(i), 2));
  ASSERT_OK(tally::Checkpoint(*db, Sub("copy")));
  ASSERT_OK(db->Increment("c", 1000));  // after the checkpoint: not in it
  auto copy = OpenAt("copy");
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(test::OkValue(copy->ReadExact("c")), 40);
  EXPECT_EQ(test::OkValue(copy->CountMarkers("c")), 20u);
  VerifyReport r;
  ASSERT_OK(tally::Verify(*copy, &r));
  EXPECT_TRUE(r.ok());
  EXPECT_FALSE(tally::Checkpoint(*db, Sub("copy")).ok()) << "target exists";
}

// An operator's checkpoint while the app holds the database: taken from a
// read-only instance, it holds what the writer had committed, WAL included.
TEST_F(Admin, CheckpointFromReadOnlyBesideWriter) {
  auto writer = Open();
  ASSERT_OK(writer->CreateCounter("c", {2}));
  for (int i = 0; i < 30; ++i) ASSERT_OK(writer->IncrementOnce("c", std::to_string(i), 1));
  Options ro;
  ro.read_only = true;
  auto reader = Open(ro);
  ASSERT_NE(reader, nullptr);
  ASSERT_OK(tally::Checkpoint(*reader, Sub("copy")));
  auto copy = OpenAt("copy");
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(test::OkValue(copy->ReadExact("c")), 30);
  EXPECT_EQ(test::OkValue(copy->CountMarkers("c")), 30u);
}

// The figures move with the data: markers grow the events family, a
// compaction moves memtable bytes into SST files.
TEST_F(Admin, DbStatsReflectTheData) {
  auto db = Open();
  ASSERT_OK(db->CreateCounter("c", {4}));
  for (int i = 0; i < 500; ++i) ASSERT_OK(db->IncrementOnce("c", std::to_string(i), 1));
  ASSERT_OK(db->IncrementOnce("c", "0", 1));  // a duplicate
  auto before = tally::GetDbStats(*db);
  ASSERT_OK(before);
  EXPECT_EQ(before->engine.applied, 500u);
  EXPECT_EQ(before->engine.duplicates, 1u);
  EXPECT_GT(before->Family("events")->memtable_bytes, 0u);
  EXPECT_EQ(before->Family("events")->sst_bytes, 0u);
  EXPECT_GT(before->block_cache_capacity_bytes, 0u);
  EXPECT_TRUE(before->latched_error.empty());
  ASSERT_OK(tally::Compact(*db));
  auto after = tally::GetDbStats(*db);
  ASSERT_OK(after);
  EXPECT_GT(after->Family("events")->sst_bytes, 0u);
  EXPECT_GT(after->Family("shards")->sst_bytes, 0u);
  EXPECT_GE(after->Family("events")->estimated_keys, 400u);
  EXPECT_FALSE(after->writes_stopped);
}

// Regression (found by review): the writer compacts (flushing everything and
// dropping its WAL) after a reader opened; a checkpoint from the reader must
// still hold everything, not pair a stale MANIFEST with the new WAL.
TEST_F(Admin, CheckpointFromReadOnlyAfterWriterCompacted) {
  auto writer = Open();
  ASSERT_OK(writer->CreateCounter("c", {2}));
  for (int i = 0; i < 30; ++i) ASSERT_OK(writer->IncrementOnce("c", std::to_string(i), 1));
  Options ro;
  ro.read_only = true;
  auto reader = Open(ro);
  ASSERT_NE(reader, nullptr);
  ASSERT_OK(tally::Compact(*writer));
  for (int i = 0; i < 5; ++i) ASSERT_OK(writer->Increment("c", 1));
  ASSERT_OK(tally::Checkpoint(*reader, Sub("copy")));
  auto copy = OpenAt("copy");
  ASSERT_NE(copy, nullptr);
  auto value = copy->ReadExact("c");
  ASSERT_OK(value);
  EXPECT_EQ(*value, 35);
  EXPECT_EQ(test::OkValue(copy->CountMarkers("c")), 30u);
}

TEST_F(Admin, ReadOnlyRefusesCompaction) {
  auto writer = Open();
  ASSERT_OK(writer->CreateCounter("c", {1}));
  Options ro;
  ro.read_only = true;
  auto reader = Open(ro);
  ASSERT_NE(reader, nullptr);
  EXPECT_TRUE(tally::Compact(*reader).IsNotSupported());
  EXPECT_OK(tally::PendingOperands(*reader, "c"));
}

}  // namespace
}  // namespace tally
