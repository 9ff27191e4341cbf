// tally_api_bench: tally through its public API only (include/tally/), the
// figures the peers (SQLite, Redis) are compared with.
//
//   once/dup:D                IncrementOnce, one call per delivery, D% of
//                             the deliveries duplicates (0, 50, 90).
//   once_batch/dup:D/batch:N  Apply of N once-increments per call.
//   increment                 Increment, one call per increment.
//   increment_batch/batch:N   Apply of N plain increments over 4 counters.
//   durable/sync:S            Increment from P producer threads at once
//                             (threads:P, 1..64) with Options::sync = S:
//                             with sync, concurrent producers share commits
//                             (whatever group commit the engine does).
//   BM_DurableIncrement/producers:P/pair:K
//                             durable/sync:1 from P = 1 and 64 producers,
//   BM_DurableIncrementAsync/inflight:64/pair:K
//   BM_DurableOnceAsync/inflight:64/pair:K
//                             and IncrementAsync / IncrementOnceAsync (new
//                             events) from one thread with 64 in flight,
//                             sync=true: the four in turn, pairs K = 0..2,
//                             so each ratio over producers:1 is taken from
//                             neighbours (its median and spread).
//                             With sync, each also reports what the group
//                             commit did: group_commits, group_avg (commits
//                             per synced group) and group_largest.
//   read/shards:S/hot:H       ReadExact of an S-shard counter holding
//                             10,000 increments, compacted; H=1: a second
//                             thread increments it during the reads.
//   read_cached/hot:1         ReadCached of a 10-shard counter during a
//                             write burst, roll-ups every 100 ms.
//
// Counters are 10-shard, random policy, unless named. Each benchmark runs a
// fixed number of operations (Iterations, scaled by $TALLY_BENCH_SCALE),
// opens a fresh database (Options defaults: WAL on, sync=false) once, and
// after the loop checks the counter totals and the engine's applied and
// duplicate counts. items_per_second counts deliveries, increments or reads;
// p50_us/p99_us/max_us are per call.

#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_util.h"
#include "bench/tally_util.h"
#include "tally/tally.h"

