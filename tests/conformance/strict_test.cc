// Conformance: strict counters (CounterSpec::bounds). An increment past a
// bound is kRefused and changes nothing, or applies what fits when it
// saturates; a once-increment's answer, refusal included, is remembered;
// a batch checks each key against what its earlier ops left and is
// refused whole.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "conformance/conformance.h"

namespace tally::conformance {
namespace {

class Strict : public ConformanceTest {
 protected:
  static CounterSpec Stock(bool keyed = false) {
    CounterSpec spec;
    spec.bounds = CounterBounds::AtLeast(0);
    spec.keyed = keyed;
    return spec;
  }
};

TEST_P(Strict, AnIncrementPastABoundIsRefusedAndChangesNothing) {
  CounterSpec seats;
  seats.bounds = CounterBounds::Between(-5, 10);
  ASSERT_OK(db_->CreateCounter("seats", seats));
  IncrementResult r = Got(db_->Increment("seats", 7));
  EXPECT_EQ(r.outcome, Outcome::kApplied);
  EXPECT_EQ(r.value, 7);
  EXPECT_EQ(r.applied, 7);
  EXPECT_EQ(r.remaining, 3);       // toward the maximum
  EXPECT_EQ(r.window_ends_ms, 0);  // no buckets
  r = Got(db_->Increment("seats", 4));
  EXPECT_EQ(r.outcome, Outcome::kRefused);
  EXPECT_EQ(r.value, 7);  // the value that refused it
  EXPECT_EQ(r.applied, 0);
  EXPECT_EQ(r.remaining, 3);
  r = Got(db_->Increment("seats", -12));
  EXPECT_EQ(r.outcome, Outcome::kApplied);
  EXPECT_EQ(r.value, -5);
  EXPECT_EQ(r.remaining, 0);  // toward the minimum
  r = Got(db_->Increment("seats", -1));
  EXPECT_EQ(r.outcome, Outcome::kRefused);
  EXPECT_EQ(r.value, -5);
  EXPECT_EQ(Got(db_->ReadExact("seats")), -5);
  // No maximum: int64's end is the bound.
  ASSERT_OK(db_->CreateCounter("stock", Stock()));
  ASSERT_OK(db_->Increment("stock", std::numeric_limits<int64_t>::max()));
  EXPECT_EQ(Got(db_->Increment("stock", 1)).outcome, Outcome::kRefused);
  EXPECT_EQ(Got(db_->ReadExact("stock")), std::numeric_limits<int64_t>::max());
}

TEST_P(Strict, SaturatingAppliesWhatFits) {
  ASSERT_OK(db_->CreateCounter("stock", Stock()));
  ASSERT_OK(db_->Increment("stock", 5));
  IncrementOptions sat;
  sat.saturate = true;
  IncrementResult r = Got(db_->Increment("stock", -8, sat));
  EXPECT_EQ(r.outcome, Outcome::kApplied);
  EXPECT_EQ(r.applied, -5);
  EXPECT_EQ(r.value, 0);
  r = Got(db_->Increment("stock", -1, sat));  // nothing fits
  EXPECT_EQ(r.outcome, Outcome::kRefused);
  EXPECT_EQ(r.applied, 0);
  r = Got(db_->Increment("stock", 2, sat));  // all of it fits
  EXPECT_EQ(r.applied, 2);
  EXPECT_EQ(r.value, 2);
  // A saturated once-increment remembers what it applied.
  OnceOptions once_sat;
  once_sat.saturate = true;
  r = Got(db_->IncrementOnce("stock", "bulk-1", -5, once_sat));
  EXPECT_EQ(r.applied, -2);
  ASSERT_OK(db_->Increment("stock", 100));
  r = Got(db_->IncrementOnce("stock", "bulk-1", -5, once_sat));
  EXPECT_EQ(r.outcome, Outcome::kDuplicate);
  EXPECT_EQ(r.applied, -2);
  EXPECT_EQ(r.value, 0);
  EXPECT_EQ(Got(db_->ReadExact("stock")), 100);
}

TEST_P(Strict, AOnceIncrementsAnswerIsRememberedRefusalIncluded) {
  ASSERT_OK(db_->CreateCounter("stock", Stock()));
  ASSERT_OK(db_->Increment("stock", 1));
  IncrementResult a = Got(db_->IncrementOnce("stock", "order-1", -1));
  EXPECT_EQ(a.outcome, Outcome::kApplied);
  EXPECT_EQ(a.value, 0);
  IncrementResult b = Got(db_->IncrementOnce("stock", "order-2", -1));
  EXPECT_EQ(b.outcome, Outcome::kRefused);
  EXPECT_EQ(b.value, 0);
  // Restocked: order-2's copies are still refused with the same value,
  // order-1's are duplicates with its answer; after a reopen too.
  ASSERT_OK(db_->Increment("stock", 10));
  for (int round = 0; round < 2; ++round) {
    b = Got(db_->IncrementOnce("stock", "order-2", -1));
    EXPECT_EQ(b.outcome, Outcome::kRefused);
    EXPECT_EQ(b.value, 0);
    a = Got(db_->IncrementOnce("stock", "order-1", -1));
    EXPECT_EQ(a.outcome, Outcome::kDuplicate);
    EXPECT_EQ(a.value, 0);
    EXPECT_EQ(a.applied, -1);
    Reopen();
    ASSERT_NE(db_, nullptr);
  }
  // Another delta under a refused event's id is a conflict.
  EXPECT_EQ(Got(db_->IncrementOnce("stock", "order-2", -2)).outcome,
            Outcome::kConflict);
  EXPECT_EQ(Got(db_->ReadExact("stock")), 10);
  const MarkerInfo m = Got(db_->GetMarker("stock", "order-2"));
  EXPECT_TRUE(m.strict);
  EXPECT_TRUE(m.refused);
  EXPECT_EQ(m.delta, 0);
  EXPECT_EQ(m.asked, -1);
}

TEST_P(Strict, ABatchChecksEachKeyInOrderAndIsRefusedWhole) {
  ASSERT_OK(db_->CreateCounter("stock", Stock(/*keyed=*/true)));
  ASSERT_OK(db_->CreateCounter("orders", CounterSpec{4}));
  const CounterRef sku("stock", "sku-1");
  ASSERT_OK(db_->Increment(sku, 2));
  Batch take2;
  take2.AddOnce(sku, "order-1", -1);
  take2.Add("orders", 1);
  take2.AddOnce(sku, "order-2", -1);
  take2.Add("orders", 1);
  std::vector<IncrementResult> r;
  ASSERT_OK(db_->Apply(take2, &r));
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[0].value, 1);
  EXPECT_EQ(r[2].value, 0);
  // A third take does not fit: nothing of the batch is written, and no
  // refusal is remembered (the batch is no event).
  Batch take3;
  take3.Add("orders", 1);
  take3.AddOnce(sku, "order-3", -1);
  EXPECT_TRUE(Fails(db_->Apply(take3, &r), Code::kOutOfRange, "batch op 1"));
  EXPECT_EQ(Got(db_->ReadExact("orders")), 2);
  EXPECT_EQ(Got(db_->ReadExact(sku)), 0);
  EXPECT_TRUE(Fails(db_->GetMarker(sku, "order-3"), Code::kNotFound));
  ASSERT_OK(db_->Increment(sku, 1));
  ASSERT_OK(db_->Apply(take3, &r));
  EXPECT_EQ(r[1].outcome, Outcome::kApplied);
  // Another key has its own bound; an earlier refusal is answered, not
  // refusing the batch.
  EXPECT_EQ(Got(db_->IncrementOnce({"stock", "sku-2"}, "order-9", -1)).outcome,
            Outcome::kRefused);
  Batch mixed;
  mixed.AddOnce({"stock", "sku-2"}, "order-9", -1);
  mixed.Add({"stock", "sku-2"}, 4);
  mixed.Add({"stock", "sku-2"}, -4);
  ASSERT_OK(db_->Apply(mixed, &r));
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].outcome, Outcome::kRefused);
  EXPECT_EQ(r[2].value, 0);
  EXPECT_EQ(Got(db_->ReadKeys("stock", {"sku-1", "sku-2"})),
            (std::vector<int64_t>{0, 0}));
}

TEST_P(Strict, SpecsThatCannotHoldABoundAreRefused) {
  CounterSpec outbox = Stock();
  outbox.outbox = true;
  EXPECT_TRUE(Fails(db_->CreateCounter("a", outbox), Code::kNotSupported));
  EXPECT_TRUE(Got(db_->ListCounters()).empty());
  // IncrementAsync cannot check a bound: refused, answered before the call
  // returns. (IncrementOnceAsync refuses too: Increments.
  // OnceAsyncRefusesStrictAndOutboxCounters.)
  ASSERT_OK(db_->CreateCounter("stock", Stock()));
  Status plain = Status::OK();
  bool called = false;
  db_->IncrementAsync("stock", 1, [&](const Result<IncrementResult>& r) {
    plain = r.status();
    called = true;
  });
  EXPECT_TRUE(called);
  EXPECT_TRUE(Fails(plain, Code::kNotSupported, "stock"));
  EXPECT_EQ(Got(db_->ReadExact("stock")), 0);
}

TALLY_CONFORMANCE_SUITE(Strict);

}  // namespace
}  // namespace tally::conformance
