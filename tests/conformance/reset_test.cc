// Conformance: Db::Reset. It sets a value once per reset id (a reset id is
// an event id of its key: one id is one increment or one reset), keeps the
// markers of earlier events, and respects bounds, quotas' windows and
// dedupe windows.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "conformance/conformance.h"

namespace tally::conformance {
namespace {

class Reset : public ConformanceTest {};

TEST_P(Reset, SetsTheValueOncePerId) {
  ASSERT_OK(db_->CreateCounter("views", CounterSpec{4}));
  for (int i = 0; i < 10; ++i) {
    ASSERT_OK(db_->IncrementOnce("views", "e" + std::to_string(i), 3));
  }
  IncrementResult r = Got(db_->Reset("views", "clear-1", 5));
  EXPECT_EQ(r.outcome, Outcome::kApplied);
  EXPECT_EQ(r.value, 5);
  EXPECT_EQ(r.applied, 5 - 30);
  EXPECT_EQ(Got(db_->ReadExact("views")), 5);
  ASSERT_OK(db_->Increment("views", 2));
  // Again: the first answer, nothing moves.
  r = Got(db_->Reset("views", "clear-1", 5));
  EXPECT_EQ(r.outcome, Outcome::kDuplicate);
  EXPECT_EQ(r.value, 5);
  EXPECT_EQ(r.applied, -25);
  EXPECT_EQ(Got(db_->ReadExact("views")), 7);
  // Another value under the id, an increment reusing it, a reset reusing
  // an increment's id: conflicts.
  EXPECT_EQ(Got(db_->Reset("views", "clear-1", 0)).outcome, Outcome::kConflict);
  EXPECT_EQ(Got(db_->IncrementOnce("views", "clear-1", 5)).outcome,
            Outcome::kConflict);
  EXPECT_EQ(Got(db_->Reset("views", "e3", 3)).outcome, Outcome::kConflict);
  EXPECT_EQ(Got(db_->ReadExact("views")), 7);
  // An event from before the reset is still a duplicate.
  EXPECT_EQ(Got(db_->IncrementOnce("views", "e4", 3)).outcome,
            Outcome::kDuplicate);
  const MarkerInfo m = Got(db_->GetMarker("views", "clear-1"));
  EXPECT_TRUE(m.reset);
  EXPECT_EQ(m.value, 5);
  EXPECT_EQ(m.delta, -25);
  Reopen();
  ASSERT_NE(db_, nullptr);
  EXPECT_EQ(Got(db_->Reset("views", "clear-1", 5)).outcome,
            Outcome::kDuplicate);
  EXPECT_EQ(Got(db_->ReadExact("views")), 7);
}

TEST_P(Reset, ResetsOneKeyOfAKeyedCounter) {
  CounterSpec spec{3};
  spec.keyed = true;
  ASSERT_OK(db_->CreateCounter("likes", spec));
  for (int i = 0; i < 10; ++i) {
    ASSERT_OK(db_->IncrementOnce({"likes", i % 2 ? "p1" : "p2"},
                                 "u" + std::to_string(i), 1));
  }
  ASSERT_OK(db_->Reset({"likes", "p1"}, "r1"));
  EXPECT_EQ(Got(db_->ReadKeys("likes", {"p1", "p2"})),
            (std::vector<int64_t>{0, 5}));
  // The same id in another key is another reset.
  EXPECT_EQ(Got(db_->Reset({"likes", "p2"}, "r1", 1)).outcome,
            Outcome::kApplied);
  EXPECT_EQ(Got(db_->ReadKeys("likes", {"p1", "p2"})),
            (std::vector<int64_t>{0, 1}));
  EXPECT_TRUE(Fails(db_->Reset("likes", "r2"), Code::kInvalidArgument));
}

TEST_P(Reset, AStrictCounterIsResetWithinItsBounds) {
  CounterSpec spec;
  spec.bounds = CounterBounds::Between(0, 100);
  ASSERT_OK(db_->CreateCounter("stock", spec));
  ASSERT_OK(db_->Increment("stock", 40));
  EXPECT_TRUE(
      Fails(db_->Reset("stock", "r0", 101), Code::kInvalidArgument, "101"));
  EXPECT_TRUE(Fails(db_->Reset("stock", "r0", -1), Code::kInvalidArgument));
  const IncrementResult r = Got(db_->Reset("stock", "restock", 100));
  EXPECT_EQ(r.outcome, Outcome::kApplied);
  EXPECT_EQ(r.applied, 60);
  EXPECT_EQ(r.value, 100);
  EXPECT_EQ(r.remaining, 0);
  EXPECT_EQ(Got(db_->Increment("stock", 1)).outcome, Outcome::kRefused);
  EXPECT_EQ(Got(db_->ReadExact("stock")), 100);
}

TEST_P(Reset, AQuotaResetsItsWindowNow) {
  CounterSpec spec;
  spec.keyed = true;
  spec.bounds = CounterBounds::Between(0, 10);
  spec.bucket = BucketWidth::kMinute;
  ASSERT_OK(db_->CreateCounter("calls", spec));
  const CounterRef k("calls", "k");
  for (int i = 0; i < 10; ++i) ASSERT_OK(db_->Increment(k, 1));
  EXPECT_EQ(Got(db_->Increment(k, 1)).outcome, Outcome::kRefused);
  clock_.Advance(20 * kSecond);
  const IncrementResult r = Got(db_->Reset(k, "support-ticket-9"));
  EXPECT_EQ(r.outcome, Outcome::kApplied);
  EXPECT_EQ(r.remaining, 10);
  EXPECT_EQ(r.window_ends_ms, kStart + kMinute);
  const QuotaState q = Got(db_->ReadQuota(k));
  EXPECT_EQ(q.used, 0);
  EXPECT_EQ(q.remaining, 10);
  EXPECT_EQ(Got(db_->Increment(k, 1)).outcome, Outcome::kApplied);
}

TEST_P(Reset, ADedupeWindowNeedsTheResetsTimeAndRefusesALateOne) {
  CounterSpec spec;
  spec.dedupe_window_ms = kMinute;
  ASSERT_OK(db_->CreateCounter("w", spec));
  ASSERT_OK(db_->IncrementOnce("w", "e1", 2, OnceOptions{kStart, {}}));
  EXPECT_TRUE(Fails(db_->Reset("w", "r1", 0), Code::kInvalidArgument));
  const ResetOptions issued{kStart};
  EXPECT_EQ(Got(db_->Reset("w", "r1", 0, issued)).outcome, Outcome::kApplied);
  EXPECT_EQ(Got(db_->ReadExact("w")), 0);
  EXPECT_EQ(Got(db_->Reset("w", "r1", 0, issued)).outcome, Outcome::kDuplicate);
  // A reset issued before the window is outside it and changes nothing.
  ASSERT_OK(db_->IncrementOnce("w", "e2", 4, OnceOptions{kStart, {}}));
  const IncrementResult late =
      Got(db_->Reset("w", "r2", 0, ResetOptions{kStart - kMinute - 1}));
  EXPECT_EQ(late.outcome, Outcome::kOutsideWindow);
  EXPECT_EQ(Got(db_->ReadExact("w")), 4);
}

TALLY_CONFORMANCE_SUITE(Reset);

}  // namespace
}  // namespace tally::conformance
