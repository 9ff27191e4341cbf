// Claims on the cluster under racing workers (docs/cluster.md, "Claims"):
// every claim call reads the record, decides by core::ClaimStep in its
// client and writes only where the record still holds what it read
// (tally_guarded), so the fencing must hold whatever interleaving the
// clients' rounds take.
//
// Several processes, each with its own Db and several threads, race over
// the same few keys with leases of a few milliseconds (shorter than a
// call's round trips now and then, so grants run out under their holders
// and are taken over), completing with counts (a plain op and a once-op)
// or releasing. Checked from every answer: no token of a key was granted
// twice (one holder per token); each thread saw a key's tokens grow; each
// key was completed exactly once, by its latest grant; and the counts were
// counted exactly once per completed key.
//
// Public API only; without a cluster (TALLY_REDIS_ENV) the test skips.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cluster/child_processes.h"
#include "cluster/cluster_target.h"
#include "tally/tally.h"

namespace tally {
namespace {

constexpr int kProcesses = 4;
constexpr int kThreads = 3;
constexpr int kKeys = 64;
constexpr int kMaxGrants = 1500;  // per process: its report's size

// One answer a worker got: a grant (acquired, not repeated) or a
// completion (completed, not repeated) of key `key` with `token`.
struct Event {
  uint16_t key = 0;
  uint8_t holder = 0;
  uint8_t completed = 0;
  uint32_t token = 0;
};

// What one process saw.
struct Report {
  int32_t events = 0;
  int32_t failed = 0;        // calls that failed (printed)
  int32_t shrank = 0;        // a thread saw a key's token go down or repeat
  int32_t stale_counted = 0;  // a stale answer that carried counts
  int32_t stale = 0;          // completions answered kStaleToken
  Event event[kMaxGrants];
};

std::string KeyName(int k) { return "job:" + std::to_string(k); }

// One worker: claims keys in random order until every key answers done.
void Work(Db* db, int holder, std::mutex* mu, Report* report) {
  std::mt19937 rng(static_cast<uint32_t>(holder * 7919 + 1));
  const std::string who = "w" + std::to_string(holder);
  std::map<int, uint32_t> last;  // key -> the last token this thread got
  std::set<int> done;
  auto fail = [&](const Status& s) {
    std::fprintf(stderr, "%s: %s\n", who.c_str(), s.ToString().c_str());
    std::lock_guard<std::mutex> l(*mu);
    ++report->failed;
  };
  auto record = [&](int key, uint32_t token, bool completed) {
    std::lock_guard<std::mutex> l(*mu);
    if (report->events < kMaxGrants) {
      report->event[report->events++] =
          Event{static_cast<uint16_t>(key), static_cast<uint8_t>(holder),
                static_cast<uint8_t>(completed), token};
    }
  };
  while (static_cast<int>(done.size()) < kKeys) {
    const int key = static_cast<int>(rng() % kKeys);
    if (done.count(key) != 0) continue;
    Result<ClaimResult> c = db->Claim(KeyName(key), who, 1 + rng() % 3);
    if (!c.ok()) return fail(c.status());
    if (c->answer == ClaimAnswer::kDone) done.insert(key);
    if (c->answer != ClaimAnswer::kAcquired) continue;
    const auto token = static_cast<uint32_t>(c->claim.token);
    if (!c->repeated) {
      if (last.count(key) != 0 && token <= last[key]) {
        std::lock_guard<std::mutex> l(*mu);
        ++report->shrank;
      }
      last[key] = token;
      record(key, token, false);
    }
    // The work: a few round trips, often past the lease (then another
    // worker may take the key over and this completion is stale).
    for (uint32_t n = rng() % 12; n > 0; --n) {
      Result<ClaimInfo> info = db->GetClaim(KeyName(key));
      if (!info.ok()) return fail(info.status());
    }
    if (rng() % 3 == 0) {  // a worker that failed: gives the key up
      Result<ClaimResult> r = db->ReleaseClaim(KeyName(key), token);
      if (!r.ok()) return fail(r.status());
      continue;
    }
    Batch counts;
    counts.Add("completed", 1);
    counts.AddOnce("completions", "done:" + KeyName(key), 1);
    Result<ClaimResult> d =
        db->CompleteClaim(KeyName(key), token, who, counts);
    if (!d.ok()) return fail(d.status());
    if (d->answer == ClaimAnswer::kStaleToken) {
      std::lock_guard<std::mutex> l(*mu);
      ++report->stale;
      report->stale_counted += d->counted.empty() ? 0 : 1;
    }
    if (d->answer == ClaimAnswer::kCompleted && !d->repeated) {
      record(key, token, true);
    }
  }
}

TEST(ClaimsFencing, RacingWorkersNeverShareATokenAndCountOnce) {
  const std::string target = test::ClusterTarget("claimfence-");
  if (target.empty()) GTEST_SKIP() << "no cluster: TALLY_REDIS_ENV is unset";
  {
    std::unique_ptr<Db> db;
    ASSERT_TRUE(Db::Open(Options(), target, &db).ok());
    ASSERT_TRUE(db->CreateCounter("completed", CounterSpec{4}).ok());
    ASSERT_TRUE(db->CreateCounter("completions", CounterSpec{4}).ok());
  }
  Report failed_report;
  failed_report.failed = 1;
  const std::vector<Report> reports = test::RunInChildren<Report>(
      kProcesses,
      [&](int p) {
        Report r;
        std::unique_ptr<Db> db;
        Status s = Db::Open(Options(), target, &db);
        if (!s.ok()) {
          r.failed = 1;
          return r;
        }
        std::mutex mu;
        std::vector<std::thread> threads;
        for (int t = 0; t < kThreads; ++t) {
          threads.emplace_back(Work, db.get(), p * kThreads + t, &mu, &r);
        }
        for (std::thread& t : threads) t.join();
        return r;
      },
      failed_report);

  std::map<std::pair<int, uint32_t>, int> granted;  // (key, token) -> holder
  std::map<int, uint32_t> top;                       // key -> highest token
  std::map<int, std::vector<uint32_t>> completed;    // key -> its tokens
  int grants = 0;
  int stale = 0;
  for (const Report& r : reports) {
    stale += r.stale;
    EXPECT_EQ(r.failed, 0);
    EXPECT_EQ(r.shrank, 0) << "a thread saw a key's token not grow";
    EXPECT_EQ(r.stale_counted, 0) << "a stale completion counted";
    ASSERT_LT(r.events, kMaxGrants) << "report full: raise kMaxGrants";
    for (int i = 0; i < r.events; ++i) {
      const Event& e = r.event[i];
      if (e.completed != 0) {
        completed[e.key].push_back(e.token);
        continue;
      }
      ++grants;
      const auto [at, added] = granted.try_emplace({e.key, e.token}, e.holder);
      EXPECT_TRUE(added) << KeyName(e.key) << " token " << e.token
                         << " granted to w" << at->second << " and w"
                         << int{e.holder};
      top[e.key] = std::max(top[e.key], e.token);
    }
  }
  std::unique_ptr<Db> db;
  ASSERT_TRUE(Db::Open(Options(), target, &db).ok());
  for (int k = 0; k < kKeys; ++k) {
    // Every token of the key was granted once: 1..top, no gap, no twin.
    for (uint32_t t = 1; t <= top[k]; ++t) {
      EXPECT_EQ(granted.count({k, t}), 1u) << KeyName(k) << " token " << t;
    }
    ASSERT_EQ(completed[k].size(), 1u) << KeyName(k) << " completions";
    EXPECT_EQ(completed[k][0], top[k]) << KeyName(k) << ": not its latest";
    const Result<ClaimInfo> info = db->GetClaim(KeyName(k));
    ASSERT_TRUE(info.ok()) << info.status().ToString();
    EXPECT_EQ(info->state, ClaimState::kDone);
    EXPECT_EQ(info->token, top[k]);
  }
  EXPECT_EQ(db->ReadExact("completed").value(), kKeys);
  EXPECT_EQ(db->ReadExact("completions").value(), kKeys);
  std::printf("%d grants over %d keys, %d stale completions (%d processes x "
              "%d threads)\n",
              grants, kKeys, stale, kProcesses, kThreads);
}

}  // namespace
}  // namespace tally