namespace tally::bench {
namespace {

constexpr uint32_t kShards = 10;
const std::vector<std::string> kBatchCounters = {"c0", "c1", "c2", "c3"};

bool Create(benchmark::State& state, Db* db,
            const std::vector<std::string>& names, uint32_t shards = kShards) {
  return CreateCounters(state, db, names, shards);
}

void BM_Once(benchmark::State& state, int dup) {
  size_t distinct = 0;
  const auto ids =
      DeliveryIds(static_cast<size_t>(state.max_iterations), dup, &distinct);
  TempDir dir;
  auto db = OpenTally(state, dir);
  if (db == nullptr || !Create(state, db.get(), {"c"})) return;
  LatencyLog lat;
  size_t next = 0;
  TimedLoop(state, &lat, 1, "increment once", [&](std::string* error) {
    return Ok(db->IncrementOnce("c", ids[next++], 1).status(), error);
  });
  CheckTally(state, db.get(), {"c"}, static_cast<int64_t>(distinct),
             ids.size() - distinct);
  lat.Report(state);
}

void BM_OnceBatch(benchmark::State& state, int dup, int n) {
  size_t distinct = 0;
  const auto ids = DeliveryIds(
      static_cast<size_t>(state.max_iterations) * static_cast<size_t>(n), dup,
      &distinct);
  TempDir dir;
  auto db = OpenTally(state, dir);
  if (db == nullptr || !Create(state, db.get(), {"c"})) return;
  LatencyLog lat;
  Batch batch;
  std::vector<IncrementResult> results;
  size_t next = 0;
  TimedLoop(state, &lat, n, "apply once", [&](std::string* error) {
    batch.Clear();
    for (int i = 0; i < n; ++i) batch.AddOnce("c", ids[next++], 1);
    return Ok(db->Apply(batch, &results), error);
  });
  CheckTally(state, db.get(), {"c"}, static_cast<int64_t>(distinct),
             ids.size() - distinct);
  lat.Report(state);
}

void BM_Increment(benchmark::State& state) {
  TempDir dir;
  auto db = OpenTally(state, dir);
  if (db == nullptr || !Create(state, db.get(), {"c"})) return;
  LatencyLog lat;
  TimedLoop(state, &lat, 1, "increment", [&](std::string* error) {
    return Ok(db->Increment("c", 1).status(), error);
  });
  CheckTally(state, db.get(), {"c"}, state.iterations(), 0);
  lat.Report(state);
}

void BM_IncrementBatch(benchmark::State& state, int n) {
  TempDir dir;
  auto db = OpenTally(state, dir);
  if (db == nullptr || !Create(state, db.get(), kBatchCounters)) return;
  LatencyLog lat;
  Batch batch;
  std::vector<IncrementResult> results;
  TimedLoop(state, &lat, n, "apply", [&](std::string* error) {
    batch.Clear();
    for (int i = 0; i < n; ++i) {
      batch.Add(kBatchCounters[static_cast<size_t>(i) % kBatchCounters.size()],
                1);
    }
    return Ok(db->Apply(batch, &results), error);
  });
  CheckTally(state, db.get(), kBatchCounters, state.iterations() * n, 0);
  lat.Report(state);
}

// ---- durability: P producers, one shared database ----

// What the group commit did (EngineStats, sync only): commits per synced
// group on average and at most, the answer to "what stops P producers
// short of P times one" beside the fsync rate of the machine.
void ReportGroups(benchmark::State& state, Db* db) {
  const EngineStats st = GetStats(*db);
  if (st.group_commits == 0) return;
  state.counters["group_commits"] = static_cast<double>(st.group_commits);
  state.counters["group_avg"] = static_cast<double>(st.group_members) /
                                static_cast<double>(st.group_commits);
  state.counters["group_largest"] = static_cast<double>(st.group_largest);
}

struct DurableRun {
  TempDir dir;
  std::unique_ptr<Db> db;
  LatencyLog lat;
};
DurableRun* g_durable = nullptr;

void BM_Durable(benchmark::State& state, bool sync) {
  if (state.thread_index() == 0) {
    g_durable = new DurableRun();
    g_durable->lat.Reset(state.threads(),
                         static_cast<size_t>(state.max_iterations));
    Options o;
    o.sync = sync;
    g_durable->db = OpenTally(state, g_durable->dir, o);
    if (g_durable->db == nullptr ||
        !Create(state, g_durable->db.get(), {"c"})) {
      delete g_durable;
      g_durable = nullptr;
    }
  }
  for (auto _ : state) {
    DurableRun* run = g_durable;  // set before the loops' start barrier
    if (run == nullptr) {
      Fail(state, "setup", "failed in thread 0");
      break;
    }
    Stopwatch sw;
    Result<IncrementResult> r = run->db->Increment("c", 1);
    run->lat.Record(state.thread_index(), sw.Lap());
    if (!r.ok()) {
      Fail(state, "increment", r.status().ToString());
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
  if (state.thread_index() != 0 || g_durable == nullptr) return;
  // Every producer has left its loop (the stop barrier).
  DurableRun* run = g_durable;
  CheckTally(state, run->db.get(), {"c"},
             static_cast<int64_t>(state.threads()) * state.max_iterations, 0);
  run->lat.Report(state);
  ReportGroups(state, run->db.get());
  g_durable = nullptr;
  delete run;
}

// ---- durable many producers vs one, as alternating pairs ----

// One thread keeps up to `window` durable increments (once: once-increments
// of new events, so each is applied) in flight through IncrementAsync or
// IncrementOnceAsync; one timed iteration of `n` calls, from the first call
// until the last callback ran.
void BM_DurableAsync(benchmark::State& state, bool once, int64_t n,
                     int window) {
  TempDir dir;
  Options o;
  o.sync = true;
  auto db = OpenTally(state, dir, o);
  if (db == nullptr || !Create(state, db.get(), {"c"})) return;
  std::vector<std::string> ids;
  if (once) {
    size_t distinct = 0;
    ids = DeliveryIds(static_cast<size_t>(n), 0, &distinct);
  }
  std::mutex mu;
  std::condition_variable cv;
  int in_flight = 0;
  int64_t acked = 0;
  std::string error;
  auto done = [&](const Result<IncrementResult>& r) {
    std::lock_guard<std::mutex> lock(mu);
    --in_flight;
    if (r.ok()) {
      ++acked;
    } else if (error.empty()) {
      error = r.status().ToString();
    }
    cv.notify_one();
  };
  for (auto _ : state) {
    for (int64_t i = 0; i < n; ++i) {
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return in_flight < window; });
        ++in_flight;
      }
      if (once) {
        db->IncrementOnceAsync("c", ids[static_cast<size_t>(i)], 1, done);
      } else {
        db->IncrementAsync("c", 1, done);
      }
    }
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return in_flight == 0; });
  }
  state.SetItemsProcessed(state.iterations() * n);
  if (!error.empty()) {
    Fail(state, once ? "increment once async" : "increment async", error);
  }
  CheckTally(state, db.get(), {"c"}, acked, 0);
  if (!state.error_occurred() && acked != state.iterations() * n) {
    Fail(state, "check", "acknowledged " + std::to_string(acked));
  }
  state.counters["inflight"] = window;
  ReportGroups(state, db.get());
}

