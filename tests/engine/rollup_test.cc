// Roll-ups: ReadCached serves a counter's cached total with its age and lag;
// RollupNow and the background worker refresh it; it never loses or
// double-counts under concurrent increments, survives reopen, and goes away
// with its counter.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "tally/admin.h"
#include "tally/db.h"
#include "testutil/db_fixture.h"
#include "testutil/testutil.h"

namespace tally {
namespace {

constexpr int64_t kStart = 1'800'000'000'000;  // a fixed "now", ms

class Rollup : public test::DbMatrixTest {
 protected:
  Rollup() : DbMatrixTest(kStart) {}

  std::unique_ptr<Db> Open(uint32_t interval_ms = 0, bool read_only = false) {
    Options o = ClockOptions();
    o.rollup_interval_ms = interval_ms;
    o.read_only = read_only;
    return DbMatrixTest::Open(o);
  }
};

TEST_P(Rollup, ConvergesToTheExactValue) {
  auto db = Open();
  ASSERT_OK(db->CreateCounter("c", {8}));
  for (int i = 1; i <= 100; ++i) ASSERT_OK(db->Increment("c", i));
  ASSERT_OK(db->RollupNow());
  auto cached = db->ReadCached("c");
  ASSERT_OK(cached);
  EXPECT_EQ(cached->value, 5050);
  EXPECT_EQ(cached->value, test::OkValue(db->ReadExact("c")));
  EXPECT_EQ(cached->as_of_ms, kStart);
  EXPECT_EQ(cached->lag_ms, 0);
  EXPECT_TRUE(cached->lag_increments_known);
  EXPECT_EQ(cached->lag_increments, 0u);
  EXPECT_GT(cached->sequence, 0u);
}

TEST_P(Rollup, LagIsReportedAndShrinksAfterARollup) {
  auto db = Open();
  ASSERT_OK(db->CreateCounter("c", {4}));
  ASSERT_OK(db->Increment("c", 10));
  ASSERT_OK(db->RollupNow("c"));
  clock_.Advance(1500);
  ASSERT_OK(db->IncrementOnce("c", "e1", 1));
  Batch b;
  for (int i = 0; i < 5; ++i) b.Add("c", 2);
  b.AddOnce("c", "e1", 1);  // a duplicate: not an applied increment
  std::vector<IncrementResult> results;
  ASSERT_OK(db->Apply(b, &results));

  auto stale = db->ReadCached("c");
  ASSERT_OK(stale);
  EXPECT_EQ(stale->value, 10);
  EXPECT_EQ(stale->lag_ms, 1500);
  EXPECT_TRUE(stale->lag_increments_known);
  EXPECT_EQ(stale->lag_increments, 6u);  // 1 once + 5 plain

  ASSERT_OK(db->RollupNow());
  auto fresh = db->ReadCached("c");
  ASSERT_OK(fresh);
  EXPECT_EQ(fresh->value, 21);
  EXPECT_EQ(fresh->as_of_ms, kStart + 1500);
  EXPECT_EQ(fresh->lag_ms, 0);
  EXPECT_EQ(fresh->lag_increments, 0u);
  EXPECT_GT(fresh->sequence, stale->sequence);
}

TEST_P(Rollup, FirstReadCachedRollsUpAndUnchangedCountersAreSkipped) {
  auto db = Open();
  ASSERT_OK(db->CreateCounter("c", {2}));
  ASSERT_OK(db->Increment("c", 3));
  auto first = db->ReadCached("c");  // never rolled up: rolled up now
  ASSERT_OK(first);
  EXPECT_EQ(first->value, 3);
  clock_.Advance(10);
  ASSERT_OK(db->RollupNow());  // nothing changed: the record stays
  auto again = db->ReadCached("c");
  ASSERT_OK(again);
  EXPECT_EQ(again->as_of_ms, kStart);
  EXPECT_EQ(again->sequence, first->sequence);
  ASSERT_OK(db->RollupNow("c"));  // a named counter is always rolled up
  EXPECT_EQ(test::OkValue(db->ReadCached("c")).as_of_ms, kStart + 10);
}

// Writers and roll-ups run at once: every cached value is one the counter
// really passed through (monotonic, never above the final total), and after
// the writers stop one roll-up makes cached == exact.
TEST_P(Rollup, NeverLosesOrDoubleCountsUnderConcurrentIncrements) {
  auto db = Open();
  ASSERT_OK(db->CreateCounter("c", {16}));
  constexpr int kThreads = 4, kPerThread = 5000;
  std::atomic<bool> done{false};
  std::vector<std::thread> writers;
  for (int t = 0; t < kThreads; ++t) {
    writers.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        if (i % 2 == 0) {
          EXPECT_OK(db->Increment("c", 1));
        } else {
          EXPECT_OK(db->IncrementOnce(
              "c", "t" + std::to_string(t) + "-" + std::to_string(i), 1));
        }
      }
    });
  }
  std::thread roller([&] {
    int64_t last = 0;
    while (!done.load()) {
      EXPECT_OK(db->RollupNow());
      auto cached = db->ReadCached("c");
      ASSERT_OK(cached);
      EXPECT_GE(cached->value, last);
      EXPECT_LE(cached->value, kThreads * kPerThread);
      last = cached->value;
    }
  });
  for (auto& w : writers) w.join();
  done = true;
  roller.join();
  ASSERT_OK(db->RollupNow());
  auto cached = db->ReadCached("c");
  ASSERT_OK(cached);
  EXPECT_EQ(cached->value, kThreads * kPerThread);
  EXPECT_EQ(cached->value, test::OkValue(db->ReadExact("c")));
  EXPECT_EQ(cached->lag_increments, 0u);
}

