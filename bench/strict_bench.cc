// tally_strict_bench: issue 16's strict counters, side by side in one run.
//
// The workload: 1,000 items, item i stocked with i % 50 units (24,500 in
// all), and a stream of takes of 1 unit, each from an item drawn uniformly
// (fixed seed): takes outnumber the stock of most items, so refusals are
// as common as acceptances once the run is under way. Each side replays
// the same stream, one take per call:
//
//   strict/tally/take/pair:K      Db::Increment(-1) of a keyed strict
//                                 counter (min 0), sync=false
//   strict/tally/take_held/pair:K the same, on a counter one other key of
//                                 which holds a reservation: each take
//                                 also reads its key's held range
//   strict/sqlite/take/pair:K     UPDATE stock SET units = units - 1 WHERE
//                                 item = ?, CHECK(units >= 0), one
//                                 transaction per take (WAL, synchronous
//                                 NORMAL, as the other SQLite peers)
//   strict/redis/lua/pair:K       one EVALSHA per take: GET, and DECR when
//                                 at least 1 (the server run_suite.sh
//                                 starts, no persistence); only with
//                                 $REDIS_PORT and hiredis
//
// After each run the side is checked whole: accepted takes equal the
// stock consumed, every item ends at max(0, stock - its takes), and no
// value is below 0; tally's Verify is clean. ops_per_s counts takes
// (refused ones included); `accepted` and `refused` say how many of each.
//
// Beside (issue 16: sharded increments keep their rate with a strict
// counter under load beside them): one thread doing plain Increment of a
// sharded counter "views" (8 shards, random), alone, while a second thread
// writes +1/-1 to another sharded counter as fast as it can, and while the
// second thread instead restocks and takes one hot strict item as fast as
// it can (every op a read, check and write under the key's stripe):
//
//   strict/beside/alone/pair:K     the measured thread alone
//   strict/beside/sharded/pair:K   beside a sharded writer
//   strict/beside/strict/pair:K    beside a strict writer
//
// `beside_ops` counts the second thread's ops. On 2 cores any second
// writer shares RocksDB's write queue and the CPU with the measured one:
// strict against sharded is what a strict counter costs its neighbours.
//
// K = 0..2: every row runs in turn three times, so each ratio has three
// pairs from this one run.

#include <benchmark/benchmark.h>
#include <sqlite3.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_util.h"
#include "bench/sqlite_statement.h"
#include "bench/tally_util.h"
#include "tally/tally.h"
#ifdef TALLY_STRICT_REDIS
#include "bench/redis_client.h"
#endif

