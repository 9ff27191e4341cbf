// What the benchmark binaries that drive tally's public API share (on top of
// bench_util.h): opening a database in a TempDir, creating counters and the
// after-run check of totals and engine figures. Every helper fails the
// benchmark (SkipWithError) rather than return a wrong figure.

#ifndef TALLY_BENCH_TALLY_UTIL_H_
#define TALLY_BENCH_TALLY_UTIL_H_

#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "tally/tally.h"

namespace tally::bench {

// Opens a fresh tally database in `dir`; nullptr after failing the benchmark.
inline std::unique_ptr<Db> OpenTally(benchmark::State& state,
                                     const TempDir& dir,
                                     const Options& options = Options()) {
  if (!dir.ok()) {
    Fail(state, "mkdtemp", "failed");
    return nullptr;
  }
  std::unique_ptr<Db> db;
  Status s = Db::Open(options, dir.Sub("tally"), &db);
  if (!s.ok()) {
    Fail(state, "tally open", s.ToString());
    return nullptr;
  }
  return db;
}

// Creates `names` with `shards` shards each (random policy); false after
// failing the benchmark.
inline bool CreateCounters(benchmark::State& state, Db* db,
                           const std::vector<std::string>& names,
                           uint32_t shards) {
  for (const std::string& name : names) {
    Status s =
        db->CreateCounter(name, CounterSpec{shards, ShardPolicy::kRandom});
    if (!s.ok()) {
      Fail(state, "create " + name, s.ToString());
      return false;
    }
  }
  return true;
}

// After the loop (nothing if the benchmark already failed): `names` sum to
// `expected` and the engine counted `duplicates` duplicates, no conflicts
// and no rejects.
inline void CheckTally(benchmark::State& state, Db* db,
                       const std::vector<std::string>& names, int64_t expected,
                       uint64_t duplicates) {
  if (state.error_occurred()) return;
  int64_t sum = 0;
  for (const std::string& name : names) {
    Result<int64_t> r = db->ReadExact(name);
    if (!r.ok()) {
      Fail(state, "read " + name, r.status().ToString());
      return;
    }
    sum += *r;
  }
  const EngineStats st = tally::GetStats(*db);
  if (sum != expected || st.duplicates != duplicates || st.conflicts != 0 ||
      st.rejected != 0) {
    Fail(state, "tally check",
         "sum " + std::to_string(sum) + " (want " + std::to_string(expected) +
             "), duplicates " + std::to_string(st.duplicates) + " (want " +
             std::to_string(duplicates) + "), conflicts " +
             std::to_string(st.conflicts) + ", rejected " +
             std::to_string(st.rejected));
  }
}

// Verify(db) after a run: "" when it is clean, else its error or its first
// problem, prefixed "Verify: ".
inline std::string VerifyProblem(Db& db) {
  VerifyReport report;
  Status s = Verify(db, &report);
  if (!s.ok()) return "Verify: " + s.ToString();
  return report.ok() ? "" : "Verify: " + report.problems.front();
}

// For TimedLoop ops: whether `s` is OK, its text in *error if not.
inline bool Ok(const Status& s, std::string* error) {
  if (!s.ok()) *error = s.ToString();
  return s.ok();
}

}  // namespace tally::bench

#endif  // TALLY_BENCH_TALLY_UTIL_H_
