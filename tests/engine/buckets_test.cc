// Time-bucketed counters: increments land in the UTC bucket of their event
// time, range reads sum the buckets they overlap, buckets past retention
// read as empty and are dropped by compaction, and all of it survives
// reopen. Time comes from a ManualClock: no sleeps.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/format.h"
#include "engine/rocksdb_options.h"
#include "tally/admin.h"
#include "tally/db.h"
#include "tally/limits.h"
#include "testutil/db_fixture.h"
#include "testutil/raw_db.h"
#include "testutil/testutil.h"

namespace tally {
namespace {

constexpr int64_t kMinute = 60'000;
constexpr int64_t kHour = 3'600'000;
constexpr int64_t kDay = 86'400'000;
// 2026-12-01T00:00:00Z, a UTC midnight.
constexpr int64_t kMidnight = 1'796'083'200'000;
static_assert(kMidnight % kDay == 0, "kMidnight must be a UTC midnight");

class Buckets : public test::DbMatrixTest {
 protected:
  Buckets() : DbMatrixTest(kMidnight + 12 * kHour) {}

  std::unique_ptr<Db> Open() {
    Options o = ClockOptions();
    o.rollup_interval_ms = 0;
    return DbMatrixTest::Open(o);
  }
  static CounterSpec Bucketed(uint32_t shards, BucketWidth width,
                              int64_t retention_ms = 0) {
    CounterSpec spec;
    spec.shards = shards;
    spec.bucket = width;
    spec.retention_ms = retention_ms;
    return spec;
  }
  static IncrementOptions At(int64_t t) { return IncrementOptions{{}, t}; }

