// The crash test's long mode (like RocksDB's db_crashtest.py):
//   tally_crash_driver [--cycles N] [--sync] [--import] [--seed S] [--dir DIR]
// runs N SIGKILL cycles of tally_crash_writer (found beside this binary),
// prints the cycles run and the invariant checks passed, and exits 1 on the
// first violation (printed), 0 otherwise.

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <random>
#include <string>

#include "crash/crash_check.h"
#include "testutil/temp_dir.h"

int main(int argc, char** argv) {
  tally::crash::CrashConfig config;
  config.cycles = 200;
  config.seed = std::random_device{}();
  std::string dir;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--cycles" && has_value) {
      config.cycles = std::atoi(argv[++i]);
    } else if (arg == "--seed" && has_value) {
      config.seed = std::strtoull(argv[++i], nullptr, 10);
    } else if (arg == "--dir" && has_value) {
      dir = argv[++i];
    } else if (arg == "--sync") {
      config.sync = true;
    } else if (arg == "--import") {
      config.import = true;  // kills during import (RunImportCycles)
    } else {
      std::fprintf(stderr,
                   "usage: tally_crash_driver [--cycles N] [--sync] [--import] "
                   "[--seed S] [--dir DIR]\n");
      return 2;
    }
  }
  if (config.cycles < 1) {
    std::fprintf(stderr, "tally_crash_driver: --cycles must be >= 1\n");
    return 2;
  }
  namespace fs = std::filesystem;
  const fs::path self = fs::canonical("/proc/self/exe");
  config.writer = (self.parent_path() / "tally_crash_writer").string();
  std::unique_ptr<tally::test::TempDir> temporary;
  if (dir.empty()) {
    temporary = std::make_unique<tally::test::TempDir>("tally-crash");
    if (!temporary->ok()) return 2;
    dir = temporary->path();
  }
  config.dir = dir;
  std::printf("crash test: %d cycles, %s, seed %llu, in %s\n", config.cycles,
              config.sync ? "sync" : "no sync",
              static_cast<unsigned long long>(config.seed), dir.c_str());
  std::fflush(stdout);
  const auto start = std::chrono::steady_clock::now();
  const tally::crash::CrashReport r =
      config.import ? tally::crash::RunImportCycles(config)
                    : tally::crash::RunCrashCycles(config);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::printf(
      "cycles run: %d, invariant checks passed: %llu, acknowledged "
      "calls checked: %llu, read-only points verified beside the "
      "writer: %llu live and %llu with it stopped, keyed counters' keys "
      "checked: %llu, batches "
      "across keys caught in flight: %llu (%llu applied), \"gauge\" calls "
      "caught in flight: %llu, power cuts modelled: %llu (%llu WAL bytes "
      "cut), violations: %zu, %.0f s\n",
      r.cycles, static_cast<unsigned long long>(r.checks),
      static_cast<unsigned long long>(r.acknowledged),
      static_cast<unsigned long long>(r.reader_points),
      static_cast<unsigned long long>(r.reader_stopped_points),
      static_cast<unsigned long long>(r.keys_checked),
      static_cast<unsigned long long>(r.in_flight_batches),
      static_cast<unsigned long long>(r.in_flight_applied),
      static_cast<unsigned long long>(r.in_flight_gauge),
      static_cast<unsigned long long>(r.power_cuts),
      static_cast<unsigned long long>(r.cut_wal_bytes), r.violations.size(),
      seconds);
  for (const std::string& v : r.violations) {
    std::printf("VIOLATION %s\n", v.c_str());
  }
  if (temporary != nullptr && !r.violations.empty()) temporary->Keep();
  return r.violations.empty() ? 0 : 1;
}
