// Claims across a SIGKILL: a worker process claims keys and completes each
// with a count in the same write, and is killed at a point the parent
// chooses by the progress it reports (after a claim, after a completion).
// After each kill the parent reopens the database and checks:
//  - every claim the worker was told was granted, and every completion it
//    was told was committed, is there (Options::sync);
//  - the counter the completions increment equals the number of completed
//    claims: "done" and "counted" never disagree;
//  - a claim the worker held when it died is busy for another holder until
//    its lease ends on the injected clock, then granted with token 2, and
//    the dead worker's completion (token 1) is refused as stale;
//  - Verify is clean.
// The worker is this test binary run again with only ClaimsCrashChild.Body.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "tally/admin.h"
#include "tally/batch.h"
#include "tally/db.h"
#include "testutil/child_test.h"
#include "testutil/db_fixture.h"

namespace tally {
namespace {

constexpr int64_t kStart = 1'796'083'200'000;
constexpr int64_t kLease = 60'000;
constexpr int kKeysPerCycle = 300;
constexpr char kDbVar[] = "TALLY_CLAIMS_CHILD_DB";
constexpr char kFdVar[] = "TALLY_CLAIMS_CHILD_FD";
constexpr char kClockVar[] = "TALLY_CLAIMS_CHILD_CLOCK";
constexpr char kCycleVar[] = "TALLY_CLAIMS_CHILD_CYCLE";

std::string KeyOf(int cycle, int i) {
  return "c" + std::to_string(cycle) + "-" + std::to_string(i);
}

Batch CountOne() {
  Batch b;
  b.Add("items", 1);
  return b;
}

// The worker (skipped unless the parent started it): claims and completes
// keys one after another, writing 'c' to the pipe after each grant and 'd'
// after each completion, until the parent's SIGKILL.
TEST(ClaimsCrashChild, Body) {
  const char* path = std::getenv(kDbVar);
  const char* fd = std::getenv(kFdVar);
  const char* clock_ms = std::getenv(kClockVar);
  const char* cycle = std::getenv(kCycleVar);
  if (path == nullptr || fd == nullptr || clock_ms == nullptr ||
      cycle == nullptr) {
    GTEST_SKIP() << "the worker ClaimsCrash starts";
  }
  test::ManualClock clock(std::atoll(clock_ms));
  Options o;
  o.clock = &clock;
  o.sync = true;
  std::unique_ptr<Db> db;
  ASSERT_OK(Db::Open(o, path, &db));
  const int out = std::atoi(fd);
  for (int i = 0; i < kKeysPerCycle; ++i) {
    const std::string key = KeyOf(std::atoi(cycle), i);
    auto c = db->Claim(key, "worker", kLease);
    ASSERT_OK(c);
    ASSERT_EQ(c->answer, ClaimAnswer::kAcquired) << key;
    ASSERT_EQ(::write(out, "c", 1), 1);
    auto d = db->CompleteClaim(key, c->claim.token, "r", CountOne());
    ASSERT_OK(d);
    ASSERT_EQ(d->answer, ClaimAnswer::kCompleted) << key;
    ASSERT_EQ(::write(out, "d", 1), 1);
  }
  for (;;) ::pause();  // until the parent's SIGKILL
}

class ClaimsCrash : public test::DbTest {
 protected:
  ClaimsCrash() : DbTest(kStart) {}

