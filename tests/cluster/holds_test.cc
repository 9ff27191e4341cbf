// Reservations on the cluster under concurrent clients: a reservation's
// call reads the key's value, open holds and record, decides with core/,
// and writes only where none of them changed (tally_guarded); a take
// reads the value with the open holds and tally_write guards both. So no
// interleaving may take units that are held, or take a committed
// reservation's units twice (docs/cluster.md, "Reservations").
//
// Several processes, each with its own Db and two worker threads (process
// 0 also runs a monitor), work one stock of kStock (minimum 0) at once:
// each worker reserves and commits, reserves and releases, reserves with a
// hold of 2 ms that runs out before its commit is tried, and takes
// directly with once-increments (adding a little back when refused, so
// that the stock stays near empty, where the held units decide), until
// its rounds are done. The monitor reads the key (ReadHeld) throughout.
// Then:
// every answer and every read kept value - held >= 0; the value less the
// restocks, plus the units of the reservations stored committed and of
// the takes whose redelivery answers kDuplicate, is exactly kStock, and
// agrees with what the workers were answered; a second commit of every committed reservation
// is a duplicate and moves nothing.
//
// Public API only; without a cluster (TALLY_REDIS_ENV) the test skips.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cluster/child_processes.h"
#include "cluster/cluster_target.h"
#include "tally/tally.h"

namespace tally {
namespace {

constexpr int64_t kStock = 300;
constexpr int kProcesses = 4;
constexpr int kThreads = 2;
constexpr int kRounds = 60;
constexpr int64_t kHoldMs = 60'000;
constexpr int64_t kShortHoldMs = 2;

// What one worker (or a process, summed) was answered.
struct Work {
  int64_t committed_units = 0;  // commits answered kApplied
  int64_t commits = 0;
  int64_t taken_units = 0;  // takes answered kApplied
  int64_t takes = 0;
  int64_t released = 0;
  int64_t expired = 0;   // commits refused because the hold ran out
  int64_t refused = 0;   // reserves and takes refused (the stock ran out)
  int64_t restocked = 0;  // units added back after a refused take
  int64_t failed = 0;    // calls that failed, or answers that broke a rule
  int64_t reads = 0;     // the monitor's reads
  int64_t min_available = std::numeric_limits<int64_t>::max();

  void Add(const Work& w) {
    committed_units += w.committed_units;
    commits += w.commits;
    taken_units += w.taken_units;
    takes += w.takes;
    released += w.released;
    expired += w.expired;
    refused += w.refused;
    restocked += w.restocked;
    failed += w.failed;
    reads += w.reads;
    min_available = std::min(min_available, w.min_available);
  }
};

std::string Id(int p, int t, int i) {
  return "p" + std::to_string(p) + "t" + std::to_string(t) + "-" +
         std::to_string(i);
}
int64_t UnitsOf(int i) { return 1 + i % 3; }
// A refused take adds this much back (once, by its own event id): the
// stock stays near empty, where held units decide what is left to take.
constexpr int64_t kRestock = 2;
std::string RestockId(const std::string& id) { return id + "-restock"; }

// The call, again while it answers Busy (other clients kept changing the
// key); a failure, or an answer whose key is below its minimum, counts.
template <typename Call>
auto Retried(Work* w, const Call& call) {
  auto r = call();
  while (r.status().IsBusy()) r = call();
  if (!r.ok()) {
    std::fprintf(stderr, "holds: %s\n", r.status().ToString().c_str());
    ++w->failed;
  } else if (r.value().value < 0) {
    ++w->failed;
  }
  return r;
}

void Commit(Db* db, const std::string& id, Work* w) {
  const auto r = Retried(w, [&] { return db->CommitReservation("stock", id); });
  if (!r.ok()) return;
  if (r.value().outcome == Outcome::kApplied) {
    ++w->commits;
    w->committed_units += r.value().units;
  } else if (r.value().state == HoldState::kExpired) {
    ++w->expired;
  }
  if (r.value().available < 0) ++w->failed;
}

// One worker's rounds: round i reserves and commits (i % 4 == 0),
// reserves and releases (1), reserves briefly and leaves it to run out
// (2: committed after the last round), or takes directly (3).
Work Worker(Db* db, int p, int t) {
  Work w;
  std::vector<std::string> brief;
  for (int i = 0; i < kRounds; ++i) {
    const std::string id = Id(p, t, i);
    if (i % 4 == 3) {
      const auto r = Retried(&w, [&] {
        return db->IncrementOnce("stock", id, -UnitsOf(i));
      });
      if (r.ok() && r.value().outcome == Outcome::kApplied) {
        ++w.takes;
        w.taken_units += UnitsOf(i);
      } else if (r.ok()) {
        ++w.refused;
        const auto add = Retried(&w, [&] {
          return db->IncrementOnce("stock", RestockId(id), kRestock);
        });
        if (add.ok() && add.value().outcome == Outcome::kApplied) {
          w.restocked += kRestock;
        }
      }
      continue;
    }
    const int64_t hold = i % 4 == 2 ? kShortHoldMs : kHoldMs;
    const auto r = Retried(
        &w, [&] { return db->Reserve("stock", id, UnitsOf(i), hold); });
    if (!r.ok()) continue;
    if (r.value().available < 0) ++w.failed;
    if (r.value().outcome != Outcome::kApplied) {
      ++w.refused;
      continue;
    }
    if (i % 4 == 0) Commit(db, id, &w);
    if (i % 4 == 2) brief.push_back(id);
    if (i % 4 == 1) {
      const auto rel = Retried(
          &w, [&] { return db->ReleaseReservation("stock", id); });
      if (rel.ok() && rel.value().outcome == Outcome::kApplied) ++w.released;
    }
  }
  for (const std::string& id : brief) Commit(db, id, &w);
  return w;
}

// Reads the stock until the workers are done: the lowest available seen.
void Monitor(Db* db, const std::atomic<bool>& done, Work* w) {
  while (!done.load()) {
    const Result<HeldValue> h = db->ReadHeld("stock");
    if (!h.ok() || h.value().value < 0) {
      ++w->failed;
      continue;
    }
    ++w->reads;
    w->min_available = std::min(w->min_available, h.value().available);
  }
}

Work RunProcess(const std::string& target, int p) {
  Work sum;
  std::unique_ptr<Db> db;
  if (!Db::Open(Options(), target, &db).ok()) {
    sum.failed = 1;
    return sum;
  }
  std::vector<Work> works(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] { works[t] = Worker(db.get(), p, t); });
  }
  std::atomic<bool> done{false};
  Work watched;
  std::thread monitor;
  if (p == 0) monitor = std::thread([&] { Monitor(db.get(), done, &watched); });
  for (std::thread& t : threads) t.join();
  done.store(true);
  if (monitor.joinable()) monitor.join();
  for (const Work& w : works) sum.Add(w);
  sum.Add(watched);
  return sum;
}

