// Strict counters on the cluster under concurrent writers: the bound must
// hold whatever interleaving the clients' read-decide-write rounds take.
// Each op of a strict key is decided by core/ in its client against the
// value it read, and tally_write writes it only if the key still holds
// that value (a guard; TALLYSTALE otherwise, and the client reads and
// decides again): docs/cluster.md, "Strict counters".
//
// Several processes, each with its own Db and two threads, take one unit
// at a time from a stock of kStock (minimum 0) with once-increments, some
// as single calls and some in batches, until the stock refuses them: the
// takes applied over all of them must be exactly kStock, the value 0, and
// a redelivery of every take answers what it was first answered.
//
// Public API only; without a cluster (TALLY_REDIS_ENV) the tests skip.

#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cluster/child_processes.h"
#include "cluster/cluster_target.h"
#include "tally/tally.h"

namespace tally {
namespace {

constexpr int64_t kStock = 600;
constexpr int kProcesses = 4;
constexpr int kThreads = 2;

// What one taker did: takes applied, refused, and calls that failed.
struct Takes {
  int64_t applied = 0;
  int64_t refused = 0;
  int64_t failed = 0;
};

// Takes one unit at a time (every third round two in one batch) until the
// stock refuses `kRefusalsToStop` times in a row. A Busy answer (the
// value kept changing under the call) is retried under the same event
// ids, as a client would.
Takes Take(Db* db, const std::string& who) {
  constexpr int kRefusalsToStop = 3;
  Takes t;
  int refusals = 0;
  for (int i = 0; refusals < kRefusalsToStop; ++i) {
    const std::string id = who + "-" + std::to_string(i);
    if (i % 3 == 2) {
      Batch b;
      b.AddOnce("stock", id + "a", -1);
      b.AddOnce("stock", id + "b", -1);
      std::vector<IncrementResult> r;
      Status s = db->Apply(b, &r);
      while (s.IsBusy()) s = db->Apply(b, &r);
      if (s.IsOutOfRange()) {  // not both fit: the batch is refused whole
        ++refusals;
        continue;
      }
      if (!s.ok()) {
        std::fprintf(stderr, "%s: %s\n", who.c_str(), s.ToString().c_str());
        ++t.failed;
        return t;
      }
      for (const IncrementResult& x : r) {
        if (x.outcome == Outcome::kApplied) ++t.applied;
      }
      refusals = 0;
      continue;
    }
    Result<IncrementResult> r = db->IncrementOnce("stock", id, -1);
    while (r.status().IsBusy()) r = db->IncrementOnce("stock", id, -1);
    if (!r.ok()) {
      std::fprintf(stderr, "%s: %s\n", who.c_str(),
                   r.status().ToString().c_str());
      ++t.failed;
      return t;
    }
    if (r.value().outcome == Outcome::kApplied) {
      ++t.applied;
      refusals = 0;
    } else if (r.value().outcome == Outcome::kRefused) {
      ++t.refused;
      ++refusals;
    }
  }
  return t;
}

TEST(StrictOnCluster, ConcurrentTakersNeverPassTheBound) {
  const std::string target = test::ClusterTarget("strict");
  if (target.empty()) GTEST_SKIP() << "no cluster: TALLY_REDIS_ENV is unset";
  std::unique_ptr<Db> db;
  ASSERT_TRUE(Db::Open(Options(), target, &db).ok());
  CounterSpec stock;
  stock.bounds = CounterBounds::AtLeast(0);
  ASSERT_TRUE(db->CreateCounter("stock", stock).ok());
  ASSERT_TRUE(db->Increment("stock", kStock).ok());

  // Each child opens its own Db and reports its threads' takes.
  Takes failed;
  failed.failed = 1;
  const std::vector<Takes> reports = test::RunInChildren<Takes>(
      kProcesses,
      [&](int p) {
        std::unique_ptr<Db> mine;
        if (!Db::Open(Options(), target, &mine).ok()) return failed;
        std::vector<Takes> takes(kThreads);
        std::vector<std::thread> threads;
        for (int t = 0; t < kThreads; ++t) {
          threads.emplace_back([&, t] {
            takes[t] = Take(mine.get(),
                            "p" + std::to_string(p) + "t" + std::to_string(t));
          });
        }
        for (std::thread& t : threads) t.join();
        Takes sum;
        for (const Takes& t : takes) {
          sum.applied += t.applied;
          sum.refused += t.refused;
          sum.failed += t.failed;
        }
        return sum;
      },
      failed);
  Takes total;
  for (const Takes& t : reports) {
    total.applied += t.applied;
    total.refused += t.refused;
    total.failed += t.failed;
  }
  EXPECT_EQ(total.failed, 0);
  EXPECT_EQ(total.applied, kStock) << "takes applied over every taker";
  EXPECT_EQ(db->ReadExact("stock").value(), 0);
  EXPECT_GT(total.refused, 0);
  // Every single take's marker answers it again: applied ones as
  // duplicates of -1, refused ones refused, and the value stays 0.
  for (int p = 0; p < kProcesses; ++p) {
    for (int t = 0; t < kThreads; ++t) {
      const std::string id =
          "p" + std::to_string(p) + "t" + std::to_string(t) + "-0";
      Result<IncrementResult> r = db->IncrementOnce("stock", id, -1);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      EXPECT_TRUE(r.value().outcome == Outcome::kDuplicate ||
                  r.value().outcome == Outcome::kRefused)
          << OutcomeName(r.value().outcome);
    }
  }
  EXPECT_EQ(db->ReadExact("stock").value(), 0);
  std::printf("strict: %lld takes applied, %lld refused over %d processes x "
              "%d threads\n",
              static_cast<long long>(total.applied),
              static_cast<long long>(total.refused), kProcesses, kThreads);
  EXPECT_TRUE(db->DeleteCounter("stock").ok());
}

// Resets of a sharded counter race too: each reads the sum of the shards
// and adds the target less that sum; two that read the same sum must not
// both subtract it. Each key's reset sequence, guarded and bumped by every
// reset, makes the later one read again (docs/cluster.md, "Resets"). With
// only resets running, to 7 or to 9, the value must end at one of them.
TEST(StrictOnCluster, ConcurrentResetsLeaveOneOfTheirValues) {
  const std::string target = test::ClusterTarget("resets");
  if (target.empty()) GTEST_SKIP() << "no cluster: TALLY_REDIS_ENV is unset";
  std::unique_ptr<Db> db;
  ASSERT_TRUE(Db::Open(Options(), target, &db).ok());
  ASSERT_TRUE(db->CreateCounter("views", CounterSpec{8}).ok());
  for (int i = 0; i < 64; ++i) ASSERT_TRUE(db->Increment("views", 100).ok());
  constexpr int kResets = 15;
  const std::vector<int> failed = test::RunInChildren<int>(
      kProcesses,
      [&](int p) {
        std::unique_ptr<Db> mine;
        if (!Db::Open(Options(), target, &mine).ok()) return 1;
        int errors = 0;
        std::vector<std::thread> threads;
        std::vector<int> thread_errors(kThreads, 0);
        for (int t = 0; t < kThreads; ++t) {
          threads.emplace_back([&, t] {
            for (int i = 0; i < kResets; ++i) {
              const std::string id = "r" + std::to_string(p) + "." +
                                     std::to_string(t) + "." +
                                     std::to_string(i);
              const int64_t to = (p + t + i) % 2 ? 9 : 7;
              Result<IncrementResult> r = mine->Reset("views", id, to);
              while (r.status().IsBusy()) r = mine->Reset("views", id, to);
              if (!r.ok() || r.value().outcome != Outcome::kApplied) {
                std::fprintf(stderr, "%s: %s\n", id.c_str(),
                             r.ok() ? OutcomeName(r.value().outcome)
                                    : r.status().ToString().c_str());
                ++thread_errors[t];
              }
            }
          });
        }
        for (std::thread& t : threads) t.join();
        for (const int e : thread_errors) errors += e;
        return errors;
      },
      1);
  for (const int f : failed) EXPECT_EQ(f, 0);
  const int64_t value = db->ReadExact("views").value();
  EXPECT_TRUE(value == 7 || value == 9) << "value " << value;
  EXPECT_TRUE(db->DeleteCounter("views").ok());
}

}  // namespace
}  // namespace tally
