// counterctl sync under SIGKILL: the Done-means. Two edges keep
// counting while `counterctl --db EDGE sync --to HUB` runs 50 times, each
// run killed at a random point (after a random number of acknowledged
// batches, or before its first); then one sync per edge runs to the end and
// the hub's totals must equal the edges' exactly.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "counterctl_fixture.h"
#include "tally/admin.h"
#include "tally/db.h"
#include "tally/outbox.h"
#include "testutil/sanitized.h"

namespace tally::test {
namespace {

using CounterctlSync = CounterctlTest;

// Starts counterctl with `args`; kills it with SIGKILL once it has printed
// `kill_after_lines` lines (0: at once). Returns true when it was killed
// before it exited on its own.
bool RunAndKill(const std::vector<std::string>& args, int kill_after_lines) {
  int out[2];
  if (::pipe(out) != 0) return false;
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out[1], 1);
    ::close(out[0]);
    ::close(out[1]);
    const int devnull = ::open("/dev/null", O_WRONLY);
    ::dup2(devnull, 2);
    std::vector<char*> argv;
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(out[1]);
  int lines = 0;
  char c;
  while (lines < kill_after_lines && ::read(out[0], &c, 1) == 1) {
    if (c == '\n') ++lines;
  }
  const bool killed = ::kill(pid, SIGKILL) == 0;
  int status = 0;
  ::waitpid(pid, &status, 0);
  ::close(out[0]);
  return killed && WIFSIGNALED(status);
}

TEST_F(CounterctlSync, FiftyKilledSyncsThenOneLoseAndDoubleNothing) {
  const std::string hub_path = tmp_.Sub("hub");
  const std::string edges[2] = {tmp_.Sub("edge-a"), tmp_.Sub("edge-b")};
  CounterSpec outbox_spec;
  outbox_spec.shards = 4;
  outbox_spec.outbox = true;
  {
    auto hub = OpenOrDie(hub_path);
    ASSERT_OK(hub->CreateCounter("orders", {16}));
    ASSERT_OK(hub->CreateCounter("amount", {16}));
    for (const std::string& e : edges) {
      auto edge = OpenOrDie(e);
      ASSERT_OK(edge->CreateCounter("orders", outbox_spec));
      ASSERT_OK(edge->CreateCounter("amount", outbox_spec));
    }
  }
  std::mt19937_64 rng(::testing::UnitTest::GetInstance()->random_seed());
  int event = 0;
  // Each edge counts 60 orders (some redelivered) and their amounts.
  auto count_more = [&](const std::string& path) {
    auto edge = OpenOrDie(path);
    for (int i = 0; i < 60; ++i, ++event) {
      Batch b;
      const std::string id = "ord-" + std::to_string(event);
      const int64_t amount = static_cast<int64_t>(rng() % 1000) + 1;
      b.AddOnce("orders", id, 1);
      b.AddOnce("amount", id, amount);
      if (rng() % 4 == 0) b.AddOnce("orders", id, 1);  // a redelivery
      std::vector<IncrementResult> results;
      ASSERT_OK(edge->Apply(b, &results));
      if (rng() % 5 == 0) {
        ASSERT_OK(edge->Increment("amount", -1));
      }
    }
  };

  // Fewer runs under the sanitizers: they look for memory errors and races,
  // not for more rounds (every run is killed mid-way in practice).
  const int runs = kSanitized ? 16 : 50;
  int cut = 0;
  for (int run = 0; run < runs; ++run) {
    const std::string& edge = edges[run % 2];
    count_more(edge);
    const int lines = static_cast<int>(rng() % 6);
    if (RunAndKill({COUNTERCTL, "--db", edge, "sync", "--to", hub_path,
                    "--batch", "7", "--progress"},
                   lines)) {
      ++cut;
    }
  }
  EXPECT_GE(cut, runs / 2) << "too few runs were cut short to prove anything";

  for (const std::string& edge : edges) {
    ProcessResult r = CtlOn(edge, {"sync", "--to", hub_path, "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  auto hub = OpenOrDie(hub_path);
  for (const char* name : {"orders", "amount"}) {
    int64_t edge_total = 0;
    for (const std::string& e : edges) {
      Options ro;
      ro.read_only = true;
      std::unique_ptr<Db> edge;
      ASSERT_OK(Db::Open(ro, e, &edge));
      edge_total += OkValue(edge->ReadExact(name));
      EXPECT_EQ(OkValue(tally::GetOutboxStatus(*edge)).entries, 0u);
    }
    EXPECT_EQ(OkValue(hub->ReadExact(name)), edge_total) << name;
  }
  VerifyReport report;
  ASSERT_OK(tally::Verify(*hub, &report));
  EXPECT_TRUE(report.ok()) << report.problems.front();
  std::printf("sync crash test: %d of %d runs killed mid-way\n", cut, runs);
}

}  // namespace
}  // namespace tally::test
