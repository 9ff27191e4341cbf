// Quotas: strict counters with time buckets (CounterSpec::bounds with
// CounterSpec::bucket), a fixed window per bucket. Each window of each key
// has its own bound; the answer says what remains and when the window
// ends; a once-increment's answer keeps its window; batches check each op
// in its own window; and the race the issue names: threads taking a
// quota's units on many keys while the clock crosses window edges (and
// steps back), each window of each key accepting exactly its bound.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tally/admin.h"
#include "tally/batch.h"
#include "tally/db.h"
#include "testutil/db_fixture.h"
#include "testutil/sanitized.h"
#include "testutil/testutil.h"

namespace tally {
namespace {

constexpr int64_t kMinute = 60'000;
// A minute boundary, so window edges fall where the test puts them.
constexpr int64_t kStart = 1'700'000'040'000;
static_assert(kStart % kMinute == 0);

class Quota : public test::DbMatrixTest {
 protected:
  Quota() : DbMatrixTest(kStart) {}
  // At most `per_window` units per key per minute.
  static CounterSpec PerMinute(int64_t per_window, bool keyed = true) {
    CounterSpec spec;
    spec.bounds = CounterBounds::Between(0, per_window);
    spec.bucket = BucketWidth::kMinute;
    spec.retention_ms = 10 * kMinute;
    spec.keyed = keyed;
    return spec;
  }
  std::unique_ptr<Db> OpenWithClock() { return Open(ClockOptions()); }
};

TEST_P(Quota, EachWindowOfEachKeyHasItsOwnBound) {
  auto db = OpenWithClock();
  ASSERT_OK(db->CreateCounter("calls", PerMinute(3)));
  const CounterRef a("calls", "api-key-a"), b("calls", "api-key-b");
  for (int i = 1; i <= 3; ++i) {
    auto r = db->Increment(a, 1);
    ASSERT_OK(r);
    EXPECT_EQ(r->outcome, Outcome::kApplied);
    EXPECT_EQ(r->value, i);
    EXPECT_EQ(r->remaining, 3 - i);
    EXPECT_EQ(r->window_ends_ms, kStart + kMinute);
  }
  auto r = db->Increment(a, 1);
  ASSERT_OK(r);
  EXPECT_EQ(r->outcome, Outcome::kRefused);
  EXPECT_EQ(r->value, 3);
  EXPECT_EQ(r->remaining, 0);
  EXPECT_EQ(r->window_ends_ms, kStart + kMinute);  // when to try again
  // Another key has its own window.
  EXPECT_EQ(test::OkValue(db->Increment(b, 1)).outcome, Outcome::kApplied);
  // The last ms of the window is still in it; the next one is a new window.
  clock_.Advance(kMinute - 1);
  EXPECT_EQ(test::OkValue(db->Increment(a, 1)).outcome, Outcome::kRefused);
  clock_.Advance(1);
  r = db->Increment(a, 2);
  ASSERT_OK(r);
  EXPECT_EQ(r->outcome, Outcome::kApplied);
  EXPECT_EQ(r->value, 2);
  EXPECT_EQ(r->remaining, 1);
  EXPECT_EQ(r->window_ends_ms, kStart + 2 * kMinute);
  // Reads: one window's use, or every retained window's.
  EXPECT_EQ(test::OkValue(db->ReadRange(a, kStart, kStart + kMinute)), 3);
  EXPECT_EQ(
      test::OkValue(db->ReadRange(a, kStart + kMinute, kStart + 2 * kMinute)),
      2);
  EXPECT_EQ(test::OkValue(db->ReadExact(a)), 5);
  VerifyReport report;
  ASSERT_OK(Verify(*db, &report));
  EXPECT_TRUE(report.ok()) << report.problems.front();
}

TEST_P(Quota, AnEventTimeCountsInItsOwnWindow) {
  auto db = OpenWithClock();
  ASSERT_OK(db->CreateCounter("calls", PerMinute(2, /*keyed=*/false)));
  clock_.Advance(2 * kMinute);
  IncrementOptions earlier;
  earlier.event_time_ms = kStart + 5;  // two windows back, retained
  EXPECT_EQ(test::OkValue(db->Increment("calls", 2, earlier)).outcome,
            Outcome::kApplied);
  auto r = db->Increment("calls", 1, earlier);
  ASSERT_OK(r);
  EXPECT_EQ(r->outcome, Outcome::kRefused);
  EXPECT_EQ(r->window_ends_ms, kStart + kMinute);
  // Now's window is untouched.
  r = db->Increment("calls", 2);
  ASSERT_OK(r);
  EXPECT_EQ(r->outcome, Outcome::kApplied);
  EXPECT_EQ(r->window_ends_ms, kStart + 3 * kMinute);
}

TEST_P(Quota, AOnceIncrementKeepsItsWindowsAnswer) {
  auto db = OpenWithClock();
  ASSERT_OK(db->CreateCounter("calls", PerMinute(1)));
  const CounterRef a("calls", "k");
  auto first = db->IncrementOnce(a, "req-1", 1);
  ASSERT_OK(first);
  EXPECT_EQ(first->outcome, Outcome::kApplied);
  auto refused = db->IncrementOnce(a, "req-2", 1);
  ASSERT_OK(refused);
  EXPECT_EQ(refused->outcome, Outcome::kRefused);
  EXPECT_EQ(refused->window_ends_ms, kStart + kMinute);
  // In the next window req-2's copy gets the same answer, and req-1's its
  // first delivery's: the marker holds the event's window.
  clock_.Advance(kMinute);
  auto again = db->IncrementOnce(a, "req-2", 1);
  ASSERT_OK(again);
  EXPECT_EQ(again->outcome, Outcome::kRefused);
  EXPECT_EQ(again->value, 1);
  EXPECT_EQ(again->remaining, 0);
  EXPECT_EQ(again->window_ends_ms, kStart + kMinute);
  auto dup = db->IncrementOnce(a, "req-1", 1);
  ASSERT_OK(dup);
  EXPECT_EQ(dup->outcome, Outcome::kDuplicate);
  EXPECT_EQ(dup->window_ends_ms, kStart + kMinute);
  auto marker = db->GetMarker(a, "req-2");
  ASSERT_OK(marker);
  EXPECT_TRUE(marker->refused);
  EXPECT_EQ(marker->window_ends_ms, kStart + kMinute);
  // A new event counts in the new window.
  auto next = db->IncrementOnce(a, "req-3", 1);
  ASSERT_OK(next);
  EXPECT_EQ(next->outcome, Outcome::kApplied);
  EXPECT_EQ(next->window_ends_ms, kStart + 2 * kMinute);
  // Reopened: the answers are read back from disk.
  Reopen(&db);
  again = db->IncrementOnce(a, "req-2", 1);
  ASSERT_OK(again);
  EXPECT_EQ(again->window_ends_ms, kStart + kMinute);
}

TEST_P(Quota, ABatchChecksEachOpInItsOwnWindow) {
  auto db = OpenWithClock();
  ASSERT_OK(db->CreateCounter("calls", PerMinute(2)));
  ASSERT_OK(db->CreateCounter("seen", CounterSpec{}));
  clock_.Advance(kMinute);
  // Two ops of one key in two windows: each against its own value.
  Batch batch;
  IncrementOptions old_window;
  old_window.event_time_ms = kStart + 1;
  batch.Add(CounterRef("calls", "k"), 2, old_window);
  batch.Add(CounterRef("calls", "k"), 2);
  batch.Add("seen", 1);
  std::vector<IncrementResult> results;
  ASSERT_OK(db->Apply(batch, &results));
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0].window_ends_ms, kStart + kMinute);
  EXPECT_EQ(results[1].window_ends_ms, kStart + 2 * kMinute);
  EXPECT_EQ(results[1].value, 2);
  EXPECT_EQ(results[2].window_ends_ms, 0);  // not a quota
  // A third unit in now's window refuses the whole batch, naming op 1.
  Batch over;
  over.Add("seen", 1);
  over.Add(CounterRef("calls", "k"), 1);
  Status s = db->Apply(over, &results);
  EXPECT_TRUE(s.IsOutOfRange()) << s.ToString();
  EXPECT_NE(s.message().find("batch op 1"), std::string::npos);
  EXPECT_EQ(test::OkValue(db->ReadExact("seen")), 1);
  EXPECT_EQ(test::OkValue(db->ReadExact(CounterRef("calls", "k"))), 4);
}

