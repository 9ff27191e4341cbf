// tally_recovery_bench: how long an open takes after a history of
// increments, against the history's size, after a clean close and after a
// SIGKILL, for Db::Open and for a read-only open (docs/durability.md,
// "Recovery time").
//
// Each history is written by a child process (this binary run again with
// --write-history, so the child starts with no RocksDB threads of ours): one
// thread, single-op commits, once-increments and plain ones alternating over
// a few counters, like an app. It then either destroys its Db (a clean
// close) or SIGKILLs itself first. The parent times the opens of that
// directory: a read-only open first (it changes nothing on disk; the median
// of kReadOnlyOpens opens), then Db::Open (which flushes what it replayed,
// so it is timed once). Every open is checked against the totals the child
// wrote: a wrong number fails the benchmark instead of timing it.
//
// Benchmarks (N = increments): BM_ReadOnlyOpenAfterClose/N,
// BM_OpenAfterClose/N, BM_ReadOnlyOpenAfterKill/N, BM_OpenAfterKill/N with
// the default Options, and BM_ReadOnlyOpenAfterKillUnbounded/N,
// BM_OpenAfterKillUnbounded/N with max_wal_bytes = kMaxWalBytes (the log
// then bounded only by RocksDB's memtables; a clean close before the
// close-time flush left exactly the log a SIGKILL leaves, so this is also
// "after close, before"). Counters: open_ms (wall), open_cpu_ms (the
// process's CPU time during the open), wal_bytes (the *.log bytes
// left before the open), increments, write_per_s (the child's rate),
// write_cpu_ns (the child's CPU per increment, every thread: what flushes
// and compactions cost the writer),
// sst_files (table files before the open: what the flushes left) and, after
// a clean close, close_ms (the child's Db destruction, its flush included).
// N: 1M in quick mode (TALLY_BENCH_SCALE=1), 1M, 10M and 50M in full mode.
// TALLY_RECOVERY_BOUNDS_MB="16,64,..." adds BM_*AfterKill/N/max_wal_mb:B
// for each bound B (the sweep behind the default; not in the suite), of
// TALLY_RECOVERY_INCREMENTS increments each when set. A bound listed twice
// writes its history again (alternate bounds to compare write rates).

#include <benchmark/benchmark.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "tally/limits.h"
#include "tally/tally.h"
#include "tests/testutil/dir_files.h"

