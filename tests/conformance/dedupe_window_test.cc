// Conformance: dedupe windows (CounterSpec::dedupe_window_ms). An event
// older than now - window is kOutsideWindow and not counted; events must
// carry their time; markers expire by the clock, and an event whose marker
// expired is never counted again.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "conformance/conformance.h"

namespace tally::conformance {
namespace {

class DedupeWindow : public ConformanceTest {
 protected:
  static CounterSpec Windowed(uint32_t shards, int64_t window_ms) {
    CounterSpec spec;
    spec.shards = shards;
    spec.dedupe_window_ms = window_ms;
    return spec;
  }
  static OnceOptions At(int64_t t) { return OnceOptions{t, {}}; }
};

TEST_P(DedupeWindow, AnEventOlderThanTheWindowIsOutsideAndNotCounted) {
  ASSERT_OK(db_->CreateCounter("c", Windowed(4, kHour)));
  const IncrementResult old =
      Got(db_->IncrementOnce("c", "old", 5, At(kStart - kHour - 1)));
  EXPECT_EQ(old.outcome, Outcome::kOutsideWindow);
  EXPECT_EQ(old.applied, 0);
  EXPECT_EQ(Got(db_->ReadExact("c")), 0);
  EXPECT_TRUE(Fails(db_->GetMarker("c", "old"), Code::kNotFound));
  // The window's edge is inside.
  EXPECT_EQ(Got(db_->IncrementOnce("c", "edge", 7, At(kStart - kHour))).outcome,
            Outcome::kApplied);
  EXPECT_EQ(Got(db_->ReadExact("c")), 7);
  // The marker expires a window after the later of event time and now.
  EXPECT_EQ(Got(db_->GetMarker("c", "edge")).expires_at_ms, kStart + kHour);
  ASSERT_OK(db_->IncrementOnce("c", "future", 1, At(kStart + kMinute)));
  EXPECT_EQ(Got(db_->GetMarker("c", "future")).expires_at_ms,
            kStart + kMinute + kHour);
  // The clock moves the window: what was inside falls out.
  clock_.Advance(kMinute);
  EXPECT_EQ(Got(db_->IncrementOnce("c", "late", 1, At(kStart - kHour))).outcome,
            Outcome::kOutsideWindow);
  EXPECT_EQ(Got(db_->ReadExact("c")), 8);
}

TEST_P(DedupeWindow, EventsMustCarryTheirTime) {
  ASSERT_OK(db_->CreateCounter("c", Windowed(1, kHour)));
  EXPECT_TRUE(Fails(db_->IncrementOnce("c", "e", 1), Code::kInvalidArgument));
  Batch b;
  b.AddOnce("c", "e", 1);
  std::vector<IncrementResult> results;
  EXPECT_TRUE(
      Fails(db_->Apply(b, &results), Code::kInvalidArgument, "batch op 0"));
  EXPECT_EQ(Got(db_->ReadExact("c")), 0);
  // A counter without a window takes an event time (checked, then ignored
  // for deduplication).
  ASSERT_OK(db_->CreateCounter("plain", CounterSpec{1}));
  EXPECT_EQ(Got(db_->IncrementOnce("plain", "e", 1, At(0))).outcome,
            Outcome::kApplied);
  EXPECT_EQ(Got(db_->IncrementOnce("plain", "e", 1)).outcome,
            Outcome::kDuplicate);
  EXPECT_EQ(Got(db_->GetMarker("plain", "e")).expires_at_ms, 0);  // never
}

TEST_P(DedupeWindow, MarkersExpireByTheClockAndTheEventNeverCountsAgain) {
  ASSERT_OK(db_->CreateCounter("c", Windowed(2, kHour)));
  ASSERT_OK(db_->CreateCounter("forever", CounterSpec{2}));
  for (int i = 0; i < 5; ++i) {
    const std::string id = "e" + std::to_string(i);
    ASSERT_EQ(Got(db_->IncrementOnce("c", id, 1, At(kStart))).outcome,
              Outcome::kApplied);
    ASSERT_OK(db_->IncrementOnce("forever", id, 1));
  }
  // Inside the window a copy is a duplicate, another delta a conflict,
  // whatever time the copy claims.
  clock_.Advance(kHour);  // now = event time + window: still inside
  EXPECT_EQ(Got(db_->IncrementOnce("c", "e1", 1, At(kStart))).outcome,
            Outcome::kDuplicate);
  EXPECT_EQ(Got(db_->IncrementOnce("c", "e1", 2, At(kStart))).outcome,
            Outcome::kConflict);
  EXPECT_EQ(Got(db_->CountMarkers("c")), 5u);
  clock_.Advance(1);  // every marker of "c" has expired
  EXPECT_EQ(Got(db_->CountMarkers("c")), 0u);
  EXPECT_TRUE(Got(db_->ListMarkers("c", {})).empty());
  EXPECT_TRUE(Fails(db_->GetMarker("c", "e3"), Code::kNotFound));
  EXPECT_EQ(Got(db_->CountMarkers("forever")), 5u);
  // A redelivery now is answered by its marker while the backend still
  // holds it (kDuplicate), or is outside the window: never counted again.
  const Outcome again =
      Got(db_->IncrementOnce("c", "e3", 1, At(kStart))).outcome;
  EXPECT_TRUE(again == Outcome::kDuplicate || again == Outcome::kOutsideWindow)
      << OutcomeName(again);
  EXPECT_EQ(Got(db_->ReadExact("c")), 5);
  EXPECT_EQ(Got(db_->ReadExact("forever")), 5);
}

TEST_P(DedupeWindow, ABatchMixesOutcomes) {
  ASSERT_OK(db_->CreateCounter("c", Windowed(4, kHour)));
  ASSERT_OK(db_->IncrementOnce("c", "seen", 2, At(kStart)));
  Batch b;
  b.AddOnce("c", "old", 10, At(kStart - 2 * kHour));
  b.AddOnce("c", "new", 20, At(kStart - 1));
  b.AddOnce("c", "seen", 2, At(kStart));
  b.AddOnce("c", "new", 20, At(kStart - 1));
  // A copy claiming an old time: the batch's first copy counted the event.
  b.AddOnce("c", "new", 20, At(kStart - 2 * kHour));
  std::vector<IncrementResult> r;
  ASSERT_OK(db_->Apply(b, &r));
  ASSERT_EQ(r.size(), 5u);
  EXPECT_EQ(r[0].outcome, Outcome::kOutsideWindow);
  EXPECT_EQ(r[1].outcome, Outcome::kApplied);
  EXPECT_EQ(r[2].outcome, Outcome::kDuplicate);
  EXPECT_EQ(r[3].outcome, Outcome::kDuplicate);
  EXPECT_EQ(r[4].outcome, Outcome::kDuplicate);
  EXPECT_EQ(Got(db_->ReadExact("c")), 22);
  EXPECT_EQ(Got(db_->CountMarkers("c")), 2u);
}

TALLY_CONFORMANCE_SUITE(DedupeWindow);

}  // namespace
}  // namespace tally::conformance