namespace tally::bench {
namespace {

constexpr int kItems = 1000;
constexpr int kPairs = 3;
constexpr char kStock[] = "stock";

int64_t StockOf(int item) { return item % 50; }
std::string ItemKey(int item) { return "item-" + std::to_string(item); }

// The take stream and what a correct store ends with.
struct Takes {
  std::vector<int> item;            // per take
  std::vector<int64_t> want;        // per item: its value at the end
  int64_t accepted = 0;             // takes that find a unit
};

Takes MakeTakes(size_t n) {
  Takes t;
  std::mt19937_64 rng(1616);
  std::vector<int64_t> left(kItems);
  for (int i = 0; i < kItems; ++i) left[i] = StockOf(i);
  t.item.reserve(n);
  for (size_t k = 0; k < n; ++k) {
    const int i = static_cast<int>(rng() % kItems);
    t.item.push_back(i);
    if (left[i] > 0) {
      --left[i];
      ++t.accepted;
    }
  }
  t.want = left;
  return t;
}

std::string CheckCounts(const Takes& t, int64_t accepted, int64_t refused) {
  const int64_t total = static_cast<int64_t>(t.item.size());
  if (accepted == t.accepted && refused == total - t.accepted) return "";
  return "accepted " + std::to_string(accepted) + " (want " +
         std::to_string(t.accepted) + "), refused " + std::to_string(refused);
}

void ReportCounts(benchmark::State& state, int64_t accepted, int64_t refused) {
  state.counters["accepted"] = static_cast<double>(accepted);
  state.counters["refused"] = static_cast<double>(refused);
}

// ---- tally ----

// `held`: one other key of the counter holds a reservation, so every take
// also reads its key's (empty) range of held reservations (the cost of a
// counter that has had one; docs/design.md, "Reservations").
void BM_TallyTake(benchmark::State& state, bool held, int /*pair*/) {
  const Takes t = MakeTakes(static_cast<size_t>(state.max_iterations));
  TempDir dir;
  auto db = OpenTally(state, dir);
  if (db == nullptr) return;
  CounterSpec spec;
  spec.keyed = true;
  spec.bounds = CounterBounds::AtLeast(0);
  Status s = db->CreateCounter(kStock, spec);
  Batch restock;
  std::vector<IncrementResult> results;
  for (int i = 0; i < kItems && s.ok(); ++i) {
    if (StockOf(i) != 0) restock.Add({kStock, ItemKey(i)}, StockOf(i));
  }
  if (s.ok()) s = db->Apply(restock, &results);
  if (s.ok() && held) {
    s = db->Increment({kStock, "reserved"}, 1).status();
    if (s.ok()) s = db->Reserve({kStock, "reserved"}, "r", 1, kMaxHoldMs).status();
  }
  if (!s.ok()) return Fail(state, "stock", s.ToString());
  std::vector<std::string> keys;
  for (int i = 0; i < kItems; ++i) keys.push_back(ItemKey(i));
  LatencyLog lat;
  int64_t accepted = 0, refused = 0;
  size_t next = 0;
  TimedLoop(state, &lat, 1, "take", [&](std::string* error) {
    Result<IncrementResult> r =
        db->Increment({kStock, keys[static_cast<size_t>(t.item[next++])]}, -1);
    if (!r.ok()) return Ok(r.status(), error);
    if (r->outcome == Outcome::kApplied) {
      ++accepted;
    } else if (r->outcome == Outcome::kRefused) {
      ++refused;
    } else {
      *error = std::string("outcome ") + OutcomeName(r->outcome);
      return false;
    }
    return r->value >= 0;
  });
  if (state.error_occurred()) return;
  std::string err = CheckCounts(t, accepted, refused);
  for (int i = 0; i < kItems && err.empty(); ++i) {
    Result<int64_t> v = db->ReadExact({kStock, keys[static_cast<size_t>(i)]});
    if (!v.ok() || *v != t.want[static_cast<size_t>(i)]) {
      err = keys[static_cast<size_t>(i)] + " reads " +
            (v.ok() ? std::to_string(*v) : v.status().ToString());
    }
  }
  VerifyReport report;
  if (err.empty()) s = Verify(*db, &report);
  if (err.empty() && !s.ok()) err = s.ToString();
  if (err.empty() && !report.ok()) err = report.problems.front();
  if (!err.empty()) return Fail(state, "stock check", err);
  lat.Report(state);
  ReportCounts(state, accepted, refused);
}

// ---- SQLite ----

class StockSqlite : public WalConnection {
 public:
  std::string Open(const std::string& path) {
    if (!OpenWal(path, "NORMAL") ||
        !Exec("CREATE TABLE stock(item INTEGER PRIMARY KEY, units INTEGER "
              "NOT NULL CHECK(units >= 0))") ||
        !take_.Prepare(db_,
                       "UPDATE stock SET units = units - 1 WHERE item = ?1")) {
      return Error();
    }
    Statement add;
    if (!Begin() ||
        !add.Prepare(db_, "INSERT INTO stock(item, units) VALUES(?1, ?2)")) {
      return Error();
    }
    for (int i = 0; i < kItems; ++i) {
      sqlite3_bind_int(add.get(), 1, i);
      sqlite3_bind_int64(add.get(), 2, StockOf(i));
      if (!add.Run()) return Error();
    }
    return Commit() ? "" : Error();
  }

  // One take in its own transaction: *taken false when the CHECK refused
  // it (the transaction then rolls back the statement). False on an error.
  bool Take(int item, bool* taken) {
    if (!Begin()) return false;
    sqlite3_bind_int(take_.get(), 1, item);
    const int rc = sqlite3_step(take_.get());
    sqlite3_reset(take_.get());
    if (rc != SQLITE_DONE && rc != SQLITE_CONSTRAINT) return false;
    *taken = rc == SQLITE_DONE;
    return Commit();
  }