TEST_P(Quota, RemainingCountsTowardTheBoundTheDeltaMovesTo) {
  auto db = OpenWithClock();
  CounterSpec stock;
  stock.bounds = CounterBounds::Between(0, 10);
  ASSERT_OK(db->CreateCounter("stock", stock));
  auto r = db->Increment("stock", 7);
  ASSERT_OK(r);
  EXPECT_EQ(r->remaining, 3);  // room to the maximum
  EXPECT_EQ(r->window_ends_ms, 0);  // no buckets, no window
  r = db->Increment("stock", -2);
  ASSERT_OK(r);
  EXPECT_EQ(r->remaining, 5);  // units left above the minimum
  r = db->Increment("stock", -6);
  ASSERT_OK(r);
  EXPECT_EQ(r->outcome, Outcome::kRefused);
  EXPECT_EQ(r->remaining, 5);
  // Sharded counters have no remaining.
  ASSERT_OK(db->CreateCounter("views", CounterSpec{}));
  EXPECT_EQ(test::OkValue(db->Increment("views", 1)).remaining, 0);
}

TEST_P(Quota, AQuotaRaisesTheFormatAndRefusesAnOutbox) {
  auto db = OpenWithClock();
  CounterSpec spec = PerMinute(5);
  spec.outbox = true;
  EXPECT_TRUE(db->CreateCounter("calls", spec).IsNotSupported());
  ASSERT_OK(db->CreateCounter("calls", PerMinute(5)));
  auto info = db->DescribeCounter("calls");
  ASSERT_OK(info);
  EXPECT_EQ(info->bucket, BucketWidth::kMinute);
  EXPECT_TRUE(info->bounds.has_max);
  EXPECT_EQ(info->bounds.max, 5);
}