// ---- reads ----

constexpr int kReadFill = 10000;

void BM_Read(benchmark::State& state, uint32_t shards, bool hot) {
  TempDir dir;
  auto db = OpenTally(state, dir);
  if (db == nullptr || !Create(state, db.get(), {"c"}, shards)) return;
  for (int i = 0; i < kReadFill; ++i) {
    if (!db->Increment("c", 1).ok()) {
      Fail(state, "fill", "increment");
      return;
    }
  }
  Status cs = tally::Compact(*db);
  if (!cs.ok()) {
    Fail(state, "compact", cs.ToString());
    return;
  }
  std::atomic<bool> stop{false};
  std::atomic<int64_t> written{0};
  std::atomic<bool> write_failed{false};
  std::thread writer;
  if (hot) {
    writer = std::thread([&] {
      while (!stop.load(std::memory_order_relaxed)) {
        if (db->Increment("c", 1).ok()) {
          written.fetch_add(1, std::memory_order_relaxed);
        } else {
          write_failed = true;
        }
      }
    });
  }
  LatencyLog lat;
  TimedLoop(state, &lat, 1, "read", [&](std::string* error) {
    Result<int64_t> r = db->ReadExact("c");
    if (!Ok(r.status(), error)) return false;
    if (*r < kReadFill || (!hot && *r != kReadFill)) {
      *error = "wrong total " + std::to_string(*r);
      return false;
    }
    return true;
  });
  stop = true;
  if (writer.joinable()) writer.join();
  state.counters["writes_during"] = static_cast<double>(written.load());
  if (write_failed) Fail(state, "writer", "an increment failed");
  CheckTally(state, db.get(), {"c"}, kReadFill + written.load(), 0);
  lat.Report(state);
}