  // Shard keys physically stored (raw RocksDB, after close).
  uint64_t StoredShardKeys() {
    test::RawDb raw(path());
    uint64_t n = 0;
    for (auto it = raw.Scan(engine::kShards); it->Valid(); it->Next()) {
      EXPECT_EQ(it->key().size(),
                static_cast<size_t>(engine::kBucketShardKeyBytes));
      ++n;
    }
    return n;
  }
};

TEST_P(Buckets, DayBucketsSplitAtUtcMidnight) {
  auto db = Open();
  ASSERT_OK(db->CreateCounter("orders", Bucketed(4, BucketWidth::kDay)));
  ASSERT_OK(db->Increment("orders", 1, At(kMidnight - 1)));  // yesterday
  ASSERT_OK(db->Increment("orders", 10, At(kMidnight)));     // today
  ASSERT_OK(db->Increment("orders", 100, At(kMidnight + kDay - 1)));
  ASSERT_OK(db->Increment("orders", 1000));  // now: today, noon
  EXPECT_EQ(test::OkValue(db->ReadRange("orders", kMidnight, kMidnight + kDay)),
            1110);
  EXPECT_EQ(test::OkValue(db->ReadRange("orders", kMidnight - kDay, kMidnight)),
            1);
  // A range takes every bucket it overlaps: one ms of each day is enough.
  EXPECT_EQ(
      test::OkValue(db->ReadRange("orders", kMidnight - 1, kMidnight + 1)),
      1111);
  EXPECT_EQ(test::OkValue(db->ReadExact("orders")), 1111);
  auto shards = db->ShardCounts("orders");
  ASSERT_OK(shards);
  int64_t sum = 0;
  for (int64_t v : *shards) sum += v;
  EXPECT_EQ(sum, 1111);
}

TEST_P(Buckets, MinuteAndHourBuckets) {
  auto db = Open();
  ASSERT_OK(db->CreateCounter("m", Bucketed(1, BucketWidth::kMinute)));
  ASSERT_OK(db->CreateCounter("h", Bucketed(2, BucketWidth::kHour)));
  for (int i = 0; i < 120; ++i) {
    const int64_t t = kMidnight + i * 30'000;  // every 30 s for an hour
    ASSERT_OK(db->Increment("m", 1, At(t)));
    ASSERT_OK(db->Increment("h", 1, At(t)));
  }
  EXPECT_EQ(test::OkValue(db->ReadRange("m", kMidnight, kMidnight + kMinute)),
            2);
  EXPECT_EQ(test::OkValue(db->ReadRange("m", kMidnight + 10 * kMinute,
                                        kMidnight + 20 * kMinute)),
            20);
  EXPECT_EQ(test::OkValue(db->ReadRange("h", kMidnight, kMidnight + kHour)),
            120);
  EXPECT_EQ(test::OkValue(
                db->ReadRange("h", kMidnight + kHour, kMidnight + 2 * kHour)),
            0);
}

TEST_P(Buckets, OnceIncrementsAndBatchesUseTheEventTime) {
  auto db = Open();
  ASSERT_OK(db->CreateCounter("c", Bucketed(8, BucketWidth::kHour)));
  auto r = db->IncrementOnce("c", "e1", 5, OnceOptions{kMidnight + kHour, {}});
  ASSERT_OK(r);
  EXPECT_EQ(r->outcome, Outcome::kApplied);
  // A redelivery is a duplicate whatever time it claims.
  r = db->IncrementOnce("c", "e1", 5, OnceOptions{kMidnight + 5 * kHour, {}});
  ASSERT_OK(r);
  EXPECT_EQ(r->outcome, Outcome::kDuplicate);

  Batch b;
  b.Add("c", 1, IncrementOptions{{}, kMidnight});
  b.Add("c", 2, IncrementOptions{{}, kMidnight + kHour + 1});
  b.AddOnce("c", "e2", 7, OnceOptions{kMidnight + 2 * kHour, {}});
  b.AddOnce("c", "e1", 5, OnceOptions{kMidnight, {}});
  std::vector<IncrementResult> results;
  ASSERT_OK(db->Apply(b, &results));
  EXPECT_EQ(results[3].outcome, Outcome::kDuplicate);
  EXPECT_EQ(test::OkValue(db->ReadRange("c", kMidnight, kMidnight + kHour)), 1);
  EXPECT_EQ(test::OkValue(
                db->ReadRange("c", kMidnight + kHour, kMidnight + 2 * kHour)),
            7);
  EXPECT_EQ(test::OkValue(db->ReadRange("c", kMidnight + 2 * kHour,
                                        kMidnight + 3 * kHour)),
            7);
  EXPECT_EQ(test::OkValue(db->ReadExact("c")), 15);
  EXPECT_GE(test::OkValue(tally::PendingOperands(*db, "c")), 0u);
  ASSERT_OK(db->RollupNow("c"));
  EXPECT_EQ(test::OkValue(db->ReadCached("c")).value, 15);

  VerifyReport report;
  ASSERT_OK(tally::Verify(*db, &report));
  EXPECT_TRUE(report.ok()) << report.problems.front();
}

TEST_P(Buckets, RetentionHidesThenCompactionDropsOldBuckets) {
  {
    auto db = Open();
    ASSERT_OK(db->CreateCounter("c", Bucketed(2, BucketWidth::kDay, 2 * kDay)));
    for (int d = 0; d < 3; ++d) {
      ASSERT_OK(db->Increment("c", 1 << d, At(kMidnight - d * kDay)));
    }
    ASSERT_OK(tally::Compact(*db));
    EXPECT_EQ(test::OkValue(db->ReadExact("c")), 7);
    // Now is noon on day 0. Day -2 ended at midnight of day -1: within
    // retention until day 1 00:00; move to day 1 00:00:00.001.
    clock_.Advance(12 * kHour + 1);
    EXPECT_EQ(test::OkValue(db->ReadExact("c")),
              3);  // day -2 (value 4) is past retention
    EXPECT_EQ(test::OkValue(
                  db->ReadRange("c", kMidnight - 2 * kDay, kMidnight + kDay)),
              3);
    // A late event for an expired bucket is refused, not silently lost.
    auto late = db->Increment("c", 1, At(kMidnight - 2 * kDay));
    EXPECT_TRUE(late.status().IsInvalidArgument());
    EXPECT_NE(late.status().message().find("past its retention"),
              std::string::npos)
        << late.status().ToString();
    ASSERT_OK(db->RollupNow("c"));
    EXPECT_EQ(test::OkValue(db->ReadCached("c")).value, 3);
  }
  EXPECT_EQ(StoredShardKeys(), 3u);  // not compacted since: still on disk
  {
    auto db = Open();
    ASSERT_OK(tally::Compact(*db));
    EXPECT_EQ(test::OkValue(db->ReadExact("c")), 3);
    VerifyReport report;
    ASSERT_OK(tally::Verify(*db, &report));
    EXPECT_TRUE(report.ok()) << report.problems.front();
  }
  EXPECT_EQ(StoredShardKeys(), 2u);
}

TEST_P(Buckets, SpecAndRangesAreCheckedAndKeptAcrossReopen) {
  {
    auto db = Open();
    CounterSpec bad = Bucketed(1, BucketWidth::kNone, kDay);
    Status s = db->CreateCounter("x", bad);
    EXPECT_TRUE(s.IsInvalidArgument());
    EXPECT_NE(s.message().find("needs a bucketed counter"), std::string::npos);
    bad = Bucketed(1, static_cast<BucketWidth>(9));
    s = db->CreateCounter("x", bad);
    EXPECT_TRUE(s.IsInvalidArgument());
    EXPECT_NE(s.message().find("bucket width 9"), std::string::npos);
    s = db->CreateCounter("x", Bucketed(1, BucketWidth::kDay,
                                        kMaxRetentionMs + 1));
    EXPECT_TRUE(s.IsInvalidArgument());

    ASSERT_OK(db->CreateCounter("plain", {1}));
    auto r = db->ReadRange("plain", 0, kDay);
    EXPECT_TRUE(r.status().IsInvalidArgument());
    EXPECT_NE(r.status().message().find("has no time buckets"),
              std::string::npos);
    ASSERT_OK(db->CreateCounter("c", Bucketed(3, BucketWidth::kHour, kDay)));
    r = db->ReadRange("c", kDay, kDay);
    EXPECT_TRUE(r.status().IsInvalidArgument());
    EXPECT_NE(r.status().message().find("is empty"), std::string::npos);
    r = db->ReadRange("c", -5, kDay);
    EXPECT_TRUE(r.status().IsInvalidArgument());
    auto inc = db->Increment("c", 1, At(kMaxEventTimeMs + 1));
    EXPECT_TRUE(inc.status().IsInvalidArgument());
    ASSERT_OK(db->Increment("c", 4, At(kMidnight + kHour)));
  }
  auto db = Open();
  auto info = db->DescribeCounter("c");
  ASSERT_OK(info);
  EXPECT_EQ(info->bucket, BucketWidth::kHour);
  EXPECT_EQ(info->retention_ms, kDay);
  EXPECT_EQ(test::OkValue(db->ReadRange("c", kMidnight, kMidnight + 2 * kHour)),
            4);
}

TALLY_WRITE_MODES(Buckets);

}  // namespace
}  // namespace tally