// The weighted two-window estimate: previous * (width - elapsed) / width +
// current must stay within the maximum.
TEST_P(Quota, ASlidingWindowWeighsThePreviousWindow) {
  auto db = OpenWithClock();
  CounterSpec spec = PerMinute(100, /*keyed=*/false);
  spec.sliding = true;
  ASSERT_OK(db->CreateCounter("calls", spec));
  EXPECT_EQ(test::OkValue(db->Increment("calls", 100)).outcome,
            Outcome::kApplied);
  // The next window's first ms: the previous window weighs in whole.
  clock_.Advance(kMinute);
  auto r = db->Increment("calls", 1);
  ASSERT_OK(r);
  EXPECT_EQ(r->outcome, Outcome::kRefused);
  EXPECT_EQ(r->remaining, 0);
  EXPECT_EQ(r->window_ends_ms, kStart + 2 * kMinute);
  auto q = db->ReadQuota("calls");
  ASSERT_OK(q);
  EXPECT_EQ(q->used, 0);
  EXPECT_EQ(q->previous_used, 100);
  EXPECT_EQ(q->remaining, 0);
  EXPECT_EQ(q->window_start_ms, kStart + kMinute);
  // 15 s in: 100 * 45/60 = 75 of the previous window still count.
  clock_.Advance(15'000);
  EXPECT_EQ(test::OkValue(db->ReadQuota("calls")).remaining, 25);
  r = db->Increment("calls", 26);
  ASSERT_OK(r);
  EXPECT_EQ(r->outcome, Outcome::kRefused);
  EXPECT_EQ(r->remaining, 25);
  r = db->Increment("calls", 25);
  ASSERT_OK(r);
  EXPECT_EQ(r->outcome, Outcome::kApplied);
  EXPECT_EQ(r->value, 25);  // the window's own use
  EXPECT_EQ(r->remaining, 0);
  // 45 s in: 25 still count; saturating takes what fits.
  clock_.Advance(30'000);
  IncrementOptions sat;
  sat.saturate = true;
  r = db->Increment("calls", 60, sat);
  ASSERT_OK(r);
  EXPECT_EQ(r->outcome, Outcome::kApplied);
  EXPECT_EQ(r->applied, 50);
  EXPECT_EQ(r->value, 75);
  // A refund is held to the window's minimum only.
  r = db->Increment("calls", -5);
  ASSERT_OK(r);
  EXPECT_EQ(r->outcome, Outcome::kApplied);
  EXPECT_EQ(r->value, 70);
  EXPECT_EQ(r->remaining, 70);  // toward the minimum 0
  // No window ever holds more than the maximum.
  EXPECT_EQ(test::OkValue(db->ReadRange("calls", kStart, kStart + kMinute)),
            100);
  EXPECT_EQ(test::OkValue(
                db->ReadRange("calls", kStart + kMinute, kStart + 2 * kMinute)),
            70);
}

TEST_P(Quota, ASlidingBatchRefusalNamesTheWindow) {
  auto db = OpenWithClock();
  CounterSpec spec = PerMinute(100);
  spec.sliding = true;
  ASSERT_OK(db->CreateCounter("calls", spec));
  const CounterRef k("calls", "k");
  ASSERT_OK(db->Increment(k, 100));
  clock_.Advance(kMinute + 15'000);  // 25 fit
  Batch batch;
  batch.Add(k, 10);
  batch.Add(k, 16);
  std::vector<IncrementResult> results;
  Status s = db->Apply(batch, &results);
  EXPECT_TRUE(s.IsOutOfRange()) << s.ToString();
  EXPECT_NE(s.message().find("batch op 1"), std::string::npos);
  EXPECT_NE(s.message().find("sliding window (25 in this window now"),
            std::string::npos)
      << s.ToString();
  Batch fits;
  fits.Add(k, 10);
  fits.Add(k, 15);
  ASSERT_OK(db->Apply(fits, &results));
  EXPECT_EQ(results[1].value, 25);
  EXPECT_EQ(results[1].remaining, 0);
  // An op into the previous window (its event time) is checked against
  // that window and the one before it, in the same batch.
  Batch back;
  IncrementOptions earlier;
  earlier.event_time_ms = kStart + kMinute - 1;
  back.Add(k, 1, earlier);
  s = db->Apply(back, &results);
  EXPECT_TRUE(s.IsOutOfRange()) << s.ToString();
}

TEST_P(Quota, ReadQuotaAnswersWithoutWriting) {
  auto db = OpenWithClock();
  ASSERT_OK(db->CreateCounter("calls", PerMinute(10)));
  const CounterRef k("calls", "k");
  ASSERT_OK(db->Increment(k, 4));
  clock_.Advance(1'234);
  auto q = db->ReadQuota(k);
  ASSERT_OK(q);
  EXPECT_EQ(q->used, 4);
  EXPECT_EQ(q->remaining, 6);
  EXPECT_EQ(q->window_start_ms, kStart);
  EXPECT_EQ(q->window_ends_ms, kStart + kMinute);
  EXPECT_EQ(q->previous_used, 0);  // a fixed window ignores it
  // A key never used has its whole quota.
  EXPECT_EQ(
      test::OkValue(db->ReadQuota(CounterRef("calls", "other"))).remaining, 10);
  // Not a quota: named.
  CounterSpec stock;
  stock.bounds = CounterBounds::AtLeast(0);
  ASSERT_OK(db->CreateCounter("stock", stock));
  auto bad = db->ReadQuota("stock");
  EXPECT_TRUE(bad.status().IsInvalidArgument()) << bad.status().ToString();
  EXPECT_NE(bad.status().message().find("'stock' is not a quota"),
            std::string::npos)
      << bad.status().ToString();
  // A reader in another process reads it too.
  Options ro = ClockOptions();
  ro.read_only = true;
  std::unique_ptr<Db> reader;
  ASSERT_OK(Db::Open(ro, path(), &reader));
  q = reader->ReadQuota(k);
  ASSERT_OK(q);
  EXPECT_EQ(q->used, 4);
}

TEST_P(Quota, SlidingSpecsAreChecked) {
  auto db = OpenWithClock();
  CounterSpec spec;
  spec.sliding = true;
  spec.bounds = CounterBounds::Between(0, 10);
  Status s = db->CreateCounter("a", spec);  // no buckets
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  spec = PerMinute(10);
  spec.sliding = true;
  spec.bounds = CounterBounds::AtMost(10);  // no minimum
  EXPECT_TRUE(db->CreateCounter("a", spec).IsInvalidArgument());
  spec.bounds = CounterBounds::Between(0, 10);
  spec.retention_ms = 30'000;  // the previous window would be gone
  s = db->CreateCounter("a", spec);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find("retention 30000 ms"), std::string::npos);
  spec.retention_ms = kMinute;
  ASSERT_OK(db->CreateCounter("a", spec));
  EXPECT_TRUE(test::OkValue(db->DescribeCounter("a")).sliding);
  Reopen(&db);
  EXPECT_TRUE(test::OkValue(db->DescribeCounter("a")).sliding);
}

TALLY_WRITE_MODES(Quota);

// The race: 4 threads take units of a quota of 100 per key per
// minute on 1,000 keys while another thread moves the clock across window
// edges (and once back, which must not reopen a window: the engine's clock
// never steps back). Every answer names its window; per (key, window) the
// accepted ops never pass 100, a window that refused one accepted exactly
// 100, and the stored use of every window equals the ops accepted in it.
class QuotaRace : public test::DbTest {
 protected:
  QuotaRace() : DbTest(kStart) {}
};

TEST_F(QuotaRace, EachKeyAcceptsExactlyItsQuotaPerWindow) {
  constexpr int kThreads = 4;
  constexpr int kKeys = 1000;
  constexpr int64_t kPerWindow = 100;
  // Rounds over every key per thread: about 4 * rounds / windows attempts
  // per key and window, well past 100 in the plain build.
  const int rounds = test::kSanitized ? 60 : 150;
  constexpr int kSteps = 3;  // clock moves: +60 s, -30 s, +90 s
  Options options;
  options.clock = &clock_;
  auto db = Open(options);
  CounterSpec spec;
  spec.bounds = CounterBounds::AtMost(kPerWindow);
  spec.bucket = BucketWidth::kMinute;
  spec.keyed = true;
  ASSERT_OK(db->CreateCounter("calls", spec));
  std::vector<std::string> keys(kKeys);
  for (int k = 0; k < kKeys; ++k) keys[k] = "key-" + std::to_string(k);

  struct Tally {
    int64_t accepted = 0;
    int64_t refused = 0;
  };
  using Windows = std::map<std::pair<int, int64_t>, Tally>;  // (key, end)
  std::vector<Windows> seen(kThreads);
  std::atomic<int64_t> attempts{0};
  std::atomic<bool> failed{false};
  const int64_t total = int64_t{kThreads} * rounds * kKeys;
  std::vector<std::thread> workers;
  for (int t = 0; t < kThreads; ++t) {
    workers.emplace_back([&, t] {
      for (int round = 0; round < rounds && !failed; ++round) {
        for (int i = 0; i < kKeys; ++i) {
          const int k = (i * 7 + t * 251 + round) % kKeys;
          auto r = db->Increment(CounterRef("calls", keys[k]), 1);
          attempts.fetch_add(1, std::memory_order_relaxed);
          if (!r.ok() || r->window_ends_ms % kMinute != 0 ||
              r->value > kPerWindow || r->value < 0) {
            failed = true;
            return;
          }
          Tally& w = seen[t][{k, r->window_ends_ms}];
          (r->outcome == Outcome::kApplied ? w.accepted : w.refused) += 1;
        }
      }
    });
  }
  // The clock moves once a quarter, a half and three quarters of the
  // attempts are made (waiting on the workers' progress, not on time).
  // The base clock goes to kStart + 60 s (window 2), back to + 30 s (the
  // engine's time stays in window 2), then to + 120 s (window 3).
  const int64_t moves[kSteps] = {kMinute, -kMinute / 2, 3 * kMinute / 2};
  for (int step = 0; step < kSteps; ++step) {
    const int64_t due = total * (step + 1) / (kSteps + 1);
    while (attempts.load() < due && !failed) std::this_thread::yield();
    clock_.Advance(moves[step]);
  }
  for (std::thread& w : workers) w.join();
  ASSERT_FALSE(failed) << "an increment failed or answered out of range";

  Windows all;
  for (const Windows& w : seen) {
    for (const auto& [at, tally] : w) {
      all[at].accepted += tally.accepted;
      all[at].refused += tally.refused;
    }
  }
  int64_t full = 0, accepted = 0, refused = 0;
  std::map<int64_t, int> windows;  // window end -> keys seen in it
  for (const auto& [at, tally] : all) {
    const auto& [k, ends] = at;
    ++windows[ends];
    accepted += tally.accepted;
    refused += tally.refused;
    ASSERT_LE(tally.accepted, kPerWindow) << keys[k] << " window " << ends;
    if (tally.refused > 0) {
      ASSERT_EQ(tally.accepted, kPerWindow) << keys[k] << " window " << ends;
      ++full;
    }
    auto used = db->ReadRange(CounterRef("calls", keys[k]), ends - kMinute,
                              ends);
    ASSERT_OK(used);
    ASSERT_EQ(*used, tally.accepted) << keys[k] << " window " << ends;
  }
  EXPECT_EQ(accepted + refused, total);
  // The backward step reopened nothing: the ops spread over the windows
  // the clock passed forward through, three of them.
  EXPECT_EQ(windows.size(), 3u);
  // The race was run: most windows filled up and refused.
  EXPECT_GE(full, kKeys) << "too few windows filled to test the bound";
  VerifyReport report;
  ASSERT_OK(Verify(*db, &report));
  EXPECT_TRUE(report.ok()) << report.problems.front();
}

}  // namespace
}  // namespace tally
