// Conformance: reservations (Reserve, CommitReservation,
// ReleaseReservation, GetReservation, ReadHeld). Held units count against
// the minimum until committed, released or run out by the clock; every
// call is idempotent by reservation id.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "conformance/conformance.h"
#include "tally/limits.h"

namespace tally::conformance {
namespace {

class Reservations : public ConformanceTest {
 protected:
  // A keyed stock, key "sku" holding `units`.
  void Stock(int64_t units) {
    CounterSpec spec;
    spec.bounds = CounterBounds::AtLeast(0);
    spec.keyed = true;
    ASSERT_OK(db_->CreateCounter("stock", spec));
    ASSERT_OK(db_->Increment(sku_, units));
  }
  const CounterRef sku_{"stock", "sku"};
};

TEST_P(Reservations, AHoldCountsAgainstTheMinimumUntilCommitted) {
  ASSERT_NO_FATAL_FAILURE(Stock(5));
  ReservationResult r = Got(db_->Reserve(sku_, "cart-1", 3, 15 * kMinute));
  EXPECT_EQ(r.outcome, Outcome::kApplied);
  EXPECT_EQ(r.state, HoldState::kHeld);
  EXPECT_EQ(r.units, 3);
  EXPECT_EQ(r.expires_at_ms, kStart + 15 * kMinute);
  EXPECT_EQ(r.value, 5);
  EXPECT_EQ(r.available, 2);
  // The value does not move; takes and other holds reach what is available.
  EXPECT_EQ(Got(db_->ReadExact(sku_)), 5);
  EXPECT_EQ(Got(db_->Increment(sku_, -3)).outcome, Outcome::kRefused);
  const IncrementResult take = Got(db_->Increment(sku_, -2));
  EXPECT_EQ(take.outcome, Outcome::kApplied);
  EXPECT_EQ(take.value, 3);
  r = Got(db_->Reserve(sku_, "cart-2", 1, kMinute));
  EXPECT_EQ(r.outcome, Outcome::kRefused);
  EXPECT_EQ(r.state, HoldState::kRefused);
  // The commit takes the units.
  r = Got(db_->CommitReservation(sku_, "cart-1"));
  EXPECT_EQ(r.outcome, Outcome::kApplied);
  EXPECT_EQ(r.state, HoldState::kCommitted);
  EXPECT_EQ(r.value, 0);
  EXPECT_EQ(r.available, 0);
  EXPECT_EQ(Got(db_->ReadExact(sku_)), 0);
  // Every call again: the same state, nothing moves.
  EXPECT_EQ(Got(db_->CommitReservation(sku_, "cart-1")).outcome,
            Outcome::kDuplicate);
  r = Got(db_->ReleaseReservation(sku_, "cart-1"));
  EXPECT_EQ(r.outcome, Outcome::kRefused);
  EXPECT_EQ(r.state, HoldState::kCommitted);
  r = Got(db_->Reserve(sku_, "cart-1", 3, kMinute));
  EXPECT_EQ(r.outcome, Outcome::kDuplicate);
  EXPECT_EQ(r.state, HoldState::kCommitted);
  EXPECT_EQ(Got(db_->Reserve(sku_, "cart-1", 4, kMinute)).outcome,
            Outcome::kConflict);
  // A refused reservation stays refused once units are back.
  ASSERT_OK(db_->Increment(sku_, 10));
  r = Got(db_->Reserve(sku_, "cart-2", 1, kMinute));
  EXPECT_EQ(r.outcome, Outcome::kDuplicate);
  EXPECT_EQ(r.state, HoldState::kRefused);
  EXPECT_EQ(Got(db_->CommitReservation(sku_, "cart-2")).outcome,
            Outcome::kRefused);
  EXPECT_EQ(Got(db_->ReadExact(sku_)), 10);
  const ReservationInfo info = Got(db_->GetReservation(sku_, "cart-1"));
  EXPECT_EQ(info.reservation_id, "cart-1");
  EXPECT_EQ(info.state, HoldState::kCommitted);
  EXPECT_EQ(info.units, 3);
  EXPECT_EQ(info.created_at_ms, kStart);
}

TEST_P(Reservations, AReleaseOrTheEndOfTheHoldGivesTheUnitsBack) {
  ASSERT_NO_FATAL_FAILURE(Stock(4));
  ASSERT_OK(db_->Reserve(sku_, "a", 2, kMinute));
  ASSERT_OK(db_->Reserve(sku_, "b", 2, 2 * kMinute));
  HeldValue held = Got(db_->ReadHeld(sku_));
  EXPECT_EQ(held.value, 4);
  EXPECT_EQ(held.held, 4);
  EXPECT_EQ(held.available, 0);
  EXPECT_EQ(held.open, 2u);
  EXPECT_EQ(held.next_expiry_ms, kStart + kMinute);
  clock_.Advance(10 * kSecond);
  ReservationResult r = Got(db_->ReleaseReservation(sku_, "a"));
  EXPECT_EQ(r.outcome, Outcome::kApplied);
  EXPECT_EQ(r.state, HoldState::kReleased);
  EXPECT_EQ(r.available, 2);
  EXPECT_EQ(Got(db_->GetReservation(sku_, "a")).closed_at_ms,
            kStart + 10 * kSecond);
  EXPECT_EQ(Got(db_->ReleaseReservation(sku_, "a")).outcome,
            Outcome::kDuplicate);
  // "b" runs out at its end exactly, not a millisecond later.
  clock_.Advance(2 * kMinute - 10 * kSecond - 1);
  EXPECT_EQ(Got(db_->ReadHeld(sku_)).held, 2);
  clock_.Advance(1);
  held = Got(db_->ReadHeld(sku_));
  EXPECT_EQ(held.held, 0);
  EXPECT_EQ(held.available, 4);
  EXPECT_EQ(held.open, 0u);
  EXPECT_EQ(held.next_expiry_ms, 0);
  EXPECT_EQ(Got(db_->GetReservation(sku_, "b")).state, HoldState::kExpired);
  r = Got(db_->CommitReservation(sku_, "b"));
  EXPECT_EQ(r.outcome, Outcome::kRefused);
  EXPECT_EQ(r.state, HoldState::kExpired);
  EXPECT_EQ(Got(db_->ReleaseReservation(sku_, "b")).outcome,
            Outcome::kDuplicate);
  EXPECT_EQ(Got(db_->Increment(sku_, -4)).outcome, Outcome::kApplied);
  EXPECT_TRUE(Fails(db_->CommitReservation(sku_, "never"), Code::kNotFound));
  EXPECT_TRUE(Fails(db_->ReleaseReservation(sku_, "never"), Code::kNotFound));
  EXPECT_TRUE(Fails(db_->GetReservation(sku_, "never"), Code::kNotFound));
}

TEST_P(Reservations, HoldsOutliveAReopenAndStillEndByTheClock) {
  ASSERT_NO_FATAL_FAILURE(Stock(3));
  ASSERT_OK(db_->Reserve(sku_, "held", 1, kMinute));
  ASSERT_OK(db_->Reserve(sku_, "gone", 1, kMinute));
  ASSERT_OK(db_->ReleaseReservation(sku_, "gone"));
  Reopen();
  ASSERT_NE(db_, nullptr);
  EXPECT_EQ(Got(db_->Increment(sku_, -3)).outcome, Outcome::kRefused);
  EXPECT_EQ(Got(db_->ReleaseReservation(sku_, "gone")).outcome,
            Outcome::kDuplicate);
  EXPECT_EQ(Got(db_->ReadHeld(sku_)).available, 2);
  clock_.Advance(kMinute);
  EXPECT_EQ(Got(db_->ReadHeld(sku_)).held, 0);
  EXPECT_EQ(Got(db_->Increment(sku_, -3)).outcome, Outcome::kApplied);
  EXPECT_EQ(Got(db_->CommitReservation(sku_, "held")).state,
            HoldState::kExpired);
  EXPECT_EQ(Got(db_->ReadExact(sku_)), 0);
}

TEST_P(Reservations, BatchesResetsAndDeletesSeeTheHeldUnits) {
  ASSERT_NO_FATAL_FAILURE(Stock(3));
  ASSERT_OK(db_->Reserve(sku_, "r", 2, kMinute));
  Batch b;
  b.Add(sku_, -1);
  b.Add(sku_, -1);
  std::vector<IncrementResult> results;
  EXPECT_TRUE(Fails(db_->Apply(b, &results), Code::kOutOfRange, "batch op 1"));
  EXPECT_EQ(Got(db_->ReadExact(sku_)), 3);
  // A reset may not leave less than the held units.
  EXPECT_TRUE(Fails(db_->Reset(sku_, "reset-1", 1), Code::kInvalidArgument));
  ASSERT_OK(db_->Reset(sku_, "reset-2", 2));
  EXPECT_EQ(Got(db_->ReadHeld(sku_)).available, 0);
  EXPECT_EQ(Got(db_->CommitReservation(sku_, "r")).value, 0);
  // Deleting the key drops its reservations.
  ASSERT_OK(db_->Increment(sku_, 2));
  ASSERT_OK(db_->Reserve(sku_, "r2", 2, kMinute));
  ASSERT_OK(db_->DeleteKey("stock", "sku"));
  EXPECT_TRUE(Fails(db_->GetReservation(sku_, "r2"), Code::kNotFound));
  ASSERT_OK(db_->Increment(sku_, 1));
  EXPECT_EQ(Got(db_->Increment(sku_, -1)).outcome, Outcome::kApplied);
}

TEST_P(Reservations, WrongCountersAndArgumentsAreRefused) {
  ASSERT_OK(db_->CreateCounter("views", CounterSpec{4}));
  CounterSpec capped;
  capped.bounds = CounterBounds::AtMost(10);  // no minimum
  ASSERT_OK(db_->CreateCounter("capped", capped));
  CounterSpec quota;
  quota.bounds = CounterBounds::Between(0, 10);
  quota.bucket = BucketWidth::kMinute;  // buckets
  ASSERT_OK(db_->CreateCounter("quota", quota));
  CounterSpec stock;
  stock.bounds = CounterBounds::AtLeast(0);
  ASSERT_OK(db_->CreateCounter("stock", stock));
  for (const char* name : {"views", "capped", "quota"}) {
    EXPECT_TRUE(
        Fails(db_->Reserve(name, "r", 1, kMinute), Code::kInvalidArgument))
        << name;
  }
  EXPECT_TRUE(
      Fails(db_->Reserve("stock", "r", 0, kMinute), Code::kInvalidArgument));
  EXPECT_TRUE(Fails(db_->Reserve("stock", "r", 1, 0), Code::kInvalidArgument));
  EXPECT_TRUE(Fails(db_->Reserve("stock", "r", 1, kMaxHoldMs + 1),
                    Code::kInvalidArgument));
  EXPECT_TRUE(Fails(db_->Reserve("stock", "", 1, 1), Code::kInvalidArgument));
  EXPECT_TRUE(
      Fails(db_->Reserve("stock", "bad\nid", 1, 1), Code::kInvalidArgument));
  EXPECT_TRUE(Fails(db_->Reserve("nope", "r", 1, 1), Code::kNotFound));
  EXPECT_TRUE(
      Fails(db_->Reserve({"stock", "k"}, "r", 1, 1), Code::kInvalidArgument));
  EXPECT_TRUE(Fails(db_->ReadHeld("views"), Code::kInvalidArgument));
  // A named stock's reservation works as a key's.
  ASSERT_OK(db_->Increment("stock", 1));
  EXPECT_EQ(Got(db_->Reserve("stock", "r", 1, 1)).outcome, Outcome::kApplied);
  EXPECT_EQ(Got(db_->ReadHeld("stock")).held, 1);
}

TALLY_CONFORMANCE_SUITE(Reservations);

}  // namespace
}  // namespace tally::conformance