namespace tally::bench {
namespace {

constexpr int kCounters = 8;
constexpr uint32_t kShards = 4;
constexpr int kReadOnlyOpens = 3;

std::string CounterName(int c) { return "app.c" + std::to_string(c); }

enum class End { kClose, kKill };

// The CPU time of the whole process, in milliseconds: with the machine
// shared, a steadier measure of an open's work than its wall time (the
// replay and a writer's recovery flush run in the opening thread).
double ProcessCpuMs() {
  timespec ts{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 +
         static_cast<double>(ts.tv_nsec) / 1e6;
}

// ---- the child: writes one history ----

// The totals the parent checks: one line per counter, "name total", then
// "rate increments_per_second" and "cpu_ns per_increment".
int WriteHistory(const std::string& path, int64_t n, uint64_t max_wal_bytes,
                 End end) {
  Options options;
  options.max_wal_bytes = max_wal_bytes;
  std::unique_ptr<Db> db;
  Status s = Db::Open(options, path, &db);
  if (!s.ok()) {
    std::fprintf(stderr, "open %s: %s\n", path.c_str(), s.ToString().c_str());
    return 1;
  }
  for (int c = 0; c < kCounters; ++c) {
    s = db->CreateCounter(CounterName(c), {kShards});
    if (!s.ok()) {
      std::fprintf(stderr, "create: %s\n", s.ToString().c_str());
      return 1;
    }
  }
  std::vector<int64_t> totals(kCounters, 0);
  std::vector<std::string> names;
  for (int c = 0; c < kCounters; ++c) names.push_back(CounterName(c));
  Rng rng(42);
  std::string id;
  const double cpu0 = ProcessCpuMs();
  const auto t0 = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < n; ++i) {
    const int c = static_cast<int>(rng.Uniform(kCounters));
    Result<IncrementResult> r =
        (i % 2 == 0)
            ? db->IncrementOnce(names[c],
                                id.assign("ev-").append(std::to_string(i)), 1)
            : db->Increment(names[c], 1);
    if (!r.ok()) {
      std::fprintf(stderr, "increment %lld: %s\n", static_cast<long long>(i),
                   r.status().ToString().c_str());
      return 1;
    }
    ++totals[c];
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  {
    std::ofstream out(path + ".totals");
    for (int c = 0; c < kCounters; ++c)
      out << names[c] << " " << totals[c] << "\n";
    out << "rate " << static_cast<int64_t>(static_cast<double>(n) / secs)
        << "\n";
    // Nanoseconds of CPU (every thread: flushes and compactions included)
    // per increment.
    out << "cpu_ns "
        << static_cast<int64_t>((ProcessCpuMs() - cpu0) * 1e6 /
                                static_cast<double>(n))
        << "\n";
    if (!out.good()) return 1;
  }
  if (end == End::kKill) {
    ::raise(SIGKILL);  // no destructor, no flush, no Close
  }
  const auto c0 = std::chrono::steady_clock::now();
  db.reset();  // the clean close
  std::ofstream close(path + ".close");
  close << std::chrono::duration<double, std::milli>(
               std::chrono::steady_clock::now() - c0)
               .count()
        << "\n";
  return close.good() ? 0 : 1;
}

// ---- the parent ----

struct History {
  std::unique_ptr<TempDir> dir;
  std::string path;
  std::map<std::string, int64_t> totals;
  int64_t write_per_s = 0;
  int64_t write_cpu_ns = 0;  // CPU per increment, background work included
  double close_ms = 0;       // the child's clean close (0 after a SIGKILL)
  bool pristine = false;     // no writer open has replayed (and flushed) it
};

// One history per (end, n, bound), shared by the read-only and the writer
// benchmark of that history (registered in that order).
std::map<std::string, History>& Histories() {
  static auto* h = new std::map<std::string, History>();
  return *h;
}

bool Spawn(const std::string& path, int64_t n, uint64_t bound, End end,
           std::string* error) {
  const pid_t pid = ::fork();
  if (pid < 0) {
    *error = "fork failed";
    return false;
  }
  if (pid == 0) {
    const std::string ns = std::to_string(n);
    const std::string bs = std::to_string(bound);
    const char* e = end == End::kKill ? "kill" : "close";
    ::execl("/proc/self/exe", "tally_recovery_bench", "--write-history",
            path.c_str(), ns.c_str(), bs.c_str(), e,
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) {
    *error = "waitpid failed";
    return false;
  }
  const bool want_kill = end == End::kKill;
  const bool ok = want_kill
                      ? (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
                      : (WIFEXITED(status) && WEXITSTATUS(status) == 0);
  if (!ok) {
    *error = "history writer ended with status " + std::to_string(status);
  }
  return ok;
}

History* GetHistory(benchmark::State& state, End end, int64_t n,
                    uint64_t bound) {
  const std::string key = std::to_string(static_cast<int>(end)) + "/" +
                          std::to_string(n) + "/" + std::to_string(bound);
  History& h = Histories()[key];
  if (h.dir != nullptr && h.pristine) return &h;
  h = History();
  h.dir = std::make_unique<TempDir>();
  if (!h.dir->ok()) {
    Fail(state, "mkdtemp", "failed");
    return nullptr;
  }
  h.path = h.dir->Sub("tally");
  std::string error;
  if (!Spawn(h.path, n, bound, end, &error)) {
    Fail(state, "write history", error);
    return nullptr;
  }
  std::ifstream in(h.path + ".totals");
  std::string name;
  int64_t v = 0;
  while (in >> name >> v) {
    if (name == "rate") {
      h.write_per_s = v;
    } else if (name == "cpu_ns") {
      h.write_cpu_ns = v;
    } else {
      h.totals[name] = v;
    }
  }
  std::ifstream close(h.path + ".close");
  if (!(close >> h.close_ms)) h.close_ms = 0;
  if (h.totals.size() != kCounters) {
    Fail(state, "write history", "no totals");
    return nullptr;
  }
  h.pristine = true;
  return &h;
}

struct OpenTime {
  double ms = -1;  // negative after failing the benchmark
  double cpu_ms = 0;
};

// Opens `h` (read-only or not), timed; checks every total.
OpenTime TimedOpen(benchmark::State& state, const History& h, bool read_only,
                   uint64_t bound) {
  Options options;
  options.read_only = read_only;
  options.max_wal_bytes = bound;
  std::unique_ptr<Db> db;
  OpenTime t;
  const double cpu0 = ProcessCpuMs();
  const auto t0 = std::chrono::steady_clock::now();
  Status s = Db::Open(options, h.path, &db);
  const double ms = std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - t0)
                        .count();
  t.cpu_ms = ProcessCpuMs() - cpu0;
  if (!s.ok()) {
    Fail(state, "open", s.ToString());
    return t;
  }
  for (const auto& [name, want] : h.totals) {
    Result<int64_t> got = db->ReadExact(name);
    if (!got.ok() || *got != want) {
      Fail(state, "check " + name,
           got.ok() ? std::to_string(*got) + " != " + std::to_string(want)
                    : got.status().ToString());
      return t;
    }
  }
  t.ms = ms;
  return t;
}

void BM_Open(benchmark::State& state, End end, bool read_only, int64_t n,
             uint64_t bound) {
  for (auto _ : state) {
    state.PauseTiming();
    History* h = GetHistory(state, end, n, bound);
    if (h == nullptr) break;
    const uint64_t wal = test::WalBytes(h->path);
    const uint64_t ssts = test::FilesWithExtension(h->path, ".sst").count;
    state.ResumeTiming();
    std::vector<OpenTime> times;
    for (int i = 0; i < (read_only ? kReadOnlyOpens : 1); ++i) {
      const OpenTime one = TimedOpen(state, *h, read_only, bound);
      if (one.ms < 0) break;
      times.push_back(one);
    }
    if (state.error_occurred()) break;
    if (!read_only) h->pristine = false;
    std::sort(times.begin(), times.end(),
              [](const OpenTime& a, const OpenTime& b) { return a.ms < b.ms; });
    const OpenTime median = times[times.size() / 2];
    state.SetIterationTime(median.ms / 1000);
    state.counters["open_ms"] = median.ms;
    state.counters["open_cpu_ms"] = median.cpu_ms;
    state.counters["wal_bytes"] = static_cast<double>(wal);
    state.counters["sst_files"] = static_cast<double>(ssts);
    state.counters["increments"] = static_cast<double>(n);
    state.counters["write_per_s"] = static_cast<double>(h->write_per_s);
    state.counters["write_cpu_ns"] = static_cast<double>(h->write_cpu_ns);
    if (end == End::kClose) state.counters["close_ms"] = h->close_ms;
  }
}

void Add(const std::string& name, End end, bool read_only, int64_t n,
         uint64_t bound) {
  benchmark::RegisterBenchmark(name.c_str(), BM_Open, end, read_only, n, bound)
      ->Iterations(1)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
}

// Read-only first: a writer open flushes what it replays.
void AddPair(const std::string& suffix, End end, int64_t n, uint64_t bound,
             const std::string& tail) {
  const std::string e = end == End::kClose ? "Close" : "Kill";
  const std::string at = "/" + std::to_string(n) + tail;
  Add("BM_ReadOnlyOpenAfter" + e + suffix + at, end, true, n, bound);
  Add("BM_OpenAfter" + e + suffix + at, end, false, n, bound);
}

void RegisterAll() {
  std::vector<int64_t> sizes = {1000000};
  if (Scaled(1) > 1) sizes = {1000000, 10000000, 50000000};
  const uint64_t def = Options().max_wal_bytes;
  for (int64_t n : sizes) {
    AddPair("", End::kClose, n, def, "");
    AddPair("", End::kKill, n, def, "");
    AddPair("Unbounded", End::kKill, n, kMaxWalBytes, "");
  }
  if (const char* sweep = std::getenv("TALLY_RECOVERY_BOUNDS_MB")) {
    if (const char* n = std::getenv("TALLY_RECOVERY_INCREMENTS")) {
      sizes = {std::max<int64_t>(1, std::atoll(n))};
    }
    std::stringstream in(sweep);
    std::string mb;
    while (std::getline(in, mb, ',')) {
      const uint64_t bound = std::strtoull(mb.c_str(), nullptr, 10) << 20;
      if (bound < kMinWalBytes || bound > kMaxWalBytes) continue;
      for (int64_t n : sizes) {
        AddPair("", End::kKill, n, bound, "/max_wal_mb:" + mb);
      }
    }
  }
}

}  // namespace
}  // namespace tally::bench

int main(int argc, char** argv) {
  if (argc == 6 && std::string(argv[1]) == "--write-history") {
    return tally::bench::WriteHistory(
        argv[2], std::atoll(argv[3]), std::strtoull(argv[4], nullptr, 10),
        std::string(argv[5]) == "kill" ? tally::bench::End::kKill
                                       : tally::bench::End::kClose);
  }
  tally::bench::RegisterAll();
  return tally::bench::RunBenchmarks(
      argc, argv,
      {{"tally_version", TALLY_VERSION_STRING},
       {"max_wal_bytes_default",
        std::to_string(tally::Options().max_wal_bytes)}});
}
