// What every benchmark binary of bench/ shares: temporary directories, a
// cheap deterministic random generator, per-operation latency recording and
// the timed loop around it, event-id delivery streams, run-size scaling,
// process/disk figures and main().
//
// Header-only and independent of tally and RocksDB (only google-benchmark
// and the tests' TempDir, itself header-only),
// so that the peer benchmarks (SQLite, Redis) use exactly the same latency
// recording and id streams as the tally ones.
//
// Thread safety: TempDir, Rng and Stopwatch are per-thread values.
// LatencyLog: Record(thread, ...) may be called concurrently for distinct
// thread indexes; Report after every recording thread has finished.

#ifndef TALLY_BENCH_BENCH_UTIL_H_
#define TALLY_BENCH_BENCH_UTIL_H_

#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "tests/testutil/temp_dir.h"

namespace tally::bench {

// A fresh directory under $TMPDIR (or /tmp), removed with its contents on
// destruction: the tests' TempDir (tests/testutil/temp_dir.h, which needs
// neither gtest nor tally), named tally-bench-XXXXXX. Declare it before the
// database that lives in it, so that the database is closed first.
class TempDir : public test::TempDir {
 public:
  TempDir() : test::TempDir("tally-bench") {}
};

// xorshift64*: a cheap, deterministic picker, so that key choice costs the
// same (next to nothing) for every strategy and peer.
class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed | 1) {}
  uint32_t Uniform(uint32_t n) {
    s_ ^= s_ >> 12;
    s_ ^= s_ << 25;
    s_ ^= s_ >> 27;
    return static_cast<uint32_t>((s_ * 0x2545f4914f6cdd1dULL) >> 32) % n;
  }

 private:
  uint64_t s_;
};

// Skips the benchmark with `what` and the error's text. Google benchmark
// keeps running the function after SkipWithError: the caller must return
// or leave its loop.
inline void Fail(benchmark::State& state, const std::string& what,
                 const std::string& error) {
  state.SkipWithError((what + ": " + error).c_str());
}

// Nanoseconds on the steady clock since construction or the last Lap().
class Stopwatch {
 public:
  Stopwatch() : t0_(std::chrono::steady_clock::now()) {}
  int64_t Lap() {
    const auto now = std::chrono::steady_clock::now();
    const int64_t ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(now - t0_).count();
    t0_ = now;
    return ns;
  }

 private:
  std::chrono::steady_clock::time_point t0_;
};

// Per-operation latencies, one vector per thread (no sharing on the hot
// path), merged when reported. Reported as benchmark counters p50_us,
// p99_us and max_us (microseconds). Only one thread may call Report: the
// counters of a multi-threaded benchmark are summed over its threads.
class LatencyLog {
 public:
  void Reset(int threads, size_t reserve_per_thread) {
    per_thread_.assign(static_cast<size_t>(threads), {});
    for (auto& v : per_thread_) v.reserve(reserve_per_thread);
  }
  void Record(int thread, int64_t ns) {
    per_thread_[static_cast<size_t>(thread)].push_back(ns);
  }
  size_t size() const {
    size_t n = 0;
    for (const auto& v : per_thread_) n += v.size();
    return n;
  }
  void Report(benchmark::State& state) {
    std::vector<int64_t> all = All();
    if (all.empty()) return;
    state.counters["p50_us"] = Percentile(&all, 0.50) / 1e3;
    state.counters["p99_us"] = Percentile(&all, 0.99) / 1e3;
    state.counters["max_us"] =
        static_cast<double>(*std::max_element(all.begin(), all.end())) / 1e3;
  }
  // The same in milliseconds, for slow operations (whole processes, opens):
  // p50_ms, p95_ms, max_ms and samples.
  void ReportMs(benchmark::State& state) {
    std::vector<int64_t> all = All();
    if (all.empty()) return;
    state.counters["p50_ms"] = Percentile(&all, 0.50) / 1e6;
    state.counters["p95_ms"] = Percentile(&all, 0.95) / 1e6;
    state.counters["max_ms"] =
        static_cast<double>(*std::max_element(all.begin(), all.end())) / 1e6;
    state.counters["samples"] = static_cast<double>(all.size());
  }

 private:
  std::vector<int64_t> All() const {
    std::vector<int64_t> all;
    all.reserve(size());
    for (const auto& v : per_thread_) all.insert(all.end(), v.begin(), v.end());
    return all;
  }
  static double Percentile(std::vector<int64_t>* v, double q) {
    const size_t k = std::min(
        v->size() - 1, static_cast<size_t>(q * static_cast<double>(v->size())));
    std::nth_element(v->begin(), v->begin() + static_cast<ptrdiff_t>(k),
                     v->end());
    return static_cast<double>((*v)[k]);
  }

  std::vector<std::vector<int64_t>> per_thread_;
};

