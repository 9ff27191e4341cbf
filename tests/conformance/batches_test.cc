// Conformance: Batch and Db::Apply. One answer per op, in order; copies of
// an event inside a batch decided one after another; one event in several
// counters; and atomicity: an op refused refuses the batch, which then
// writes nothing and leaves the results as they were.
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "conformance/conformance.h"
#include "tally/limits.h"

namespace tally::conformance {
namespace {

class Batches : public ConformanceTest {};

TEST_P(Batches, EachOpGetsItsOwnAnswerInOrder) {
  ASSERT_OK(db_->CreateCounter("plain", CounterSpec{4}));
  ASSERT_OK(db_->CreateCounter("once", CounterSpec{4}));
  ASSERT_OK(db_->IncrementOnce("once", "old", 1));
  Batch b;
  b.Add("plain", 5);
  b.AddOnce("once", "new", 2);
  b.AddOnce("once", "old", 1);  // stored: duplicate
  b.AddOnce("once", "new", 2);  // a copy in the batch: duplicate
  b.AddOnce("once", "new", 9);  // a copy with another delta: conflict
  b.AddOnce("once", "old", 3);  // stored, another delta: conflict
  std::vector<IncrementResult> r;
  ASSERT_OK(db_->Apply(b, &r));
  ASSERT_EQ(r.size(), 6u);
  EXPECT_EQ(r[0].outcome, Outcome::kApplied);
  EXPECT_EQ(r[1].outcome, Outcome::kApplied);
  EXPECT_EQ(r[2].outcome, Outcome::kDuplicate);
  EXPECT_EQ(r[3].outcome, Outcome::kDuplicate);
  EXPECT_EQ(r[4].outcome, Outcome::kConflict);
  EXPECT_EQ(r[5].outcome, Outcome::kConflict);
  EXPECT_EQ(r[3].shard, r[1].shard);  // the copy answers with its shard
  EXPECT_EQ(r[2].shard, Got(db_->GetMarker("once", "old")).shard);
  EXPECT_EQ(Got(db_->ReadExact("plain")), 5);
  EXPECT_EQ(Got(db_->ReadExact("once")), 3);
  EXPECT_EQ(Got(db_->CountMarkers("once")), 2u);
  // Applied again, the batch's events are all duplicates (the plain op
  // counts again: it is no event).
  ASSERT_OK(db_->Apply(b, &r));
  EXPECT_EQ(r[1].outcome, Outcome::kDuplicate);
  EXPECT_EQ(Got(db_->ReadExact("plain")), 10);
  EXPECT_EQ(Got(db_->ReadExact("once")), 3);
}

TEST_P(Batches, OneEventCountsInSeveralCountersTogether) {
  ASSERT_OK(db_->CreateCounter("orders", CounterSpec{10}));
  ASSERT_OK(db_->CreateCounter("revenue-cents", CounterSpec{10}));
  CounterSpec keyed{2};
  keyed.keyed = true;
  ASSERT_OK(db_->CreateCounter("per-customer", keyed));
  for (int round = 0; round < 2; ++round) {
    Batch b;
    b.AddOnce("orders", "ord-77", 1);
    b.AddOnce("revenue-cents", "ord-77", 1999);
    b.AddOnce({"per-customer", "cust-5"}, "ord-77", 1);
    std::vector<IncrementResult> r;
    ASSERT_OK(db_->Apply(b, &r));
    ASSERT_EQ(r.size(), 3u);
    const Outcome want = round == 0 ? Outcome::kApplied : Outcome::kDuplicate;
    for (const IncrementResult& x : r) EXPECT_EQ(x.outcome, want);
  }
  EXPECT_EQ(Got(db_->ReadExact("orders")), 1);
  EXPECT_EQ(Got(db_->ReadExact("revenue-cents")), 1999);
  EXPECT_EQ(Got(db_->ReadExact({"per-customer", "cust-5"})), 1);
}

TEST_P(Batches, ARefusedOpRefusesTheBatchWhichWritesNothing) {
  ASSERT_OK(db_->CreateCounter("c", CounterSpec{2}));
  CounterSpec keyed;
  keyed.keyed = true;
  ASSERT_OK(db_->CreateCounter("k", keyed));
  const std::vector<IncrementResult> sentinel(7);
  std::vector<IncrementResult> r = sentinel;

  Batch unknown;
  unknown.AddOnce("c", "e1", 1);
  unknown.Add({"k", "a"}, 1);
  unknown.Add("nope", 1);
  Status s = db_->Apply(unknown, &r);
  EXPECT_TRUE(Fails(s, Code::kNotFound, "batch op 2"));
  EXPECT_TRUE(Fails(s, Code::kNotFound, "nope"));

  Batch no_key;
  no_key.Add("c", 1);
  no_key.Add("k", 1);  // a keyed counter without a key
  EXPECT_TRUE(
      Fails(db_->Apply(no_key, &r), Code::kInvalidArgument, "batch op 1"));

  Batch bad_id;
  bad_id.Add("c", 1);
  bad_id.AddOnce("c", "", 1);
  EXPECT_TRUE(
      Fails(db_->Apply(bad_id, &r), Code::kInvalidArgument, "batch op 1"));

  // Two ops of one shard summing beyond int64.
  Batch overflow;
  overflow.Add("c", std::numeric_limits<int64_t>::max(), IncrementOptions{"x"});
  overflow.Add("c", 1, IncrementOptions{"x"});
  EXPECT_TRUE(Fails(db_->Apply(overflow, &r), Code::kOutOfRange));

  Batch too_big;
  for (size_t i = 0; i <= kMaxBatchOps; ++i) too_big.Add("c", 1);
  EXPECT_TRUE(Fails(db_->Apply(too_big, &r), Code::kInvalidArgument));

  ASSERT_EQ(r.size(), sentinel.size()) << "results must be left as they were";
  EXPECT_EQ(Got(db_->ReadExact("c")), 0);
  EXPECT_EQ(Got(db_->CountMarkers("c")), 0u);
  EXPECT_EQ(Got(db_->ReadExact({"k", "a"})), 0);
  EXPECT_TRUE(Got(db_->ListKeys("k", {})).empty());
  EXPECT_EQ(Got(db_->DescribeCounter("c")).flags, 0u);
  // The event refused with its batch was not counted: it applies now.
  EXPECT_EQ(Got(db_->IncrementOnce("c", "e1", 1)).outcome, Outcome::kApplied);
}

TEST_P(Batches, ABatchOfManyPlainOpsSumsExactly) {
  ASSERT_OK(db_->CreateCounter("c", CounterSpec{3}));
  ASSERT_OK(db_->CreateCounter("d", CounterSpec{5}));
  Batch b;
  int64_t want = 0;
  for (int i = 0; i < 1000; ++i) {
    b.Add(i % 2 ? "c" : "d", i);
    want += i % 2 ? i : 0;
  }
  std::vector<IncrementResult> r;
  ASSERT_OK(db_->Apply(b, &r));
  ASSERT_EQ(r.size(), 1000u);
  for (size_t i = 0; i < r.size(); ++i) {
    EXPECT_EQ(r[i].outcome, Outcome::kApplied);
    EXPECT_LT(r[i].shard, i % 2 ? 3u : 5u);
  }
  EXPECT_EQ(Got(db_->ReadExact("c")), want);
  EXPECT_EQ(Got(db_->ReadExact("d")), 999 * 1000 / 2 - want);
}

TALLY_CONFORMANCE_SUITE(Batches);

}  // namespace
}  // namespace tally::conformance
