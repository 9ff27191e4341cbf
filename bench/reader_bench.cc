// tally_reader_bench: how long counterctl's read commands take, measured as
// whole processes (start, read-only open, the read, exit), and what a
// long-lived reader's Db::Refresh costs (docs/design.md, "readers in other
// processes"; targets in docs/benchmarks.md).
//
//   BM_CounterctlRead/<cmd>/idle           after a history of once-increments
//                                          and a clean close, no writer
//   BM_CounterctlRead/<cmd>/beside_writer  while another process runs
//                                          `counterctl apply` at full speed
//     cmd: get, list, verify. Counters p50_ms, p95_ms, max_ms, samples.
//   BM_Refresh/incremental  Refresh of a read-only Db beside that writer
//   BM_Refresh/reopen       a fresh read-only Db::Open instead (what a
//                           Refresh costs when it cannot catch up)
//     Counters refresh_ms (the median), p95_ms, max_ms, samples; the
//     incremental one also catch_ups and reopens (how its Refreshes went).
//
// The writer runs `counterctl apply --batch 1` (one commit per line, as in
// the history) over generated files of new events, one after the
// other, until the benchmark ends; it is then killed (a crash, which the
// next open recovers).

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_util.h"
#include "engine/test_hooks.h"
#include "tally/db.h"
#include "tally/options.h"

extern char** environ;

namespace tally::bench {
namespace {

constexpr char kCounterctl[] = TALLY_COUNTERCTL_PATH;
constexpr int kCounters = 10;

// Runs `args` (args[0] a path) with stdout to /dev/null and stderr to
// `err` (truncated); its pid, or -1.
pid_t Spawn(const std::vector<std::string>& args,
            const std::string& err = "/dev/null") {
  std::vector<char*> argv;
  for (const std::string& a : args)
    argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, err.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  return rc == 0 ? pid : -1;
}

// Runs `args` to the end; true when it exited 0, else false with *error
// holding what it wrote on stderr.
bool RunToEnd(const std::vector<std::string>& args, std::string* error) {
  const std::string err = args[2] + "-stderr.txt";  // args[2]: the --db path
  const pid_t pid = Spawn(args, err);
  int status = 0;
  if (pid >= 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
      WEXITSTATUS(status) == 0) {
    return true;
  }
  std::ifstream in(err);
  std::getline(in, *error);
  *error = args[3] + " failed: " + *error;
  return false;
}

// The shared database: kCounters counters, then Scaled(50000) single
// once-increments (one commit each), closed cleanly. Built on first use,
// removed at exit.
struct History {
  TempDir dir;
  std::string db = dir.path() + "/db";
  std::string error;

  History() {
    Options o;
    o.rollup_interval_ms = 0;
    std::unique_ptr<Db> writer;
    Status s = Db::Open(o, db, &writer);
    for (int c = 0; s.ok() && c < kCounters; ++c) {
      CounterSpec spec;
      spec.shards = 10;
      s = writer->CreateCounter("c" + std::to_string(c), spec);
    }
    const int64_t n = Scaled(50000);
    for (int64_t i = 0; s.ok() && i < n; ++i) {
      s = writer
              ->IncrementOnce("c" + std::to_string(i % kCounters),
                              "evt-" + std::to_string(i), 1 + i % 7)
              .status();
    }
    if (!s.ok()) error = s.ToString();
  }
};

History& SharedHistory() {
  static History h;
  return h;
}

// Another process applying new events at full speed until Stop().
class Writer {
 public:
  explicit Writer(std::string db) : db_(std::move(db)) {
    thread_ = std::thread([this] { Loop(); });
  }
  ~Writer() { Stop(); }
  // Kills the running apply and waits for the loop to end. Whether every
  // apply before it succeeded.
  bool Stop() {
    stop_.store(true);
    {
      const pid_t pid = pid_.load();
      if (pid > 0) kill(pid, SIGKILL);
    }
    if (thread_.joinable()) thread_.join();
    return ok_;
  }
  // Whether an apply has been started (and the file it applies written).
  bool Started() const { return runs_.load() > 0; }

