// OutboxSequencer: consecutive runs of seqs, a watermark that stays below
// every run still in flight however commits finish, the cap on
// unacknowledged entries, and writers on many threads never letting the
// watermark pass an unsettled seq.

#include "engine/outbox_sequencer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "testutil/testutil.h"

namespace tally::engine {
namespace {

constexpr uint64_t kNoCap = ~uint64_t{0} >> 1;

TEST(OutboxSequencer, RunsAreConsecutiveAndSettledIsTheWatermarkBefore) {
  OutboxSequencer seq;
  seq.Reset(/*last_seq=*/10, /*acked_through=*/4);
  uint64_t first = 0, settled = 0;
  ASSERT_OK(seq.Reserve(3, kNoCap, &first, &settled));
  EXPECT_EQ(first, 11u);
  EXPECT_EQ(settled, 10u);
  EXPECT_EQ(seq.last(), 13u);
  uint64_t second = 0;
  ASSERT_OK(seq.Reserve(2, kNoCap, &second, &settled));
  EXPECT_EQ(second, 14u);
  EXPECT_EQ(settled, 10u) << "the first run is still in flight";
  EXPECT_EQ(seq.last(), 15u);
  EXPECT_EQ(seq.acked(), 4u);
}

// Commits that finish out of order: the watermark waits for the oldest.
TEST(OutboxSequencer, WatermarkStaysBelowTheOldestRunInFlight) {
  OutboxSequencer seq;
  seq.Reset(0, 0);
  uint64_t a = 0, b = 0, c = 0, settled = 0;
  ASSERT_OK(seq.Reserve(3, kNoCap, &a, &settled));  // 1..3
  ASSERT_OK(seq.Reserve(2, kNoCap, &b, &settled));  // 4..5
  ASSERT_OK(seq.Reserve(1, kNoCap, &c, &settled));  // 6
  ASSERT_EQ(a, 1u);
  ASSERT_EQ(b, 4u);
  ASSERT_EQ(c, 6u);
  EXPECT_EQ(seq.Watermark(), 0u);
  seq.Release(b);
  EXPECT_EQ(seq.Watermark(), 0u) << "run 1..3 is still in flight";
  seq.Release(c);
  EXPECT_EQ(seq.Watermark(), 0u);
  seq.Release(a);
  EXPECT_EQ(seq.Watermark(), 6u);
  uint64_t d = 0;
  ASSERT_OK(seq.Reserve(1, kNoCap, &d, &settled));
  EXPECT_EQ(settled, 6u);
  EXPECT_EQ(seq.Watermark(), 6u);
  seq.Release(d);
  EXPECT_EQ(seq.Watermark(), 7u);
}

// The oldest run settles first: the watermark moves up to the next one.
TEST(OutboxSequencer, WatermarkFollowsInOrderReleases) {
  OutboxSequencer seq;
  seq.Reset(100, 100);
  uint64_t a = 0, b = 0, settled = 0;
  ASSERT_OK(seq.Reserve(5, kNoCap, &a, &settled));  // 101..105
  ASSERT_OK(seq.Reserve(5, kNoCap, &b, &settled));  // 106..110
  seq.Release(a);
  EXPECT_EQ(seq.Watermark(), 105u);
  seq.Release(b);
  EXPECT_EQ(seq.Watermark(), 110u);
}

TEST(OutboxSequencer, CapRefusesWithBusyAndReservesNothing) {
  OutboxSequencer seq;
  seq.Reset(/*last_seq=*/10, /*acked_through=*/5);  // 5 unacknowledged
  uint64_t first = 0, settled = 0;
  ASSERT_OK(seq.Reserve(2, /*cap=*/7, &first, &settled)) << "7 <= 7";
  EXPECT_EQ(first, 11u);
  seq.Release(first);
  Status s = seq.Reserve(1, /*cap=*/7, &first, &settled);
  ASSERT_TRUE(s.IsBusy()) << s.ToString();
  EXPECT_NE(s.message().find("holds 7 unacknowledged"), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("cap of 7"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("outbox_max_entries"), std::string::npos);
  EXPECT_EQ(seq.last(), 12u) << "a refused reservation hands out nothing";
  EXPECT_EQ(seq.Watermark(), 12u) << "and leaves nothing in flight";
  // Acknowledging makes room again.
  seq.Acked(8);
  ASSERT_OK(seq.Reserve(3, /*cap=*/7, &first, &settled));
  EXPECT_EQ(first, 13u);
}

TEST(OutboxSequencer, AckedNeverMovesBack) {
  OutboxSequencer seq;
  seq.Reset(50, 10);
  seq.Acked(30);
  EXPECT_EQ(seq.acked(), 30u);
  seq.Acked(20);
  EXPECT_EQ(seq.acked(), 30u);
  seq.Acked(30);
  EXPECT_EQ(seq.acked(), 30u);
}

TEST(OutboxSequencer, ResetForgetsRunsInFlight) {
  OutboxSequencer seq;
  seq.Reset(0, 0);
  uint64_t first = 0, settled = 0;
  ASSERT_OK(seq.Reserve(4, kNoCap, &first, &settled));
  ASSERT_EQ(seq.Watermark(), 0u);
  seq.Reset(/*last_seq=*/20, /*acked_through=*/20);
  EXPECT_EQ(seq.Watermark(), 20u);
  EXPECT_EQ(seq.last(), 20u);
  EXPECT_EQ(seq.acked(), 20u);
}

// A writer paused between its reservation and its commit (the test hook):
// a later writer's run settles, yet the watermark stays below the paused
// run until it is released. The interleaving is forced, not hoped for.
TEST(OutboxSequencer, PausedWriterHoldsTheWatermarkBelowItsRun) {
  OutboxSequencer seq;
  seq.Reset(0, 0);
  std::mutex mu;
  std::condition_variable cv;
  bool reserved = false, go = false;
  seq.SetAfterReserveForTest([&](uint64_t first) {
    if (first != 1) return;  // only the paused writer's run
    std::unique_lock<std::mutex> lock(mu);
    reserved = true;
    cv.notify_all();
    cv.wait(lock, [&] { return go; });
  });
  uint64_t paused_first = 0;
  std::thread writer([&] {
    uint64_t settled = 0;
    EXPECT_OK(seq.Reserve(2, kNoCap, &paused_first, &settled));
  });
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return reserved; });
  }
  uint64_t later = 0, settled = 0;
  ASSERT_OK(seq.Reserve(3, kNoCap, &later, &settled));
  EXPECT_EQ(later, 3u);
  EXPECT_EQ(settled, 0u) << "seqs 1..2 are not settled";
  seq.Release(later);
  EXPECT_EQ(seq.Watermark(), 0u) << "seqs 1..2 are still being committed";
  {
    std::lock_guard<std::mutex> lock(mu);
    go = true;
  }
  cv.notify_all();
  writer.join();
  ASSERT_EQ(paused_first, 1u);
  EXPECT_EQ(seq.Watermark(), 0u) << "reserved is not released";
  seq.Release(paused_first);
  EXPECT_EQ(seq.Watermark(), 5u);
}

