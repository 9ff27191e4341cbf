// Db::Apply: per-op results, in-batch duplicates, atomic multi-counter
// events, coalescing and whole-batch refusal.
#include <gtest/gtest.h>

#include <limits>
#include <set>

#include "testutil/db_fixture.h"
#include "testutil/testutil.h"

namespace tally {
namespace {

class BatchApply : public test::DbMatrixTest {};

TEST_P(BatchApply, MixedOpsHaveOwnResults) {
  auto db = Open();
  ASSERT_OK(db->CreateCounter("plain", {4}));
  ASSERT_OK(db->CreateCounter("once", {4}));
  ASSERT_OK(db->IncrementOnce("once", "old", 1));

  Batch b;
  b.Add("plain", 5);
  b.AddOnce("once", "new", 2);
  b.AddOnce("once", "old", 1);     // stored: duplicate
  b.AddOnce("once", "new", 2);     // same batch copy: duplicate
  b.AddOnce("once", "new", 9);     // same batch, other delta: conflict
  b.AddOnce("once", "old", 3);     // stored, other delta: conflict
  std::vector<IncrementResult> r;
  ASSERT_OK(db->Apply(b, &r));
  ASSERT_EQ(r.size(), 6u);
  EXPECT_EQ(r[0].outcome, Outcome::kApplied);
  EXPECT_EQ(r[1].outcome, Outcome::kApplied);
  EXPECT_EQ(r[2].outcome, Outcome::kDuplicate);
  EXPECT_EQ(r[3].outcome, Outcome::kDuplicate);
  EXPECT_EQ(r[4].outcome, Outcome::kConflict);
  EXPECT_EQ(r[5].outcome, Outcome::kConflict);
  EXPECT_EQ(r[1].shard, r[3].shard);
  EXPECT_EQ(test::OkValue(db->ReadExact("plain")), 5);
  EXPECT_EQ(test::OkValue(db->ReadExact("once")), 3);
  EXPECT_EQ(test::OkValue(db->CountMarkers("once")), 2u);
}

// One event counted in two counters (an order's count and its amount) in
// one batch: both markers and both increments, and a redelivery is a
// duplicate in both.
TEST_P(BatchApply, MultiCounterEvent) {
  auto db = Open();
  ASSERT_OK(db->CreateCounter("orders", {10}));
  ASSERT_OK(db->CreateCounter("revenue-cents", {10}));
  for (int round = 0; round < 2; ++round) {
    Batch b;
    b.AddOnce("orders", "ord-77", 1);
    b.AddOnce("revenue-cents", "ord-77", 1999);
    std::vector<IncrementResult> r;
    ASSERT_OK(db->Apply(b, &r));
    const Outcome want = round == 0 ? Outcome::kApplied : Outcome::kDuplicate;
    EXPECT_EQ(r[0].outcome, want);
    EXPECT_EQ(r[1].outcome, want);
  }
  EXPECT_EQ(test::OkValue(db->ReadExact("orders")), 1);
  EXPECT_EQ(test::OkValue(db->ReadExact("revenue-cents")), 1999);
}

// A large batch folds into few operands and still sums exactly.
TEST_P(BatchApply, CoalescedBatchSumsExactly) {
  auto db = Open();
  ASSERT_OK(db->CreateCounter("c", {3}));
  Batch b;
  int64_t want = 0;
  for (int i = 0; i < 1000; ++i) {
    b.Add("c", i);
    want += i;
  }
  std::vector<IncrementResult> r;
  ASSERT_OK(db->Apply(b, &r));
  ASSERT_EQ(r.size(), 1000u);
  EXPECT_EQ(test::OkValue(db->ReadExact("c")), want);
}

// Unkeyed plain increments of a batch share one random shard per counter;
// successive batches still spread over the shards.
TEST_P(BatchApply, PlainOpsShareOneRandomShardPerBatch) {
  auto db = Open();
  ASSERT_OK(db->CreateCounter("c", {8}));
  ASSERT_OK(db->CreateCounter("d", {8}));
  std::set<uint32_t> used;
  for (int round = 0; round < 64; ++round) {
    Batch b;
    for (int i = 0; i < 10; ++i) {
      b.Add("c", 1);
      b.Add("d", 1);
    }
    b.Add("c", 1,
          IncrementOptions{"pinned"});  // a keyed op keeps its own shard
    std::vector<IncrementResult> r;
    ASSERT_OK(db->Apply(b, &r));
    for (int i = 2; i < 20; i += 2) EXPECT_EQ(r[i].shard, r[0].shard);
    for (int i = 3; i < 20; i += 2) EXPECT_EQ(r[i].shard, r[1].shard);
    used.insert(r[0].shard);
  }
  EXPECT_GE(used.size(), 4u) << "batches must still spread over shards";
  EXPECT_EQ(test::OkValue(db->ReadExact("c")), 64 * 11);
  EXPECT_EQ(test::OkValue(db->ReadExact("d")), 64 * 10);
}

// One bad op refuses the whole batch and writes nothing.
TEST_P(BatchApply, OneBadOpRefusesAll) {
  auto db = Open();
  ASSERT_OK(db->CreateCounter("c", {2}));
  Batch b;
  b.AddOnce("c", "e1", 1);
  b.Add("nope", 1);
  std::vector<IncrementResult> r;
  Status s = db->Apply(b, &r);
  ASSERT_TRUE(s.IsNotFound()) << s.ToString();
  EXPECT_NE(s.message().find("batch op 1"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("'nope'"), std::string::npos) << s.message();
  EXPECT_EQ(test::OkValue(db->ReadExact("c")), 0);
  EXPECT_EQ(test::OkValue(db->CountMarkers("c")), 0u);

  Batch big;
  big.Add("c", std::numeric_limits<int64_t>::max(), IncrementOptions{"k"});
  big.Add(
      "c", 1,
      IncrementOptions{"k"});  // same shard: the folded operand would overflow
  s = db->Apply(big, &r);
  ASSERT_TRUE(s.IsOutOfRange()) << s.ToString();
  EXPECT_EQ(test::OkValue(db->ReadExact("c")), 0);
}

TALLY_WRITE_MODES(BatchApply);

}  // namespace
}  // namespace tally