void BM_ReadCached(benchmark::State& state) {
  constexpr uint32_t kIntervalMs = 100;
  TempDir dir;
  Options o;
  o.rollup_interval_ms = kIntervalMs;
  auto db = OpenTally(state, dir, o);
  if (db == nullptr || !Create(state, db.get(), {"c"})) return;
  std::atomic<bool> stop{false};
  std::atomic<int64_t> written{0};
  std::thread writer([&] {
    while (!stop.load(std::memory_order_relaxed)) {
      if (db->Increment("c", 1).ok()) written.fetch_add(1);
    }
  });
  LatencyLog lat;
  int64_t max_lag = 0;
  TimedLoop(state, &lat, 1, "read cached", [&](std::string* error) {
    Result<CachedValue> r = db->ReadCached("c");
    if (!Ok(r.status(), error)) return false;
    // The writer may have committed one increment it has not counted yet.
    if (r->value > written.load() + 1 || r->value < 0) {
      *error = "value ahead of the writes";
      return false;
    }
    max_lag = std::max(max_lag, r->lag_ms);
    return true;
  });
  stop = true;
  writer.join();
  state.counters["max_lag_ms"] = static_cast<double>(max_lag);
  state.counters["interval_ms"] = kIntervalMs;
  // Once rolled up now, the cached total is the exact one.
  Status s = db->RollupNow("c");
  Result<CachedValue> cached = db->ReadCached("c");
  if (!state.error_occurred() &&
      (!s.ok() || !cached.ok() || cached->value != written.load())) {
    Fail(state, "check", "cached total after RollupNow != written");
  }
  CheckTally(state, db.get(), {"c"}, written.load(), 0);
  lat.Report(state);
}

void RegisterAll() {
  for (int dup : {0, 50, 90}) {
    const std::string d = std::to_string(dup);
    Register("once/dup:" + d, Scaled(40000), BM_Once, dup);
    Register("once_batch/dup:" + d + "/batch:1000", Scaled(100), BM_OnceBatch,
             dup, 1000);
  }
  Register("increment", Scaled(40000), BM_Increment);
  for (int n : {100, 1000}) {
    Register("increment_batch/batch:" + std::to_string(n), Scaled(400000) / n,
             BM_IncrementBatch, n);
  }
  for (bool sync : {false, true}) {
    for (int producers : {1, 2, 4, 8, 16, 32, 64}) {
      const int64_t total = Scaled(sync ? 4000 : 40000);
      Register(sync ? "durable/sync:1" : "durable/sync:0",
               std::max<int64_t>(1, total / producers), BM_Durable, sync)
          ->Threads(producers);
    }
  }
  // The many-producers ratio (docs/durability.md): synced Increment from 1
  // and from 64 producer threads, and IncrementAsync and IncrementOnceAsync
  // from one thread with 64 in flight, each side in turn, three times, so a
  // ratio is taken from pairs measured next to each other.
  for (int pair = 0; pair < 3; ++pair) {
    const std::string k = "/pair:" + std::to_string(pair);
    const int64_t total = Scaled(16000);
    Register("BM_DurableIncrement/producers:1" + k, Scaled(1500), BM_Durable,
             true);
    Register("BM_DurableIncrement/producers:64" + k, total / 64, BM_Durable,
             true)
        ->Threads(64);
    Register("BM_DurableIncrementAsync/inflight:64" + k, 1, BM_DurableAsync,
             false, total, 64);
    Register("BM_DurableOnceAsync/inflight:64" + k, 1, BM_DurableAsync, true,
             total, 64);
  }
  // Reads per shard count: about the same time for each (a hot read's cost
  // grows with its shards; docs/benchmarks.md, "Figures behind code
  // choices").
  const std::vector<std::pair<uint32_t, int64_t>> reads = {
      {1, 20000}, {10, 10000}, {100, 1000}, {1000, 150}};
  for (const auto& [shards, n] : reads) {
    for (bool hot : {false, true}) {
      Register(
          "read/shards:" + std::to_string(shards) + "/hot:" + (hot ? "1" : "0"),
          Scaled(n), BM_Read, shards, hot);
    }
  }
  Register("read_cached/hot:1", Scaled(500000), BM_ReadCached);
}

}  // namespace
}  // namespace tally::bench

int main(int argc, char** argv) {
  tally::bench::RegisterAll();
  return tally::bench::RunBenchmarks(argc, argv,
                                     {{"tally_version", TALLY_VERSION_STRING}});
}