 private:
  void Loop() {
    const std::string file = db_ + "-writer.jsonl";
    for (int run = 0; !stop_.load(); ++run) {
      {
        std::ofstream out(file, std::ios::trunc);
        const int64_t lines = Scaled(400000);
        for (int64_t i = 0; i < lines; ++i) {
          out << "{\"counter\":\"c" << (i % kCounters) << "\",\"event_id\":\"w"
              << run << "-" << i << "\",\"delta\":1}\n";
        }
      }
      const pid_t pid = Spawn(
          {kCounterctl, "--db", db_, "apply", "--file", file, "--batch", "1"});
      if (pid < 0) {
        ok_ = false;
        return;
      }
      pid_.store(pid);
      runs_.fetch_add(1);
      int status = 0;
      waitpid(pid, &status, 0);
      pid_.store(-1);
      const bool killed = WIFSIGNALED(status) && stop_.load();
      if (!killed && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
        ok_ = false;
        return;
      }
    }
  }

  const std::string db_;
  std::atomic<bool> stop_{false};
  std::atomic<pid_t> pid_{-1};
  std::atomic<int> runs_{0};
  bool ok_ = true;  // the loop thread's, read after join
  std::thread thread_;
};

// Waits until the writer has applied for a while: its process started and
// a second passed (the read-only opens then have a WAL to replay).
void WarmUp(const Writer& w) {
  while (!w.Started())
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  std::this_thread::sleep_for(std::chrono::seconds(1));
}

std::vector<std::string> CommandOf(const std::string& cmd,
                                   const std::string& db) {
  if (cmd == "get") return {kCounterctl, "--db", db, "get", "c0"};
  if (cmd == "list") return {kCounterctl, "--db", db, "list"};
  return {kCounterctl, "--db", db, "verify"};
}

void BM_CounterctlRead(benchmark::State& state, std::string cmd,
                       bool beside_writer) {
  History& h = SharedHistory();
  if (!h.error.empty()) return Fail(state, "history", h.error);
  std::unique_ptr<Writer> writer;
  if (beside_writer) {
    writer = std::make_unique<Writer>(h.db);
    WarmUp(*writer);
  }
  const std::vector<std::string> args = CommandOf(cmd, h.db);
  LatencyLog lat;
  TimedLoop(state, &lat, 1, cmd.c_str(), [&](std::string* error) {
    return RunToEnd(args, error);
  });
  if (writer != nullptr && !writer->Stop()) {
    return Fail(state, "writer", "counterctl apply failed");
  }
  lat.ReportMs(state);
}

void BM_Refresh(benchmark::State& state, bool incremental) {
  History& h = SharedHistory();
  if (!h.error.empty()) return Fail(state, "history", h.error);
  Writer writer(h.db);
  WarmUp(writer);
  Options o;
  o.read_only = true;
  std::unique_ptr<Db> db;
  Status s = Db::Open(o, h.db, &db);
  if (!s.ok()) return Fail(state, "open", s.ToString());
  LatencyLog lat;
  lat.Reset(1, static_cast<size_t>(state.max_iterations));
  for (auto _ : state) {
    // The writer moves on between two refreshes of a polling reader.
    state.PauseTiming();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    state.ResumeTiming();
    Stopwatch sw;
    if (incremental) {
      s = db->Refresh();
    } else {
      std::unique_ptr<Db> fresh;
      s = Db::Open(o, h.db, &fresh);
      if (s.ok()) db = std::move(fresh);
    }
    lat.Record(0, sw.Lap());
    if (s.ok()) s = db->ReadExact("c0").status();
    if (!s.ok()) {
      Fail(state, "refresh", s.ToString());
      break;
    }
  }
  if (incremental) {
    const engine::RefreshCounts n = engine::RefreshCountsForTest(db.get());
    state.counters["catch_ups"] = static_cast<double>(n.catch_ups);
    state.counters["reopens"] = static_cast<double>(n.reopens);
  }
  db.reset();
  if (!writer.Stop()) return Fail(state, "writer", "counterctl apply failed");
  lat.ReportMs(state);
  state.counters["refresh_ms"] = state.counters["p50_ms"];
}

void RegisterAll() {
  const int64_t samples = Scaled(10);
  for (bool beside : {false, true}) {
    for (const char* cmd : {"get", "list", "verify"}) {
      Register(std::string("BM_CounterctlRead/") + cmd +
                   (beside ? "/beside_writer" : "/idle"),
               samples, BM_CounterctlRead, std::string(cmd), beside);
    }
  }
  Register("BM_Refresh/incremental", Scaled(20), BM_Refresh, true);
  Register("BM_Refresh/reopen", Scaled(20), BM_Refresh, false);
}

}  // namespace
}  // namespace tally::bench

int main(int argc, char** argv) {
  tally::bench::RegisterAll();
  return tally::bench::RunBenchmarks(
      argc, argv,
      {{"history_once_increments",
        std::to_string(tally::bench::Scaled(50000))},
       {"writer", "counterctl apply --batch 1, new events"}});
}