TEST_P(Rollup, ReopenKeepsTheRollupButNotItsIncrementCount) {
  {
    auto db = Open();
    ASSERT_OK(db->CreateCounter("c", {2}));
    ASSERT_OK(db->Increment("c", 7));
    ASSERT_OK(db->RollupNow());
  }
  clock_.Advance(60'000);
  auto db = Open();
  auto cached = db->ReadCached("c");
  ASSERT_OK(cached);
  EXPECT_EQ(cached->value, 7);
  EXPECT_EQ(cached->as_of_ms, kStart);
  EXPECT_EQ(cached->lag_ms, 60'000);
  // An earlier process may have counted after its roll-up.
  EXPECT_FALSE(cached->lag_increments_known);
}

TEST_P(Rollup, DeleteRemovesTheRollup) {
  auto db = Open();
  ASSERT_OK(db->CreateCounter("c", {2}));
  ASSERT_OK(db->Increment("c", 7));
  ASSERT_OK(db->RollupNow());
  ASSERT_OK(db->DeleteCounter("c"));
  EXPECT_TRUE(db->ReadCached("c").status().IsNotFound());
  ASSERT_OK(db->CreateCounter("c", {2}));
  auto cached = db->ReadCached("c");
  ASSERT_OK(cached);
  EXPECT_EQ(cached->value, 0);
  VerifyReport report;
  ASSERT_OK(tally::Verify(*db, &report));
  EXPECT_TRUE(report.ok());
}

TEST_P(Rollup, ReadOnlyServesTheWritersRollups) {
  auto writer = Open();
  ASSERT_OK(writer->CreateCounter("rolled", {2}));
  ASSERT_OK(writer->CreateCounter("never", {2}));
  ASSERT_OK(writer->Increment("rolled", 4));
  ASSERT_OK(writer->RollupNow("rolled"));
  auto reader = Open(0, /*read_only=*/true);
  auto cached = reader->ReadCached("rolled");
  ASSERT_OK(cached);
  EXPECT_EQ(cached->value, 4);
  EXPECT_FALSE(cached->lag_increments_known);
  EXPECT_TRUE(reader->ReadCached("never").status().IsNotFound());
  EXPECT_TRUE(reader->RollupNow().IsNotSupported());
}

// The background worker keeps the cached value fresh without being asked.
TEST_P(Rollup, WorkerCatchesUpWithoutBeingAsked) {
  auto db = Open(/*interval_ms=*/5);
  ASSERT_OK(db->CreateCounter("c", {4}));
  for (int i = 0; i < 1000; ++i) ASSERT_OK(db->Increment("c", 1));
  // Wait for the worker's pass (bounded: a failure, not a hang).
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(30);
  int64_t seen = -1;
  while (std::chrono::steady_clock::now() < deadline) {
    auto cached = db->ReadCached("c");
    ASSERT_OK(cached);
    seen = cached->value;
    if (seen == 1000 && cached->lag_increments == 0) break;
    std::this_thread::yield();
  }
  EXPECT_EQ(seen, 1000);
}

TALLY_WRITE_MODES(Rollup);

}  // namespace
}  // namespace tally
