// Exactly-once on a real cluster under concurrent copies: the same events
// delivered at once by several threads of one Db, and by several processes
// each with its own Db (its own connections), every copy racing the others
// to the function that checks and writes the marker. Each event must count
// exactly once: one kApplied among all its copies, the others kDuplicate,
// the counter's value the sum of the distinct events. With pins, the
// copies of one event carry different affinity keys (or none), so they
// are placed in different shards, and must still meet at one marker
// (docs/cluster.md, "Pinned once-increments").
//
// Public API only. The cluster comes from the env file named by
// TALLY_REDIS_ENV (scripts/redis_cluster); without it the tests skip.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cluster/child_processes.h"
#include "cluster/cluster_target.h"
#include "tally/tally.h"

namespace tally {
namespace {

constexpr int kEvents = 3000;
constexpr int kCopies = 4;  // threads, then processes
constexpr int64_t kDelta = 3;

std::vector<int> Shuffled(uint32_t seed) {
  std::vector<int> order(kEvents);
  for (int i = 0; i < kEvents; ++i) order[i] = i;
  std::mt19937 rng(seed);
  std::shuffle(order.begin(), order.end(), rng);
  return order;
}

struct Mode {
  bool batches;
  bool pinned;
};

// The affinity key of copy `copy`: none for every copy without pins; with
// them, none, "edge-1", "edge-2", none, ...
std::string PinOf(const Mode& mode, int copy) {
  if (!mode.pinned || copy % 3 == 0) return "";
  return "edge-" + std::to_string(copy % 3);
}

// Delivers every event once, in a shuffled order; how many were applied.
// -1 on any error (the test fails on it).
int Deliver(Db* db, uint32_t seed, const Mode& mode, int copy) {
  const std::vector<int> order = Shuffled(seed);
  const std::string pin = PinOf(mode, copy);
  const OnceOptions options{0, pin};
  int applied = 0;
  if (!mode.batches) {
    for (const int e : order) {
      Result<IncrementResult> r =
          db->IncrementOnce("c", "evt-" + std::to_string(e), kDelta, options);
      if (!r.ok()) {
        std::fprintf(stderr, "delivery failed: %s\n",
                     r.status().ToString().c_str());
        return -1;
      }
      if (r.value().outcome == Outcome::kApplied) ++applied;
      if (r.value().outcome != Outcome::kApplied &&
          r.value().outcome != Outcome::kDuplicate) {
        return -1;
      }
    }
    return applied;
  }
  for (size_t at = 0; at < order.size(); at += 50) {
    Batch b;
    for (size_t i = at; i < std::min(order.size(), at + 50); ++i) {
      b.AddOnce("c", "evt-" + std::to_string(order[i]), kDelta, options);
    }
    std::vector<IncrementResult> results;
    const Status s = db->Apply(b, &results);
    if (!s.ok()) {
      std::fprintf(stderr, "delivery failed: %s\n", s.ToString().c_str());
      return -1;
    }
    for (const IncrementResult& r : results) {
      if (r.outcome == Outcome::kApplied) ++applied;
      if (r.outcome != Outcome::kApplied && r.outcome != Outcome::kDuplicate) {
        return -1;
      }
    }
  }
  return applied;
}

void ExpectCountedOnce(const std::string& target, int applied) {
  std::unique_ptr<Db> db;
  ASSERT_TRUE(Db::Open(Options(), target, &db).ok());
  EXPECT_EQ(applied, kEvents) << "applied outcomes over every copy";
  Result<int64_t> v = db->ReadExact("c");
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v.value(), kEvents * kDelta);
  Result<uint64_t> markers = db->CountMarkers("c");
  ASSERT_TRUE(markers.ok()) << markers.status().ToString();
  EXPECT_EQ(markers.value(), static_cast<uint64_t>(kEvents));
  EXPECT_TRUE(db->DeleteCounter("c").ok());
}

class ExactlyOnce : public ::testing::TestWithParam<Mode> {
 protected:
  // A namespace per test and mode.
  std::string Namespace(const char* test) const {
    return std::string(test) + (GetParam().batches ? "b" : "s") +
           (GetParam().pinned ? "p" : "");
  }
};

TEST_P(ExactlyOnce, CopiesFromThreadsOfOneDbCountOnce) {
  const std::string target = test::ClusterTarget(Namespace("t"));
  if (target.empty()) GTEST_SKIP() << "no cluster: TALLY_REDIS_ENV is unset";
  std::unique_ptr<Db> db;
  ASSERT_TRUE(Db::Open(Options(), target, &db).ok());
  ASSERT_TRUE(db->CreateCounter("c", CounterSpec{8}).ok());
  std::vector<int> applied(kCopies, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kCopies; ++t) {
    threads.emplace_back([&, t] {
      applied[t] = Deliver(db.get(), 1000 + t, GetParam(), t);
    });
  }
  for (std::thread& t : threads) t.join();
  int total = 0;
  for (const int a : applied) {
    ASSERT_GE(a, 0) << "a delivery failed";
    total += a;
  }
  ExpectCountedOnce(target, total);
}

TEST_P(ExactlyOnce, CopiesFromSeveralProcessesCountOnce) {
  const std::string target = test::ClusterTarget(Namespace("p"));
  if (target.empty()) GTEST_SKIP() << "no cluster: TALLY_REDIS_ENV is unset";
  {
    std::unique_ptr<Db> db;
    ASSERT_TRUE(Db::Open(Options(), target, &db).ok());
    ASSERT_TRUE(db->CreateCounter("c", CounterSpec{8}).ok());
  }
  // Each child opens its own Db and reports its applied count.
  const Mode mode = GetParam();
  const std::vector<int> applied = test::RunInChildren<int>(
      kCopies,
      [&](int p) {
        std::unique_ptr<Db> db;
        if (!Db::Open(Options(), target, &db).ok()) return -1;
        return Deliver(db.get(), 2000 + p, mode, p);
      },
      -1);
  int total = 0;
  for (size_t p = 0; p < applied.size(); ++p) {
    ASSERT_GE(applied[p], 0) << "child " << p << " failed a delivery";
    total += applied[p];
  }
  ExpectCountedOnce(target, total);
}

INSTANTIATE_TEST_SUITE_P(
    Modes, ExactlyOnce,
    ::testing::Values(Mode{false, false}, Mode{true, false}, Mode{false, true},
                      Mode{true, true}),
    [](const ::testing::TestParamInfo<Mode>& info) {
      return std::string(info.param.batches ? "Batches" : "SingleCalls") +
             (info.param.pinned ? "Pinned" : "");
    });

}  // namespace
}  // namespace tally
