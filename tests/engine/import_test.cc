// Import restores an exported counter exactly: values, shards, markers,
// flags; redeliveries after the move are still duplicates.
#include "tally/import.h"

#include <gtest/gtest.h>

#include "engine/format.h"
#include "engine/rules.h"
#include "tally/admin.h"
#include "tally/limits.h"
#include "testutil/db_fixture.h"
#include "testutil/testutil.h"

namespace tally {
namespace {

using test::OpenOrDie;

// Copies every counter of `from` into `to` through the public API, the way
// counterctl export/import does (markers read in small pages).
void CopyAll(Db* from, Db* to) {
  for (const CounterInfo& c : test::OkValue(from->ListCounters())) {
    ASSERT_OK(tally::ImportCounter(*to, test::ExportedCounter(from, c, 7)));
  }
}

// `to` holds counter `name` exactly as `from` does.
void ExpectSame(Db* from, Db* to, const std::string& name) {
  EXPECT_EQ(test::OkValue(from->ReadExact(name)),
            test::OkValue(to->ReadExact(name)))
      << name;
  EXPECT_EQ(test::OkValue(from->ShardCounts(name)),
            test::OkValue(to->ShardCounts(name)))
      << name;
  EXPECT_EQ(test::OkValue(from->CountMarkers(name)),
            test::OkValue(to->CountMarkers(name)))
      << name;
}

class Import : public test::DbTest {};

TEST_F(Import, RoundTripIsExact) {
  test::ManualClock clock(5000);
  Options o;
  o.clock = &clock;
  auto a = OpenAt("a", o);
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

  auto b = OpenAt("b");
  CopyAll(a.get(), b.get());
  for (const char* name : {"orders", "views"}) {
    ExpectSame(a.get(), b.get(), name);
    ASSERT_OK_AND_ASSIGN(const CounterInfo ia, a->DescribeCounter(name));
    ASSERT_OK_AND_ASSIGN(const CounterInfo ib, b->DescribeCounter(name));
    EXPECT_EQ(ia.shards, ib.shards);
    EXPECT_EQ(ia.policy, ib.policy);
    EXPECT_EQ(ia.created_at_ms, ib.created_at_ms);
    EXPECT_EQ(ia.flags, ib.flags);
  }
  EXPECT_NE(test::OkValue(b->DescribeCounter("views")).flags &
                engine::kCounterFlagPlainIncrements,
            0u);
  EXPECT_EQ(test::OkValue(b->GetMarker("orders", "ord-7")).created_at_ms,
            test::OkValue(a->GetMarker("orders", "ord-7")).created_at_ms);
  VerifyReport r;
  ASSERT_OK(tally::Verify(*b, &r));
  EXPECT_TRUE(r.ok()) << (r.problems.empty() ? "" : r.problems[0]);
  EXPECT_EQ(r.sums_compared, 1u);
  // Exactly-once survives the move.
  EXPECT_EQ(test::OkValue(b->IncrementOnce("orders", "ord-3", 4)).outcome,
            Outcome::kDuplicate);
}

TEST_F(Import, RefusesBadOrRepeatedMarkersWritingNothing) {
  auto db = Open();
  CounterImport im;
  im.info.name = "c";
  im.info.shards = 4;
  auto shard_of = [](const char* id) { return engine::ShardOfKey(id, 4); };
  auto refused = [&](const CounterImport& bad) {
    Status s = tally::ImportCounter(*db, bad);
    EXPECT_FALSE(db->DescribeCounter("c").ok())
        << "a refused import writes nothing";
    return s;
  };

  CounterImport wrong = im;
  wrong.markers = {MarkerInfo{"x", (shard_of("x") + 1) % 4, 1, 0}};
  Status s = refused(wrong);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find("hashes to shard"), std::string::npos);

  CounterImport dup = im;
  dup.markers = {MarkerInfo{"new-1", shard_of("new-1"), 1, 0},
                 MarkerInfo{"new-1", shard_of("new-1"), 1, 0}};
  s = refused(dup);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();

  CounterImport short_values = im;
  short_values.shard_values = {1, 2};
  s = refused(short_values);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();

