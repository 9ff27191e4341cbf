// EventLocks: one stripe per (counter, event), spread over the stripes;
// a held stripe excludes its other holders but not other stripes; a
// MultiGuard takes its stripes sorted and once each, and two of them with
// overlapping sets in opposite orders never deadlock.

#include "engine/event_locks.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "engine/rules.h"
#include "testutil/testutil.h"

namespace tally::engine {
namespace {

// A bound for the hang detector only, far beyond any run.
constexpr std::chrono::seconds kHang{120};

TEST(EventLocks, StripeIsStableInRangeAndSpread) {
  constexpr uint32_t kStripes = 64;
  EventLocks locks(kStripes);
  std::set<uint32_t> used;
  int differs_by_counter = 0;
  for (int e = 0; e < 10000; ++e) {
    const uint64_t h = StableHash("ORDER_ACCEPTED:" + std::to_string(e));
    const uint32_t s = locks.StripeOf(7, h);
    ASSERT_LT(s, kStripes);
    EXPECT_EQ(locks.StripeOf(7, h), s) << "one event, one stripe";
    used.insert(s);
    if (locks.StripeOf(8, h) != s) ++differs_by_counter;
  }
  EXPECT_EQ(used.size(), kStripes) << "10,000 events must reach every stripe";
  // One event id counted in two counters should not share a stripe every
  // time (the counter id is mixed in); by chance it does 1 in 64.
  EXPECT_GT(differs_by_counter, 9000);
}

TEST(EventLocks, OneStripeIsAlwaysStripeZero) {
  EventLocks locks(1);
  for (uint64_t h : {uint64_t{0}, uint64_t{1}, ~uint64_t{0}}) {
    EXPECT_EQ(locks.StripeOf(1, h), 0u);
    EXPECT_EQ(locks.StripeOf(~uint64_t{0}, h), 0u);
  }
}

// The main thread holds a stripe and writes `value` (not atomic) before it
// lets go; a second holder of the same stripe must see the write: it cannot
// get in before. (Without exclusion it reads 0, and TSAN reports the race.)
TEST(EventLocks, GuardExcludesOtherHoldersOfTheStripe) {
  EventLocks locks(16);
  for (int round = 0; round < 200; ++round) {
    int value = 0;
    int seen = -1;
    std::atomic<bool> waiting{false};
    std::thread other;
    {
      EventLocks::Guard held(&locks, 5);
      other = std::thread([&] {
        waiting.store(true);
        EventLocks::Guard g(&locks, 5);
        seen = value;
      });
      while (!waiting.load()) std::this_thread::yield();
      value = round + 1;
    }
    other.join();
    EXPECT_EQ(seen, round + 1);
  }
}

// A held stripe does not block another one: the other thread finishes while
// the main thread still holds its stripe (a hang here means one lock for
// all stripes).
TEST(EventLocks, GuardDoesNotBlockOtherStripes) {
  EventLocks locks(16);
  EventLocks::Guard held(&locks, 3);
  test::FinishesOrDie("a guard on stripe 4 while 3 is held", kHang, [&] {
    EventLocks::Guard g(&locks, 4);
    std::vector<uint32_t> stripes = {0, 1, 2, 15};
    EventLocks::MultiGuard m(&locks, &stripes);
  });
}

TEST(EventLocks, MultiGuardSortsAndDeduplicatesItsStripes) {
  EventLocks locks(16);
  std::vector<uint32_t> stripes = {9, 2, 9, 0, 15, 2, 2};
  {
    EventLocks::MultiGuard m(&locks, &stripes);
    EXPECT_EQ(stripes, (std::vector<uint32_t>{0, 2, 9, 15}));
  }
  // Every stripe is free again (a stripe taken twice would have deadlocked
  // above; one left locked would hang here).
  test::FinishesOrDie("guards on every stripe after a MultiGuard", kHang, [&] {
    for (uint32_t s = 0; s < 16; ++s) EventLocks::Guard g(&locks, s);
  });
}

// The main thread holds one stripe of a MultiGuard's set: the MultiGuard
// waits for it, and writes after the main thread's last write under it.
TEST(EventLocks, MultiGuardWaitsForEachOfItsStripes) {
  EventLocks locks(16);
  int value = 0;
  int seen = -1;
  std::atomic<bool> waiting{false};
  std::thread other;
  {
    EventLocks::Guard held(&locks, 11);
    other = std::thread([&] {
      std::vector<uint32_t> stripes = {1, 11, 6};
      waiting.store(true);
      EventLocks::MultiGuard m(&locks, &stripes);
      seen = value;
    });
    while (!waiting.load()) std::this_thread::yield();
    value = 42;
  }
  other.join();
  EXPECT_EQ(seen, 42);
}

// Two threads take overlapping stripe sets listed in opposite orders, many
// times: ascending acquisition means they never deadlock.
TEST(EventLocks, OpposedMultiGuardsNeverDeadlock) {
  EventLocks locks(8);
  int shared = 0;  // written only under stripes 1 and 6 (both sets hold them)
  test::FinishesOrDie("two MultiGuards over {1, 3, 6} and {6, 3, 1}", kHang,
                      [&] {
                        auto run = [&](std::vector<uint32_t> order) {
                          for (int i = 0; i < 20000; ++i) {
                            std::vector<uint32_t> stripes = order;
                            EventLocks::MultiGuard m(&locks, &stripes);
                            ++shared;
                          }
                        };
                        std::thread a(run, std::vector<uint32_t>{1, 3, 6});
                        std::thread b(run, std::vector<uint32_t>{6, 3, 1});
                        a.join();
                        b.join();
                      });
  EXPECT_EQ(shared, 40000);
}

}  // namespace
}  // namespace tally::engine