// The timed loop of a single-threaded benchmark: per iteration, op(&error)
// under a Stopwatch, its latency recorded in `lat` (reset here for the
// benchmark's iterations; the caller reports it after its own checks). op
// returns false after setting its error text: the benchmark then fails with
// `what` and that text, and the loop ends. Counts items_per_op items per
// iteration done.
template <typename Op>
void TimedLoop(benchmark::State& state, LatencyLog* lat, int64_t items_per_op,
               const char* what, Op op) {
  lat->Reset(1, static_cast<size_t>(state.max_iterations));
  std::string error;
  for (auto _ : state) {
    Stopwatch sw;
    const bool ok = op(&error);
    lat->Record(0, sw.Lap());
    if (!ok) {
      Fail(state, what, error);
      break;
    }
  }
  state.SetItemsProcessed(state.iterations() * items_per_op);
}

// A delivery stream of n event ids, "evt-K", in which dup_percent of the
// deliveries repeat an earlier id (0, 50 or 90: every id then comes 1, 2 or
// 10 times), the copies shuffled (fixed seed) within windows of `window`
// deliveries, the way a redelivering queue interleaves retries with new
// events. With dup_percent 0 the ids are evt-0, evt-1, ... in order.
// *distinct gets the number of different ids among the n. Built before the
// timed loop: a caller has its ids before it calls.
inline std::vector<std::string> DeliveryIds(size_t n, int dup_percent,
                                            size_t* distinct,
                                            size_t window = 4096) {
  const size_t copies =
      dup_percent <= 0 ? 1 : static_cast<size_t>(100 / (100 - dup_percent));
  std::vector<uint64_t> order;
  order.reserve(n + copies);
  for (uint64_t k = 0; order.size() < n; ++k) {
    for (size_t c = 0; c < copies; ++c) order.push_back(k);
  }
  std::mt19937_64 rng(42);
  if (copies > 1) {
    for (size_t begin = 0; begin < order.size(); begin += window) {
      const size_t end = std::min(order.size(), begin + window);
      std::shuffle(order.begin() + static_cast<ptrdiff_t>(begin),
                   order.begin() + static_cast<ptrdiff_t>(end), rng);
    }
  }
  order.resize(n);
  std::vector<bool> seen(n, false);
  *distinct = 0;
  std::vector<std::string> ids;
  ids.reserve(n);
  for (uint64_t k : order) {
    if (!seen[k]) {
      seen[k] = true;
      ++*distinct;
    }
    ids.push_back("evt-" + std::to_string(k));
  }
  return ids;
}

// How many operations a benchmark runs: base × $TALLY_BENCH_SCALE (default
// 1, the quick mode of bench/run_suite.sh; full mode sets 5). Every suite
// benchmark runs a fixed number of operations (Iterations), so its setup
// runs once and a quick run's length is known in advance.
inline int64_t Scaled(int64_t base) {
  const char* s = std::getenv("TALLY_BENCH_SCALE");
  const long long scale = s != nullptr ? std::atoll(s) : 1;
  return base * std::max(1LL, scale);
}

// Whether a binary's Redis rows run: it was built with hiredis
// (`with_hiredis`) and $REDIS_PORT names the server. When not, says why on
// stderr ("BINARY: no Redis rows (...)"), so that a run without them is
// not mistaken for a run with them.
inline bool RedisRows(const char* binary, bool with_hiredis) {
  const char* why = !with_hiredis ? "built without hiredis"
                    : std::getenv("REDIS_PORT") == nullptr
                        ? "REDIS_PORT is not set"
                        : nullptr;
  if (why != nullptr)
    std::fprintf(stderr, "%s: no Redis rows (%s)\n", binary, why);
  return why == nullptr;
}

// The process's peak resident set (VmHWM), in bytes; 0 if unknown.
inline uint64_t PeakRssBytes() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("VmHWM:", 0) == 0) {
      return std::strtoull(line.c_str() + 6, nullptr, 10) * 1024;
    }
  }
  return 0;
}

// Resets VmHWM to the current RSS (Linux: "5" into clear_refs), so that a
// benchmark's peak is its own and not an earlier one's.
inline void ResetPeakRss() {
  std::ofstream f("/proc/self/clear_refs");
  f << "5";
}

// The apparent size of the regular files under `path`, in bytes.
inline uint64_t DirBytes(const std::string& path) {
  uint64_t total = 0;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(path, ec);
       !ec && it != std::filesystem::recursive_directory_iterator();
       it.increment(ec)) {
    if (it->is_regular_file(ec)) total += it->file_size(ec);
  }
  return total;
}

// Registers a suite benchmark: a fixed `iterations` operations (per
// thread; at least 1) timed in wall time, fn(state, args...) per run.
template <typename Fn, typename... Args>
benchmark::internal::Benchmark* Register(const std::string& name,
                                         int64_t iterations, Fn fn,
                                         Args... args) {
  return benchmark::RegisterBenchmark(name.c_str(), fn, args...)
      ->Iterations(std::max<int64_t>(1, iterations))
      ->UseRealTime();
}

// main() of a benchmark binary whose benchmarks are registered: runs them
// with `context` (name, value pairs) recorded in the JSON output, so that a
// figure can be traced to its setup. Returns the exit status.
inline int RunBenchmarks(
    int argc, char** argv,
    const std::vector<std::pair<std::string, std::string>>& context = {}) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  for (const auto& [name, value] : context) {
    benchmark::AddCustomContext(name, value);
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

}  // namespace tally::bench

#endif  // TALLY_BENCH_BENCH_UTIL_H_