  // Starts the worker on path() for `cycle` with the parent's clock now,
  // reads `progress` bytes of its pipe, SIGKILLs it; returns the bytes
  // read ('c' and 'd'), short when the worker ended first (a failure).
  std::string RunWorker(int cycle, int progress) {
    int fd = -1;
    const pid_t pid = test::SpawnChildTest(
        "ClaimsCrashChild.Body",
        {std::string(kDbVar) + "=" + path(),
         std::string(kClockVar) + "=" + std::to_string(clock_.NowMillis()),
         std::string(kCycleVar) + "=" + std::to_string(cycle)},
        kFdVar, &fd);
    if (pid < 0) return "";
    std::string seen;
    while (static_cast<int>(seen.size()) < progress) {
      char buf[64];
      const ssize_t got = ::read(
          fd, buf, std::min<size_t>(sizeof buf, progress - seen.size()));
      if (got <= 0) break;
      seen.append(buf, static_cast<size_t>(got));
    }
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    ::close(fd);
    EXPECT_EQ(static_cast<int>(seen.size()), progress)
        << "the worker ended before the kill";
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    return seen;
  }
};

TEST_F(ClaimsCrash, KilledBetweenClaimAndCompleteAnotherHolderFinishes) {
  {
    auto db = Open(ClockOptions());
    ASSERT_NE(db, nullptr);
    ASSERT_OK(db->CreateCounter("items", {4}));
  }
  // Kill points in progress bytes: odd ones right after a grant was told,
  // even ones right after a completion was told (the worker runs on
  // between the report and the kill, so every point in between is hit
  // too, by chance).
  const std::vector<int> points = {1, 2, 37, 150, 301, 2 * kKeysPerCycle - 1};
  int64_t done_total = 0;
  for (int cycle = 0; cycle < static_cast<int>(points.size()); ++cycle) {
    SCOPED_TRACE("cycle " + std::to_string(cycle));
    const std::string seen = RunWorker(cycle, points[cycle]);
    ASSERT_EQ(static_cast<int>(seen.size()), points[cycle]);
    const int told_granted = (points[cycle] + 1) / 2;
    const int told_done = points[cycle] / 2;
    auto db = Open(ClockOptions());
    ASSERT_NE(db, nullptr);
    // What the worker was told is there; what it did after is either whole
    // or absent.
    std::vector<std::string> held;
    for (int i = 0; i < kKeysPerCycle; ++i) {
      const std::string key = KeyOf(cycle, i);
      auto c = db->GetClaim(key);
      if (i < told_granted) {
        ASSERT_OK(c) << key << " was granted and told";
      }
      if (!c.ok()) {
        ASSERT_TRUE(c.status().IsNotFound()) << c.status().ToString();
        break;  // the worker never asked for the keys after it
      }
      if (i < told_done) {
        EXPECT_EQ(c->state, ClaimState::kDone) << key;
      }
      if (c->state == ClaimState::kHeld) held.push_back(key);
      if (c->state == ClaimState::kDone) ++done_total;
    }
    ASSERT_LE(held.size(), 1u) << "the worker holds one claim at a time";
    EXPECT_EQ(test::OkValue(db->ReadExact("items")), done_total)
        << "completions and their counts disagree";
    // The claim the worker died holding: busy until its lease ends, then
    // granted to the rescuer with a higher token; the worker's own
    // completion, had it woken up, is refused.
    for (const std::string& key : held) {
      auto busy = db->Claim(key, "rescuer", kLease);
      ASSERT_OK(busy);
      EXPECT_EQ(busy->answer, ClaimAnswer::kBusy) << key;
      clock_.Advance(kLease);
      auto mine = db->Claim(key, "rescuer", kLease);
      ASSERT_OK(mine);
      ASSERT_EQ(mine->answer, ClaimAnswer::kAcquired) << key;
      EXPECT_EQ(mine->claim.token, 2u) << key;
      auto stale = db->CompleteClaim(key, 1, "r", CountOne());
      ASSERT_OK(stale);
      EXPECT_EQ(stale->answer, ClaimAnswer::kStaleToken) << key;
      auto done = db->CompleteClaim(key, 2, "rescued", CountOne());
      ASSERT_OK(done);
      EXPECT_EQ(done->answer, ClaimAnswer::kCompleted) << key;
      ++done_total;
    }
    EXPECT_EQ(test::OkValue(db->ReadExact("items")), done_total);
    VerifyReport report;
    ASSERT_OK(Verify(*db, &report));
    EXPECT_TRUE(report.ok()) << report.problems[0];
    clock_.Advance(1);  // the next worker starts after everything here
  }
  RecordProperty("completed", static_cast<int>(done_total));
}

}  // namespace
}  // namespace tally
