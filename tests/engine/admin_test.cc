// Marker listing, pending-operand counts, compaction and checkpoints.
#include <gtest/gtest.h>

#include "tally/limits.h"
#include "testutil/testutil.h"

namespace tally {
namespace {

using test::ManualClock;
using test::OpenOrDie;
using test::TempDir;

TEST(Admin, ListAndGetEvents) {
  TempDir dir;
  ManualClock clock(1000);
  Options o;
  o.clock = &clock;
  auto db = OpenOrDie(dir.path(), o);
  ASSERT_OK(db->CreateCounter("c", {4}));
  for (int i = 0; i < 10; ++i) {
    ASSERT_OK(db->IncrementOnce("c", "e" + std::to_string(i), i + 1));
    clock.Advance(100);  // e<i> created at 1000 + 100 * i
  }
  ListEventsOptions all;
  auto page = db->ListEvents("c", all);
  ASSERT_OK(page);
  ASSERT_EQ(page->size(), 10u);
  EXPECT_EQ((*page)[0].event_id, "e0");
  EXPECT_EQ((*page)[9].event_id, "e9");
  EXPECT_EQ((*page)[3].delta, 4);
  EXPECT_EQ((*page)[3].created_at_ms, 1300);

  ListEventsOptions paged;
  paged.limit = 4;
  std::vector<std::string> seen;
  for (;;) {
    auto p = db->ListEvents("c", paged);
    ASSERT_OK(p);
    for (const MarkerInfo& m : *p) seen.push_back(m.event_id);
    if (p->size() < paged.limit) break;
    paged.start_after = p->back().event_id;
  }
  ASSERT_EQ(seen.size(), 10u) << "paging must neither skip nor repeat";
  for (int i = 0; i < 10; ++i) EXPECT_EQ(seen[i], "e" + std::to_string(i));

  ListEventsOptions since;
  since.since_ms = 1700;
  auto recent = db->ListEvents("c", since);
  ASSERT_OK(recent);
  ASSERT_EQ(recent->size(), 3u);
  EXPECT_EQ(recent->front().event_id, "e7");

  auto one = db->GetEvent("c", "e5");
  ASSERT_OK(one);
  EXPECT_EQ(one->delta, 6);
  EXPECT_EQ(one->shard, db->IncrementOnce("c", "e5", 6)->shard);
  EXPECT_TRUE(db->GetEvent("c", "nope").status().IsNotFound());
  EXPECT_TRUE(db->GetEvent("c", "").status().IsInvalidArgument());
  ListEventsOptions bad;
  bad.limit = 0;
  EXPECT_TRUE(db->ListEvents("c", bad).status().IsInvalidArgument());
  bad.limit = kMaxListEvents + 1;
  EXPECT_TRUE(db->ListEvents("c", bad).status().IsInvalidArgument());
}

// Without the operand bound, increments pile up as operands; a compaction
// folds them and leaves every value as it was.
TEST(Admin, CompactFoldsPendingOperands) {
  TempDir dir;
  Options o;
  o.max_pending_operands = 0;
  auto db = OpenOrDie(dir.path(), o);
  ASSERT_OK(db->CreateCounter("c", {2}));
  for (int i = 0; i < 100; ++i) ASSERT_OK(db->Increment("c", 1));
  auto pending = db->PendingOperands("c");
  ASSERT_OK(pending);
  EXPECT_GE(*pending, 90u);
  ASSERT_OK(db->Compact());
  EXPECT_EQ(*db->PendingOperands("c"), 0u);
  EXPECT_EQ(*db->ReadExact("c"), 100);
}

TEST(Admin, CheckpointOpensAsADatabase) {
  TempDir dir;
  auto db = OpenOrDie(dir.Sub("db"));
  ASSERT_OK(db->CreateCounter("c", {3}));
  for (int i = 0; i < 20; ++i) ASSERT_OK(db->IncrementOnce("c", std::to_string(i), 2));
  ASSERT_OK(db->Checkpoint(dir.Sub("copy")));
  ASSERT_OK(db->Increment("c", 1000));  // after the checkpoint: not in it
  auto copy = OpenOrDie(dir.Sub("copy"));
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(*copy->ReadExact("c"), 40);
  EXPECT_EQ(*copy->CountEvents("c"), 20u);
  VerifyReport r;
  ASSERT_OK(copy->Verify(&r));
  EXPECT_TRUE(r.ok());
  EXPECT_FALSE(db->Checkpoint(dir.Sub("copy")).ok()) << "target exists";
}

// An operator's checkpoint while the app holds the database: taken from a
// read-only instance, it holds what the writer had committed, WAL included.
TEST(Admin, CheckpointFromReadOnlyBesideWriter) {
  TempDir dir;
  auto writer = OpenOrDie(dir.Sub("db"));
  ASSERT_OK(writer->CreateCounter("c", {2}));
  for (int i = 0; i < 30; ++i) ASSERT_OK(writer->IncrementOnce("c", std::to_string(i), 1));
  Options ro;
  ro.read_only = true;
  auto reader = OpenOrDie(dir.Sub("db"), ro);
  ASSERT_NE(reader, nullptr);
  ASSERT_OK(reader->Checkpoint(dir.Sub("copy")));
  auto copy = OpenOrDie(dir.Sub("copy"));
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(*copy->ReadExact("c"), 30);
  EXPECT_EQ(*copy->CountEvents("c"), 30u);
}

// The figures move with the data: markers grow the events family, a
// compaction moves memtable bytes into SST files.
TEST(Admin, DbStatsReflectTheData) {
  TempDir dir;
  auto db = OpenOrDie(dir.path());
  ASSERT_OK(db->CreateCounter("c", {4}));
  for (int i = 0; i < 500; ++i) ASSERT_OK(db->IncrementOnce("c", std::to_string(i), 1));
  ASSERT_OK(db->IncrementOnce("c", "0", 1));  // a duplicate
  auto before = db->GetDbStats();
  ASSERT_OK(before);
  EXPECT_EQ(before->engine.applied, 500u);
  EXPECT_EQ(before->engine.duplicates, 1u);
  EXPECT_GT(before->Family("events")->memtable_bytes, 0u);
  EXPECT_EQ(before->Family("events")->sst_bytes, 0u);
  EXPECT_GT(before->block_cache_capacity_bytes, 0u);
  EXPECT_TRUE(before->latched_error.empty());
  ASSERT_OK(db->Compact());
  auto after = db->GetDbStats();
  ASSERT_OK(after);
  EXPECT_GT(after->Family("events")->sst_bytes, 0u);
  EXPECT_GT(after->Family("shards")->sst_bytes, 0u);
  EXPECT_GE(after->Family("events")->estimated_keys, 400u);
  EXPECT_FALSE(after->writes_stopped);
}

// Regression (found by review): the writer compacts (flushing everything and
// dropping its WAL) after a reader opened; a checkpoint from the reader must
// still hold everything, not pair a stale MANIFEST with the new WAL.
TEST(Admin, CheckpointFromReadOnlyAfterWriterCompacted) {
  TempDir dir;
  auto writer = OpenOrDie(dir.Sub("db"));
  ASSERT_OK(writer->CreateCounter("c", {2}));
  for (int i = 0; i < 30; ++i) ASSERT_OK(writer->IncrementOnce("c", std::to_string(i), 1));
  Options ro;
  ro.read_only = true;
  auto reader = OpenOrDie(dir.Sub("db"), ro);
  ASSERT_NE(reader, nullptr);
  ASSERT_OK(writer->Compact());
  for (int i = 0; i < 5; ++i) ASSERT_OK(writer->Increment("c", 1));
  ASSERT_OK(reader->Checkpoint(dir.Sub("copy")));
  auto copy = OpenOrDie(dir.Sub("copy"));
  ASSERT_NE(copy, nullptr);
  auto value = copy->ReadExact("c");
  ASSERT_OK(value);
  EXPECT_EQ(*value, 35);
  EXPECT_EQ(*copy->CountEvents("c"), 30u);
}

TEST(Admin, ReadOnlyRefusesCompaction) {
  TempDir dir;
  auto writer = OpenOrDie(dir.path());
  ASSERT_OK(writer->CreateCounter("c", {1}));
  Options ro;
  ro.read_only = true;
  auto reader = OpenOrDie(dir.path(), ro);
  ASSERT_NE(reader, nullptr);
  EXPECT_TRUE(reader->Compact().IsNotSupported());
  EXPECT_OK(reader->PendingOperands("c"));
}

}  // namespace
}  // namespace tally