// Writers on 8 threads reserve and release runs while a reader polls the
// watermark: it never moves back, never passes a seq whose run is still
// reserved, and ends at the last seq; the runs tile 1..last exactly.
TEST(OutboxSequencer, ConcurrentWritersNeverLetTheWatermarkPassAnUnsettledSeq) {
  OutboxSequencer seq;
  seq.Reset(0, 0);
  constexpr int kThreads = 8, kRuns = 2000;
  // settled[s] is set once the run holding seq s is released.
  constexpr uint64_t kMaxSeq = uint64_t{kThreads} * kRuns * 3;
  std::vector<std::atomic<bool>> settled(kMaxSeq + 1);
  std::vector<std::vector<std::pair<uint64_t, uint64_t>>> runs(kThreads);
  std::atomic<bool> done{false};
  std::atomic<int> violations{0};
  std::thread reader([&] {
    uint64_t last_seen = 0;
    while (!done.load()) {
      const uint64_t w = seq.Watermark();
      if (w < last_seen) violations.fetch_add(1);
      // Every seq at or below the watermark must be settled by now.
      for (uint64_t s = last_seen + 1; s <= w; ++s) {
        if (!settled[s].load()) violations.fetch_add(1);
      }
      last_seen = std::max(last_seen, w);
    }
  });
  std::vector<std::thread> writers;
  for (int t = 0; t < kThreads; ++t) {
    writers.emplace_back([&, t] {
      for (int i = 0; i < kRuns; ++i) {
        const uint64_t n = 1 + (i + t) % 3;
        uint64_t first = 0, before = 0;
        ASSERT_OK(seq.Reserve(n, kNoCap, &first, &before));
        if (before >= first) violations.fetch_add(1);
        runs[t].emplace_back(first, n);
        for (uint64_t s = first; s < first + n; ++s) settled[s].store(true);
        seq.Release(first);
      }
    });
  }
  for (auto& w : writers) w.join();
  done.store(true);
  reader.join();
  EXPECT_EQ(violations.load(), 0);
  std::set<uint64_t> seen;
  uint64_t total = 0;
  for (const auto& mine : runs) {
    for (const auto& [first, n] : mine) {
      for (uint64_t s = first; s < first + n; ++s) {
        EXPECT_TRUE(seen.insert(s).second) << "seq " << s << " twice";
      }
      total += n;
    }
  }
  EXPECT_EQ(seq.last(), total);
  EXPECT_EQ(seen.size(), total);
  EXPECT_EQ(*seen.rbegin(), total) << "no gap: the runs tile 1..last";
  EXPECT_EQ(seq.Watermark(), total);
}

}  // namespace
}  // namespace tally::engine
