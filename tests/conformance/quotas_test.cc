// Conformance: quotas, strict counters with time buckets. A fixed quota's
// bound holds in each window (bucket) of each key; a sliding one weighs
// the previous window in; answers say what remains and when the window
// ends; ReadQuota reads a window without writing.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "conformance/conformance.h"

namespace tally::conformance {
namespace {

class Quotas : public ConformanceTest {
 protected:
  // At most `per_window` units per key per minute.
  static CounterSpec PerMinute(int64_t per_window, bool keyed = true) {
    CounterSpec spec;
    spec.bounds = CounterBounds::Between(0, per_window);
    spec.bucket = BucketWidth::kMinute;
    spec.retention_ms = 10 * kMinute;
    spec.keyed = keyed;
    return spec;
  }
};

TEST_P(Quotas, EachWindowOfEachKeyHasItsOwnBound) {
  ASSERT_OK(db_->CreateCounter("calls", PerMinute(3)));
  const CounterRef a("calls", "api-key-a"), b("calls", "api-key-b");
  for (int i = 1; i <= 3; ++i) {
    const IncrementResult r = Got(db_->Increment(a, 1));
    EXPECT_EQ(r.outcome, Outcome::kApplied);
    EXPECT_EQ(r.value, i);
    EXPECT_EQ(r.remaining, 3 - i);
    EXPECT_EQ(r.window_ends_ms, kStart + kMinute);
  }
  IncrementResult r = Got(db_->Increment(a, 1));
  EXPECT_EQ(r.outcome, Outcome::kRefused);
  EXPECT_EQ(r.value, 3);
  EXPECT_EQ(r.remaining, 0);
  EXPECT_EQ(r.window_ends_ms, kStart + kMinute);  // when to try again
  EXPECT_EQ(Got(db_->Increment(b, 1)).outcome, Outcome::kApplied);
  // The window's last ms is still in it; the next one opens a new window.
  clock_.Advance(kMinute - 1);
  EXPECT_EQ(Got(db_->Increment(a, 1)).outcome, Outcome::kRefused);
  clock_.Advance(1);
  r = Got(db_->Increment(a, 2));
  EXPECT_EQ(r.outcome, Outcome::kApplied);
  EXPECT_EQ(r.value, 2);
  EXPECT_EQ(r.remaining, 1);
  EXPECT_EQ(r.window_ends_ms, kStart + 2 * kMinute);
  // An event time counts in its own window.
  IncrementOptions earlier;
  earlier.event_time_ms = kStart + 5;
  r = Got(db_->Increment(b, 2, earlier));
  EXPECT_EQ(r.outcome, Outcome::kApplied);
  EXPECT_EQ(r.value, 3);
  EXPECT_EQ(r.window_ends_ms, kStart + kMinute);
  EXPECT_EQ(Got(db_->ReadRange(a, kStart, kStart + kMinute)), 3);
  EXPECT_EQ(Got(db_->ReadRange(a, kStart + kMinute, kStart + 2 * kMinute)), 2);
  EXPECT_EQ(Got(db_->ReadExact(a)), 5);
}

TEST_P(Quotas, AOnceIncrementKeepsItsWindowsAnswer) {
  ASSERT_OK(db_->CreateCounter("calls", PerMinute(1)));
  const CounterRef k("calls", "k");
  EXPECT_EQ(Got(db_->IncrementOnce(k, "req-1", 1)).outcome, Outcome::kApplied);
  EXPECT_EQ(Got(db_->IncrementOnce(k, "req-2", 1)).outcome, Outcome::kRefused);
  // In the next window the copies get their first answers, windows too.
  clock_.Advance(kMinute);
  IncrementResult again = Got(db_->IncrementOnce(k, "req-2", 1));
  EXPECT_EQ(again.outcome, Outcome::kRefused);
  EXPECT_EQ(again.value, 1);
  EXPECT_EQ(again.remaining, 0);
  EXPECT_EQ(again.window_ends_ms, kStart + kMinute);
  again = Got(db_->IncrementOnce(k, "req-1", 1));
  EXPECT_EQ(again.outcome, Outcome::kDuplicate);
  EXPECT_EQ(again.window_ends_ms, kStart + kMinute);
  EXPECT_EQ(Got(db_->GetMarker(k, "req-2")).window_ends_ms, kStart + kMinute);
  const IncrementResult next = Got(db_->IncrementOnce(k, "req-3", 1));
  EXPECT_EQ(next.outcome, Outcome::kApplied);
  EXPECT_EQ(next.window_ends_ms, kStart + 2 * kMinute);
}

TEST_P(Quotas, ABatchIsCheckedInEachOpsWindowAndRefusedWhole) {
  ASSERT_OK(db_->CreateCounter("calls", PerMinute(2)));
  ASSERT_OK(db_->CreateCounter("seen", CounterSpec{}));
  clock_.Advance(kMinute);
  Batch batch;
  IncrementOptions old_window;
  old_window.event_time_ms = kStart + 1;
  batch.Add(CounterRef("calls", "k"), 2, old_window);
  batch.Add(CounterRef("calls", "k"), 2);
  batch.Add("seen", 1);
  std::vector<IncrementResult> r;
  ASSERT_OK(db_->Apply(batch, &r));
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].window_ends_ms, kStart + kMinute);
  EXPECT_EQ(r[1].window_ends_ms, kStart + 2 * kMinute);
  EXPECT_EQ(r[1].value, 2);
  EXPECT_EQ(r[2].window_ends_ms, 0);  // not a quota
  Batch over;
  over.Add("seen", 1);
  over.Add(CounterRef("calls", "k"), 1);
  EXPECT_TRUE(Fails(db_->Apply(over, &r), Code::kOutOfRange, "batch op 1"));
  EXPECT_EQ(Got(db_->ReadExact("seen")), 1);
  EXPECT_EQ(Got(db_->ReadExact(CounterRef("calls", "k"))), 4);
}

