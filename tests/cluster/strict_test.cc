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
  void Add(const Takes& t) {
    applied += t.applied;
    refused += t.refused;
    failed += t.failed;
  }
};

// What takers take from: a counter's key, `delta` a unit at a time, at an
// event time (kEventTimeNow: the clock's).
struct Source {
  CounterRef ref;
  int64_t delta = -1;
  int64_t event_time_ms = kEventTimeNow;
};

// Takes one unit at a time (every third round two in one batch) until the
// source refuses `kRefusalsToStop` times in a row. A Busy answer (the
// value kept changing under the call) is retried under the same event
// ids, as a client would.
Takes Take(Db* db, const std::string& who, const Source& from) {
  const OnceOptions at{from.event_time_ms, {}};
  constexpr int kRefusalsToStop = 3;
  Takes t;
  int refusals = 0;
  for (int i = 0; refusals < kRefusalsToStop; ++i) {
    const std::string id = who + "-" + std::to_string(i);
    if (i % 3 == 2) {
      Batch b;
      b.AddOnce(from.ref, id + "a", from.delta, at);
      b.AddOnce(from.ref, id + "b", from.delta, at);
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
    Result<IncrementResult> r = db->IncrementOnce(from.ref, id, from.delta, at);
    while (r.status().IsBusy()) {
      r = db->IncrementOnce(from.ref, id, from.delta, at);
    }
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

// Takes from `from` in kProcesses processes of kThreads threads, each with
// its own Db on `target`, until it refuses: what they took, summed.
Takes TakeFromEveryProcess(const std::string& target, const Source& from) {
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
                            "p" + std::to_string(p) + "t" + std::to_string(t),
                            from);
          });
        }
        for (std::thread& t : threads) t.join();
        Takes sum;
        for (const Takes& t : takes) sum.Add(t);
        return sum;
      },
      failed);
  Takes total;
  for (const Takes& t : reports) total.Add(t);
  return total;
}

TEST(StrictOnCluster, ConcurrentTakersNeverPassTheBound) {
  const std::string target = test::ClusterTarget("strict");
  if (target.empty()) GTEST_SKIP() << "no cluster: TALLY_REDIS_ENV is unset";
  std::unique_ptr<Db> db;
  const Status opened = test::OpenStock(target, kStock, &db);
  ASSERT_TRUE(opened.ok()) << opened.ToString();

  const Takes total = TakeFromEveryProcess(target, Source{"stock"});
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

// A quota's window under the same race (docs/cluster.md, "Quotas"): the
// takers count into one key's window of a per-minute quota (all at one
// event time, so that the test's run never spans two windows) until it
// refuses: exactly the quota is applied in it, and the window reads so.
TEST(StrictOnCluster, ConcurrentCallersFillAQuotaWindowExactly) {
  constexpr int64_t kQuota = 300;
  const std::string target = test::ClusterTarget("quota");
  if (target.empty()) GTEST_SKIP() << "no cluster: TALLY_REDIS_ENV is unset";
  std::unique_ptr<Db> db;
  ASSERT_TRUE(Db::Open(Options(), target, &db).ok());
  CounterSpec per_minute;
  per_minute.bounds = CounterBounds::Between(0, kQuota);
  per_minute.bucket = BucketWidth::kMinute;
  per_minute.retention_ms = 3'600'000;
  per_minute.keyed = true;
  ASSERT_TRUE(db->CreateCounter("calls", per_minute).ok());
  const int64_t now = Clock::System()->NowMillis();
  const CounterRef key("calls", "api-key-1");
  const Takes total = TakeFromEveryProcess(target, Source{key, 1, now});
  EXPECT_EQ(total.failed, 0);
  EXPECT_EQ(total.applied, kQuota) << "calls applied in the window";
  const int64_t start = now - now % 60'000;
  EXPECT_EQ(db->ReadRange(key, start, start + 60'000).value(), kQuota);
  const Result<IncrementResult> over =
      db->Increment(key, 1, IncrementOptions{{}, now});
  ASSERT_TRUE(over.ok()) << over.status().ToString();
  EXPECT_EQ(over.value().outcome, Outcome::kRefused);
  EXPECT_EQ(over.value().remaining, 0);
  std::printf("quota: %lld calls applied, %lld refused over %d processes x "
              "%d threads\n",
              static_cast<long long>(total.applied),
              static_cast<long long>(total.refused), kProcesses, kThreads);
  EXPECT_TRUE(db->DeleteCounter("calls").ok());
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