  int64_t Units(int item) {
    Statement q;
    if (!q.Prepare(db_, "SELECT units FROM stock WHERE item = ?1")) return -1;
    sqlite3_bind_int(q.get(), 1, item);
    if (sqlite3_step(q.get()) != SQLITE_ROW) return -1;
    return sqlite3_column_int64(q.get(), 0);
  }

 private:
  Statement take_;
};

void BM_SqliteTake(benchmark::State& state, int /*pair*/) {
  const Takes t = MakeTakes(static_cast<size_t>(state.max_iterations));
  TempDir dir;
  StockSqlite db;
  const std::string err0 =
      dir.ok() ? db.Open(dir.Sub("stock.sqlite")) : "mkdtemp failed";
  if (!err0.empty()) return Fail(state, "sqlite open", err0);
  LatencyLog lat;
  int64_t accepted = 0, refused = 0;
  size_t next = 0;
  TimedLoop(state, &lat, 1, "take", [&](std::string* error) {
    bool taken = false;
    if (!db.Take(t.item[next++], &taken)) {
      *error = db.Error();
      return false;
    }
    ++(taken ? accepted : refused);
    return true;
  });
  if (state.error_occurred()) return;
  std::string err = CheckCounts(t, accepted, refused);
  for (int i = 0; i < kItems && err.empty(); ++i) {
    const int64_t v = db.Units(i);
    if (v != t.want[static_cast<size_t>(i)]) {
      err = "item " + std::to_string(i) + " holds " + std::to_string(v);
    }
  }
  if (!err.empty()) return Fail(state, "sqlite check", err);
  lat.Report(state);
  ReportCounts(state, accepted, refused);
}

// ---- Redis ----
#ifdef TALLY_STRICT_REDIS

const char* const kTakeScript =
    "local v = tonumber(redis.call('GET', KEYS[1]) or '0') "
    "if v >= 1 then return redis.call('DECR', KEYS[1]) end return -1";

void BM_RedisTake(benchmark::State& state, int /*pair*/) {
  const Takes t = MakeTakes(static_cast<size_t>(state.max_iterations));
  Redis redis;
  std::string err = redis.Connect();
  if (!err.empty()) return Fail(state, "redis", err);
  for (int i = 0; i < kItems; ++i) {
    const std::string key = "stock:" + std::to_string(i);
    Reply r = redis.Command("SET %s %lld", key.c_str(),
                            static_cast<long long>(StockOf(i)));
    if (r == nullptr) return Fail(state, "redis stock", redis.Error());
  }
  Reply loaded = redis.Command("SCRIPT LOAD %s", kTakeScript);
  if (loaded == nullptr || loaded->type != REDIS_REPLY_STRING) {
    return Fail(state, "SCRIPT LOAD", redis.Error());
  }
  const std::string sha(loaded->str, loaded->len);
  std::vector<std::string> keys;
  for (int i = 0; i < kItems; ++i) keys.push_back("stock:" + std::to_string(i));
  LatencyLog lat;
  int64_t accepted = 0, refused = 0;
  size_t next = 0;
  TimedLoop(state, &lat, 1, "EVALSHA", [&](std::string* error) {
    const std::string& key = keys[static_cast<size_t>(t.item[next++])];
    Reply r = redis.Command("EVALSHA %s 1 %s", sha.c_str(), key.c_str());
    if (r == nullptr || r->type != REDIS_REPLY_INTEGER) {
      *error = redis.Error();
      return false;
    }
    ++(r->integer >= 0 ? accepted : refused);
    return true;
  });
  if (state.error_occurred()) return;
  err = CheckCounts(t, accepted, refused);
  for (int i = 0; i < kItems && err.empty(); ++i) {
    Reply r = redis.Command("GET %s", keys[static_cast<size_t>(i)].c_str());
    if (r == nullptr || r->type != REDIS_REPLY_STRING ||
        std::atoll(r->str) != t.want[static_cast<size_t>(i)]) {
      err = keys[static_cast<size_t>(i)] + " differs";
    }
  }
  if (!err.empty()) return Fail(state, "redis check", err);
  lat.Report(state);
  ReportCounts(state, accepted, refused);
}
#endif  // TALLY_STRICT_REDIS

// ---- sharded increments beside a strict counter ----

// What runs beside the measured thread.
enum class Beside { kNothing, kSharded, kStrict };

void BM_Beside(benchmark::State& state, Beside beside, int /*pair*/) {
  TempDir dir;
  auto db = OpenTally(state, dir);
  if (db == nullptr) return;
  CounterSpec stock;
  stock.bounds = CounterBounds::AtLeast(0);
  Status s = db->CreateCounter("views", CounterSpec{8, ShardPolicy::kRandom});
  if (s.ok()) s = db->CreateCounter(kStock, stock);
  if (s.ok()) s = db->CreateCounter("clicks", CounterSpec{8, ShardPolicy::kRandom});
  if (!s.ok()) return Fail(state, "create", s.ToString());
  std::atomic<bool> stop{false};
  std::atomic<int64_t> strict_ops{0};
  std::string strict_error;
  std::thread strict;
  if (beside != Beside::kNothing) {
    // Restock 1, take 1: each strict op reads, checks and writes the one
    // key; the sharded twin writes the same deltas to another counter.
    const char* counter = beside == Beside::kStrict ? kStock : "clicks";
    strict = std::thread([&, counter] {
      for (int64_t n = 0; !stop.load(std::memory_order_relaxed); ++n) {
        Result<IncrementResult> r = db->Increment(counter, n % 2 == 0 ? 1 : -1);
        if (!r.ok() || r->outcome != Outcome::kApplied) {
          strict_error = r.ok() ? OutcomeName(r->outcome)
                                : r.status().ToString();
          return;
        }
        strict_ops.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  LatencyLog lat;
  TimedLoop(state, &lat, 1, "Increment", [&](std::string* error) {
    Result<IncrementResult> r = db->Increment("views", 1);
    return r.ok() || Ok(r.status(), error);
  });
  stop.store(true);
  if (strict.joinable()) strict.join();
  if (state.error_occurred()) return;
  if (!strict_error.empty()) return Fail(state, "strict thread", strict_error);
  Result<int64_t> views = db->ReadExact("views");
  if (!views.ok() || *views != state.iterations()) {
    return Fail(state, "views check", "views differs");
  }
  lat.Report(state);
  state.counters["beside_ops"] = static_cast<double>(strict_ops.load());
}

void RegisterAll() {
#ifdef TALLY_STRICT_REDIS
  const bool redis = std::getenv("REDIS_PORT") != nullptr;
  const char* why = "REDIS_PORT is not set";
#else
  const bool redis = false;
  const char* why = "built without hiredis";
#endif
  if (!redis)
    std::fprintf(stderr, "tally_strict_bench: no Redis rows (%s)\n", why);
  for (int k = 0; k < kPairs; ++k) {
    const std::string p = "/pair:" + std::to_string(k);
    Register("strict/tally/take" + p, Scaled(20'000), BM_TallyTake, false, k);
    Register("strict/tally/take_held" + p, Scaled(20'000), BM_TallyTake, true,
             k);
    Register("strict/sqlite/take" + p, Scaled(20'000), BM_SqliteTake, k);
#ifdef TALLY_STRICT_REDIS
    if (redis) Register("strict/redis/lua" + p, Scaled(20'000), BM_RedisTake, k);
#endif
  }
  for (int k = 0; k < kPairs; ++k) {
    const std::string p = "/pair:" + std::to_string(k);
    Register("strict/beside/alone" + p, Scaled(60'000), BM_Beside,
             Beside::kNothing, k);
    Register("strict/beside/sharded" + p, Scaled(60'000), BM_Beside,
             Beside::kSharded, k);
    Register("strict/beside/strict" + p, Scaled(60'000), BM_Beside,
             Beside::kStrict, k);
  }
}

}  // namespace
}  // namespace tally::bench

int main(int argc, char** argv) {
  tally::bench::RegisterAll();
  return tally::bench::RunBenchmarks(
      argc, argv,
      {{"tally_version", TALLY_VERSION_STRING},
       {"sqlite_version", sqlite3_libversion()}});
}