TEST_P(Quotas, ASlidingWindowWeighsThePreviousWindow) {
  CounterSpec spec = PerMinute(100, /*keyed=*/false);
  spec.sliding = true;
  ASSERT_OK(db_->CreateCounter("calls", spec));
  EXPECT_EQ(Got(db_->Increment("calls", 100)).outcome, Outcome::kApplied);
  // The next window's first ms: the previous window weighs in whole.
  clock_.Advance(kMinute);
  IncrementResult r = Got(db_->Increment("calls", 1));
  EXPECT_EQ(r.outcome, Outcome::kRefused);
  EXPECT_EQ(r.remaining, 0);
  EXPECT_EQ(r.window_ends_ms, kStart + 2 * kMinute);
  QuotaState q = Got(db_->ReadQuota("calls"));
  EXPECT_EQ(q.used, 0);
  EXPECT_EQ(q.previous_used, 100);
  EXPECT_EQ(q.remaining, 0);
  EXPECT_EQ(q.window_start_ms, kStart + kMinute);
  EXPECT_EQ(q.window_ends_ms, kStart + 2 * kMinute);
  // 15 s in: 100 * 45/60 = 75 of the previous window still count.
  clock_.Advance(15 * kSecond);
  EXPECT_EQ(Got(db_->ReadQuota("calls")).remaining, 25);
  EXPECT_EQ(Got(db_->Increment("calls", 26)).outcome, Outcome::kRefused);
  r = Got(db_->Increment("calls", 25));
  EXPECT_EQ(r.outcome, Outcome::kApplied);
  EXPECT_EQ(r.value, 25);  // the window's own use
  EXPECT_EQ(r.remaining, 0);
  // 45 s in: 25 still count; saturating takes what fits.
  clock_.Advance(30 * kSecond);
  IncrementOptions sat;
  sat.saturate = true;
  r = Got(db_->Increment("calls", 60, sat));
  EXPECT_EQ(r.outcome, Outcome::kApplied);
  EXPECT_EQ(r.applied, 50);
  EXPECT_EQ(r.value, 75);
  // A refund is held to the window's minimum only.
  r = Got(db_->Increment("calls", -5));
  EXPECT_EQ(r.outcome, Outcome::kApplied);
  EXPECT_EQ(r.value, 70);
  EXPECT_EQ(Got(db_->ReadRange("calls", kStart, kStart + kMinute)), 100);
  EXPECT_EQ(
      Got(db_->ReadRange("calls", kStart + kMinute, kStart + 2 * kMinute)), 70);
}

TEST_P(Quotas, ReadQuotaReadsTheWindowNowWithoutWriting) {
  ASSERT_OK(db_->CreateCounter("calls", PerMinute(10)));
  const CounterRef k("calls", "k");
  ASSERT_OK(db_->Increment(k, 4));
  clock_.Advance(1234);
  for (int read = 0; read < 2; ++read) {  // reading changes nothing
    const QuotaState q = Got(db_->ReadQuota(k));
    EXPECT_EQ(q.used, 4);
    EXPECT_EQ(q.remaining, 6);
    EXPECT_EQ(q.window_start_ms, kStart);
    EXPECT_EQ(q.window_ends_ms, kStart + kMinute);
    EXPECT_EQ(q.previous_used, 0);
  }
  EXPECT_EQ(Got(db_->ReadQuota(CounterRef("calls", "other"))).remaining, 10);
  clock_.Advance(kMinute);
  const QuotaState next = Got(db_->ReadQuota(k));
  EXPECT_EQ(next.used, 0);
  EXPECT_EQ(next.remaining, 10);
  EXPECT_EQ(next.window_start_ms, kStart + kMinute);
  // Not a quota: a strict counter without buckets, or a plain one.
  CounterSpec stock;
  stock.bounds = CounterBounds::AtLeast(0);
  ASSERT_OK(db_->CreateCounter("stock", stock));
  EXPECT_TRUE(Fails(db_->ReadQuota("stock"), Code::kInvalidArgument, "stock"));
  ASSERT_OK(db_->CreateCounter("views", CounterSpec{}));
  EXPECT_TRUE(Fails(db_->ReadQuota("views"), Code::kInvalidArgument));
  EXPECT_TRUE(Fails(db_->ReadQuota("nope"), Code::kNotFound));
}

TALLY_CONFORMANCE_SUITE(Quotas);

}  // namespace
}  // namespace tally::conformance