  im.shard_values = {0, 0, 0, 1};
  im.markers = {MarkerInfo{"new-1", shard_of("new-1"), 1, 0}};
  ASSERT_OK(tally::ImportCounter(*db, im));
  EXPECT_TRUE(tally::ImportCounter(*db, im).IsAlreadyExists());
  EXPECT_EQ(test::OkValue(db->ReadExact("c")), 1);
  EXPECT_EQ(test::OkValue(db->IncrementOnce("c", "new-1", 1)).outcome,
            Outcome::kDuplicate);
  EXPECT_EQ(test::OkValue(db->ReadExact("c")), 1);
}

// A source database for the cut tests: a once-counter with markers on every
// shard and a counter with plain and once increments.
void FillSource(Db* db) {
  ASSERT_OK(db->CreateCounter("orders", {5}));
  ASSERT_OK(db->CreateCounter("views", {3, ShardPolicy::kAffinity}));
  for (int i = 0; i < 40; ++i) {
    ASSERT_OK(
        db->IncrementOnce("orders", "ord-" + std::to_string(i), i % 4 + 1));
  }
  IncrementOptions dev;
  dev.affinity_key = "device-1";
  ASSERT_OK(db->Increment("views", 9, dev));
  ASSERT_OK(db->IncrementOnce("views", "v-1", 2));
}

// Item 6: an import killed at any write (every WAL append from the Nth on
// fails, so the disk holds what a SIGKILL there leaves) leaves each counter
// whole or absent; a rerun that skips existing counters then restores every
// count, and redelivered events are duplicates that count nothing.
TEST_F(Import, Item06_CutAtAnyWriteLeavesEachCounterWholeOrAbsent) {
  auto src = OpenAt("src");
  FillSource(src.get());
  const std::vector<CounterInfo> counters = test::OkValue(src->ListCounters());
  bool completed = false;
  for (int cut = 0; !completed && cut < 200; ++cut) {
    SCOPED_TRACE("cut after " + std::to_string(cut) + " WAL appends");
    const std::string path = Sub("dst-" + std::to_string(cut));
    completed = test::ImportCutAfter(src.get(), path, cut);
    {
      // A reader before any writer reopens: the unfinished import's keys
      // are there, but no counter shows them and Verify finds nothing.
      Options ro;
      ro.read_only = true;
      std::unique_ptr<Db> reader;
      ASSERT_OK(Db::Open(ro, path, &reader));
      for (const CounterInfo& c : counters) {
        if (reader->DescribeCounter(c.name).ok()) {
          ExpectSame(src.get(), reader.get(), c.name);
        }
      }
      VerifyReport report;
      ASSERT_OK(tally::Verify(*reader, &report));
      EXPECT_TRUE(report.ok()) << report.problems.front();
    }
    auto dst = OpenOrDie(path);
    for (const CounterInfo& c : counters) {
      if (dst->DescribeCounter(c.name).ok())
        ExpectSame(src.get(), dst.get(), c.name);
    }
    VerifyReport report;
    ASSERT_OK(tally::Verify(*dst, &report));
    EXPECT_TRUE(report.ok()) << report.problems.front();
    ASSERT_OK(test::ImportMissing(src.get(), dst.get()));
    for (const CounterInfo& c : counters)
      ExpectSame(src.get(), dst.get(), c.name);
    const int64_t orders = test::OkValue(dst->ReadExact("orders"));
    EXPECT_EQ(test::OkValue(dst->IncrementOnce("orders", "ord-3", 4)).outcome,
              Outcome::kDuplicate);
    EXPECT_EQ(test::OkValue(dst->IncrementOnce("views", "v-1", 2)).outcome,
              Outcome::kDuplicate);
    EXPECT_EQ(test::OkValue(dst->ReadExact("orders")), orders);
    EXPECT_EQ(test::OkValue(dst->ReadExact("views")),
              test::OkValue(src->ReadExact("views")));
  }
  EXPECT_TRUE(completed) << "the import never ran to its end";
}

// Item 6 with more markers than one write holds (kMaxBatchOps): a cut
// between the marker writes also leaves no counter.
TEST_F(Import, Item06_CutBetweenMarkerBatchesLeavesNoCounter) {
  auto src = OpenAt("src");
  ASSERT_OK(src->CreateCounter("bulk", {4}));
  Batch batch;
  std::vector<IncrementResult> results;
  for (size_t i = 0; i < kMaxBatchOps + 100; ++i) {
    batch.AddOnce("bulk", "b-" + std::to_string(i), 1);
    if (batch.ops().size() == kMaxBatchOps) {
      ASSERT_OK(src->Apply(batch, &results));
      batch = Batch();
    }
  }
  ASSERT_OK(src->Apply(batch, &results));
  bool completed = false;
  int partial = 0;
  for (int cut = 0; !completed && cut < 500; cut += 3) {
    SCOPED_TRACE("cut after " + std::to_string(cut) + " WAL appends");
    const std::string path = Sub("dst-" + std::to_string(cut));
    completed = test::ImportCutAfter(src.get(), path, cut);
    auto dst = OpenOrDie(path);
    if (dst->DescribeCounter("bulk").ok()) {
      ExpectSame(src.get(), dst.get(), "bulk");
    } else {
      ++partial;
      EXPECT_EQ(test::OkValue(dst->ListCounters()).size(), 0u);
    }
    ASSERT_OK(test::ImportMissing(src.get(), dst.get()));
    ExpectSame(src.get(), dst.get(), "bulk");
    EXPECT_EQ(test::OkValue(dst->IncrementOnce("bulk", "b-65600", 1)).outcome,
              Outcome::kDuplicate);
    EXPECT_EQ(test::OkValue(dst->ReadExact("bulk")),
              static_cast<int64_t>(kMaxBatchOps + 100));
  }
  EXPECT_TRUE(completed);
  EXPECT_GT(partial, 1) << "no cut fell inside the import";
  ::testing::Test::RecordProperty("partial", partial);
}

}  // namespace
}  // namespace tally