// Whether the redelivery of once-increment `id` of `delta` finds it
// counted (kDuplicate) rather than refused.
bool Counted(Db* db, const std::string& id, int64_t delta) {
  const Result<IncrementResult> r = db->IncrementOnce("stock", id, delta);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (r.ok() && r.value().outcome == Outcome::kDuplicate) return true;
  EXPECT_EQ(r.ok() ? r.value().outcome : Outcome::kRefused, Outcome::kRefused)
      << id << " counted by its redelivery";
  return false;
}

// What the store says was taken: the units of the reservations stored
// committed (each committed again: a duplicate that moves nothing) and of
// the takes whose redelivery is a duplicate, less the restocks.
int64_t TakenByTheStore(Db* db, Work* seen) {
  int64_t taken = 0;
  for (int p = 0; p < kProcesses; ++p) {
    for (int t = 0; t < kThreads; ++t) {
      for (int i = 0; i < kRounds; ++i) {
        const std::string id = Id(p, t, i);
        if (i % 4 == 3) {
          if (Counted(db, id, -UnitsOf(i))) {
            taken += UnitsOf(i);
          } else if (Counted(db, RestockId(id), kRestock)) {
            taken -= kRestock;
          }
          continue;
        }
        const Result<ReservationInfo> info = db->GetReservation("stock", id);
        EXPECT_TRUE(info.ok()) << id << ": " << info.status().ToString();
        if (!info.ok() || info.value().state != HoldState::kCommitted) continue;
        taken += info.value().units;
        ++seen->commits;
        const Result<ReservationResult> again =
            db->CommitReservation("stock", id);
        EXPECT_TRUE(again.ok() &&
                    again.value().outcome == Outcome::kDuplicate)
            << id;
      }
    }
  }
  return taken;
}

TEST(HoldsOnCluster, ConcurrentReservationsAndTakesNeverOversell) {
  const std::string target = test::ClusterTarget("holds");
  if (target.empty()) GTEST_SKIP() << "no cluster: TALLY_REDIS_ENV is unset";
  std::unique_ptr<Db> db;
  const Status opened = test::OpenStock(target, kStock, &db);
  ASSERT_TRUE(opened.ok()) << opened.ToString();

  Work failed;
  failed.failed = 1;
  const std::vector<Work> reports = test::RunInChildren<Work>(
      kProcesses, [&](int p) { return RunProcess(target, p); }, failed);
  Work total;
  for (const Work& w : reports) total.Add(w);
  EXPECT_EQ(total.failed, 0);
  EXPECT_GT(total.reads, 0);
  EXPECT_GE(total.min_available, 0) << "a read saw held units taken";
  // Every kind of answer happened: the race covered them all.
  EXPECT_GT(total.commits, 0);
  EXPECT_GT(total.takes, 0);
  EXPECT_GT(total.released, 0);
  EXPECT_GT(total.expired, 0);
  EXPECT_GT(total.refused, 0) << "the stock never ran out";

  // Every hold is over now (committed, released, or run out).
  const HeldValue end = db->ReadHeld("stock").value();
  EXPECT_GE(end.value, 0);
  EXPECT_EQ(end.held, 0);
  EXPECT_EQ(kStock + total.restocked - end.value,
            total.committed_units + total.taken_units)
      << "what the workers were answered";
  Work stored;
  const int64_t taken = TakenByTheStore(db.get(), &stored);
  EXPECT_EQ(taken, kStock - end.value) << "what the store holds";
  EXPECT_GT(total.restocked, 0);
  EXPECT_EQ(stored.commits, total.commits);
  EXPECT_EQ(db->ReadExact("stock").value(), end.value)
      << "a redelivery or a second commit moved the value";
  std::printf("holds: value %lld of %lld; %lld commits (%lld units), %lld "
              "takes (%lld units), %lld released, %lld ran out, %lld "
              "refused, %lld restocked; %lld reads, lowest available %lld\n",
              static_cast<long long>(end.value),
              static_cast<long long>(kStock),
              static_cast<long long>(total.commits),
              static_cast<long long>(total.committed_units),
              static_cast<long long>(total.takes),
              static_cast<long long>(total.taken_units),
              static_cast<long long>(total.released),
              static_cast<long long>(total.expired),
              static_cast<long long>(total.refused),
              static_cast<long long>(total.restocked),
              static_cast<long long>(total.reads),
              static_cast<long long>(total.min_available));
  EXPECT_TRUE(db->DeleteCounter("stock").ok());
}

}  // namespace
}  // namespace tally
