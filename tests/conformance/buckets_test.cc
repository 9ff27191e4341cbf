// Conformance: time buckets (CounterSpec::bucket) and their retention.
// Increments count in the UTC bucket of their event time; ReadRange sums
// the buckets a range overlaps; buckets past retention read as empty and
// refuse new increments.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "conformance/conformance.h"
#include "tally/limits.h"

namespace tally::conformance {
namespace {

class Buckets : public ConformanceTest {
 protected:
  static CounterSpec Bucketed(uint32_t shards, BucketWidth width,
                              int64_t retention_ms = 0) {
    CounterSpec spec;
    spec.shards = shards;
    spec.bucket = width;
    spec.retention_ms = retention_ms;
    return spec;
  }
  static IncrementOptions At(int64_t t) { return IncrementOptions{{}, t}; }
};

TEST_P(Buckets, DayBucketsSplitAtUtcMidnight) {
  ASSERT_OK(db_->CreateCounter("orders", Bucketed(4, BucketWidth::kDay)));
  ASSERT_OK(db_->Increment("orders", 1, At(kMidnight - 1)));  // yesterday
  ASSERT_OK(db_->Increment("orders", 10, At(kMidnight)));     // today
  ASSERT_OK(db_->Increment("orders", 100, At(kMidnight + kDay - 1)));
  ASSERT_OK(db_->Increment("orders", 1000));  // now: today, noon
  EXPECT_EQ(Got(db_->ReadRange("orders", kMidnight, kMidnight + kDay)), 1110);
  EXPECT_EQ(Got(db_->ReadRange("orders", kMidnight - kDay, kMidnight)), 1);
  // A range takes every bucket it overlaps: one ms of each day is enough.
  EXPECT_EQ(Got(db_->ReadRange("orders", kMidnight - 1, kMidnight + 1)), 1111);
  EXPECT_EQ(
      Got(db_->ReadRange("orders", kMidnight + kDay, kMidnight + 2 * kDay)), 0);
  EXPECT_EQ(Got(db_->ReadExact("orders")), 1111);
  int64_t sum = 0;
  for (int64_t v : Got(db_->ShardCounts("orders"))) sum += v;
  EXPECT_EQ(sum, 1111);
}

TEST_P(Buckets, MinuteAndHourBuckets) {
  ASSERT_OK(db_->CreateCounter("m", Bucketed(1, BucketWidth::kMinute)));
  ASSERT_OK(db_->CreateCounter("h", Bucketed(2, BucketWidth::kHour)));
  for (int i = 0; i < 120; ++i) {
    const int64_t t = kMidnight + i * 30 * kSecond;  // every 30 s, an hour
    ASSERT_OK(db_->Increment("m", 1, At(t)));
    ASSERT_OK(db_->Increment("h", 1, At(t)));
  }
  EXPECT_EQ(Got(db_->ReadRange("m", kMidnight, kMidnight + kMinute)), 2);
  EXPECT_EQ(Got(db_->ReadRange("m", kMidnight + 10 * kMinute,
                               kMidnight + 20 * kMinute)),
            20);
  EXPECT_EQ(Got(db_->ReadRange("h", kMidnight, kMidnight + kHour)), 120);
  EXPECT_EQ(Got(db_->ReadRange("h", kMidnight + kHour, kMidnight + 2 * kHour)),
            0);
}

TEST_P(Buckets, OnceIncrementsAndBatchesCountAtTheirEventTime) {
  ASSERT_OK(db_->CreateCounter("c", Bucketed(8, BucketWidth::kHour)));
  EXPECT_EQ(
      Got(db_->IncrementOnce("c", "e1", 5, OnceOptions{kMidnight + kHour, {}}))
          .outcome,
      Outcome::kApplied);
  // A redelivery is a duplicate whatever time it claims.
  EXPECT_EQ(Got(db_->IncrementOnce("c", "e1", 5,
                                   OnceOptions{kMidnight + 5 * kHour, {}}))
                .outcome,
            Outcome::kDuplicate);
  Batch b;
  b.Add("c", 1, At(kMidnight));
  b.Add("c", 2, At(kMidnight + kHour + 1));
  b.AddOnce("c", "e2", 7, OnceOptions{kMidnight + 2 * kHour, {}});
  b.AddOnce("c", "e1", 5, OnceOptions{kMidnight, {}});
  std::vector<IncrementResult> r;
  ASSERT_OK(db_->Apply(b, &r));
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[3].outcome, Outcome::kDuplicate);
  EXPECT_EQ(Got(db_->ReadRange("c", kMidnight, kMidnight + kHour)), 1);
  EXPECT_EQ(Got(db_->ReadRange("c", kMidnight + kHour, kMidnight + 2 * kHour)),
            7);
  EXPECT_EQ(
      Got(db_->ReadRange("c", kMidnight + 2 * kHour, kMidnight + 3 * kHour)),
      7);
  EXPECT_EQ(Got(db_->ReadExact("c")), 15);
}

TEST_P(Buckets, RetentionHidesOldBucketsAndRefusesNewEventsIntoThem) {
  ASSERT_OK(db_->CreateCounter("c", Bucketed(2, BucketWidth::kDay, 2 * kDay)));
  for (int d = 0; d < 3; ++d) {
    ASSERT_OK(db_->Increment("c", 1 << d, At(kMidnight - d * kDay)));
  }
  ASSERT_OK(db_->IncrementOnce("c", "old-event", 8,
                               OnceOptions{kMidnight - 2 * kDay, {}}));
  EXPECT_EQ(Got(db_->ReadExact("c")), 15);
  // Day -2 ends at day -1's midnight and is kept 2 days past that: until
  // day 1 at 00:00. One ms later it reads as empty.
  clock_.Advance(12 * kHour);
  EXPECT_EQ(Got(db_->ReadExact("c")), 15);
  clock_.Advance(1);
  EXPECT_EQ(Got(db_->ReadExact("c")), 3);
  EXPECT_EQ(Got(db_->ReadRange("c", kMidnight - 2 * kDay, kMidnight + kDay)),
            3);
  EXPECT_EQ(Got(db_->ReadRange("c", kMidnight - 2 * kDay, kMidnight - kDay)),
            0);
  // A new increment into it is refused, not silently lost.
  EXPECT_TRUE(Fails(db_->Increment("c", 1, At(kMidnight - 2 * kDay)),
                    Code::kInvalidArgument));
  EXPECT_TRUE(Fails(db_->IncrementOnce("c", "new-event", 1,
                                       OnceOptions{kMidnight - 2 * kDay, {}}),
                    Code::kInvalidArgument));
  Batch b;
  b.Add("c", 1);
  b.Add("c", 1, At(kMidnight - 2 * kDay));
  std::vector<IncrementResult> r;
  EXPECT_TRUE(Fails(db_->Apply(b, &r), Code::kInvalidArgument, "batch op 1"));
  // A stored event's redelivery is answered by its marker.
  EXPECT_EQ(Got(db_->IncrementOnce("c", "old-event", 8,
                                   OnceOptions{kMidnight - 2 * kDay, {}}))
                .outcome,
            Outcome::kDuplicate);
  EXPECT_EQ(Got(db_->ReadExact("c")), 3);
}

TEST_P(Buckets, BadRangesAndSpecsAreRefused) {
  ASSERT_OK(db_->CreateCounter("plain", CounterSpec{1}));
  EXPECT_TRUE(Fails(db_->ReadRange("plain", 0, kDay), Code::kInvalidArgument));
  ASSERT_OK(db_->CreateCounter("c", Bucketed(3, BucketWidth::kHour, kDay)));
  EXPECT_TRUE(Fails(db_->ReadRange("c", kDay, kDay), Code::kInvalidArgument));
  EXPECT_TRUE(Fails(db_->ReadRange("c", kDay, 0), Code::kInvalidArgument));
  EXPECT_TRUE(Fails(db_->ReadRange("c", -5, kDay), Code::kInvalidArgument));
  EXPECT_TRUE(
      Fails(db_->CreateCounter("x", Bucketed(1, static_cast<BucketWidth>(9))),
            Code::kInvalidArgument));
  ASSERT_OK(db_->Increment("c", 4, At(kMidnight + kHour)));
  Reopen();
  ASSERT_NE(db_, nullptr);
  const CounterInfo info = Got(db_->DescribeCounter("c"));
  EXPECT_EQ(info.bucket, BucketWidth::kHour);
  EXPECT_EQ(info.retention_ms, kDay);
  EXPECT_EQ(Got(db_->ReadRange("c", kMidnight, kMidnight + 2 * kHour)), 4);
}

TALLY_CONFORMANCE_SUITE(Buckets);

}  // namespace
}  // namespace tally::conformance
