// tally_durability_bench: durable increments (acknowledged only after
// fsync) in one run, against the baselines of issue 6:
//
//   tally Increment, Options::sync = true, from 1, 8 and 64 producer threads
//     (tally's group commit: wal/group_commit.h);
//   raw RocksDB, WriteOptions::sync = true, one merge per write, from 1 and
//     64 threads (RocksDB's own group commit), configured as the engine
//     configures it (engine::MakeRocksOptions);
//   tally IncrementAsync from 1 thread with 64 increments in flight (the
//     async API: one thread, many durable increments in flight);
//   SQLite, WAL mode, synchronous=FULL, one transaction per increment (an
//     UPDATE of a counters table row), from 1 thread.
//
// Every row runs for --seconds (default 3) on a fresh database under $TMPDIR
// (or /tmp), and the tally and raw rows check afterwards that the stored
// total equals the increments acknowledged. Prints one line per row, then
// the two target ratios: tally at 64 producers over SQLite FULL (target
// >= 10x) and over raw RocksDB sync from one thread (target >= 20x).
//
//   tally_durability_bench [--seconds S]
//
// Exit status 0 when every row ran and checked out (whether or not the
// targets were met), 1 with a message on stderr otherwise.

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>
#include <sqlite3.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_util.h"
#include "bench/raw_util.h"
#include "engine/coding.h"
#include "engine/rocksdb_options.h"
#include "tally/db.h"

namespace tally {
namespace {

constexpr uint32_t kShards = 10;
constexpr uint64_t kRawCounterId = 1;

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "tally_durability_bench: %s\n", what.c_str());
  std::exit(1);
}

// A fresh directory (bench_util.h); dies when it cannot be made.
class TempDir : public bench::TempDir {
 public:
  TempDir() {
    if (!ok()) Die("cannot create a temporary directory");
  }
};

// Runs `one` on `threads` threads, each calling it with its index until
// `seconds` have passed; returns how many calls were made. `one` returns
// false to report a failure (the run then dies).
uint64_t RunFor(int threads, double seconds,
                const std::function<bool(int)>& one) {
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> total{0};
  std::atomic<bool> failed{false};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      uint64_t n = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        if (!one(t)) {
          failed.store(true);
          break;
        }
        ++n;
      }
      total.fetch_add(n);
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop.store(true);
  for (auto& t : pool) t.join();
  if (failed.load()) Die("a write failed");
  return total.load();
}

struct Row {
  std::string name;
  int threads;
  double per_s;
};

void Print(const Row& r) {
  std::printf("%-46s threads=%-3d %10.0f increments/s\n", r.name.c_str(),
              r.threads, r.per_s);
  std::fflush(stdout);
}

// ---- tally, sync = true ----

// A durable tally database in `dir` holding counter "c".
std::unique_ptr<Db> OpenDurable(const TempDir& dir) {
  Options o;
  o.sync = true;
  o.rollup_interval_ms = 0;
  std::unique_ptr<Db> db;
  Status s = Db::Open(o, dir.Sub("tally"), &db);
  if (!s.ok()) Die("tally open: " + s.ToString());
  s = db->CreateCounter("c", CounterSpec{kShards});
  if (!s.ok()) Die("create: " + s.ToString());
  return db;
}

Row TallyDurable(int threads, double seconds) {
  TempDir dir;
  std::unique_ptr<Db> db = OpenDurable(dir);
  const auto start = std::chrono::steady_clock::now();
  const uint64_t n = RunFor(threads, seconds, [&db](int) {
    auto r = db->Increment("c", 1);
    if (!r.ok()) std::fprintf(stderr, "%s\n", r.status().ToString().c_str());
    return r.ok();
  });
  const double el = std::chrono::duration<double>(
                        std::chrono::steady_clock::now() - start)
                        .count();
  auto total = db->ReadExact("c");
  if (!total.ok() || *total != static_cast<int64_t>(n)) {
    Die("tally total " +
        (total.ok() ? std::to_string(*total) : total.status().ToString()) +
        " != acknowledged " + std::to_string(n));
  }
  return {"tally Increment, sync=true (group commit)", threads, n / el};
}

// ---- raw RocksDB, configured as the engine configures it ----

class RawDb {
 public:
  explicit RawDb(const std::string& path) {
    rocksdb::Status s = bench::OpenRocks(path, &handles_, &db_);
    if (!s.ok()) Die("raw open: " + s.ToString());
  }
  ~RawDb() { bench::CloseRocks(db_.get(), handles_); }
  RawDb(const RawDb&) = delete;
  RawDb& operator=(const RawDb&) = delete;

  rocksdb::DB* db() { return db_.get(); }

  // One increment of 1 on shard `shard`, as tally's plain increment writes
  // it: a merge of an 8-byte operand on a 12-byte shard key.
  void AddIncrement(uint32_t shard, rocksdb::WriteBatch* b) {
    char key[engine::kShardKeyBytes];
    char value[engine::kValueBytes];
    engine::EncodeShardKey(kRawCounterId, shard, key);
    engine::EncodeInt64(1, value);
    rocksdb::Status s =
        b->Merge(handles_[engine::kShards], rocksdb::Slice(key, sizeof key),
                 rocksdb::Slice(value, sizeof value));
    if (!s.ok()) Die("batch: " + s.ToString());
  }

  int64_t Sum() {
    int64_t sum = 0;
    for (uint32_t shard = 0; shard < kShards; ++shard) {
      char key[engine::kShardKeyBytes];
      engine::EncodeShardKey(kRawCounterId, shard, key);
      rocksdb::PinnableSlice v;
      rocksdb::Status s =
          db_->Get(rocksdb::ReadOptions(), handles_[engine::kShards],
                   rocksdb::Slice(key, sizeof key), &v);
      if (s.IsNotFound()) continue;
      int64_t x = 0;
      if (!s.ok() ||
          !engine::DecodeInt64(std::string_view(v.data(), v.size()), &x)) {
        Die("raw read: " + s.ToString());
      }
      sum += x;
    }
    return sum;
  }

 private:
  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;
};

void CheckRaw(RawDb* raw, uint64_t n) {
  const int64_t sum = raw->Sum();
  if (sum != static_cast<int64_t>(n)) {
    Die("raw total " + std::to_string(sum) + " != acknowledged " +
        std::to_string(n));
  }
}

Row RawSync(int threads, double seconds) {
  TempDir dir;
  RawDb raw(dir.Sub("raw"));
  rocksdb::WriteOptions wo;
  wo.sync = true;
  const auto start = std::chrono::steady_clock::now();
  const uint64_t n = RunFor(threads, seconds, [&](int t) {
    thread_local rocksdb::WriteBatch b;
    thread_local uint32_t next = 0;
    b.Clear();
    raw.AddIncrement((static_cast<uint32_t>(t) + next++) % kShards, &b);
    return raw.db()->Write(wo, &b).ok();
  });
  const double el = std::chrono::duration<double>(
                        std::chrono::steady_clock::now() - start)
                        .count();
  CheckRaw(&raw, n);
  return {"raw RocksDB Write, sync=true", threads, n / el};
}

// One thread keeps up to `window` durable increments in flight through the
// public Db::IncrementAsync (the async API's "many producers, one thread").
Row TallyAsync(double seconds, int window) {
  TempDir dir;
  std::unique_ptr<Db> db = OpenDurable(dir);
  std::mutex mu;
  std::condition_variable cv;
  int in_flight = 0;
  bool failed = false;
  uint64_t acked = 0;
  auto done = [&](const Result<IncrementResult>& r) {
    std::lock_guard<std::mutex> lock(mu);
    --in_flight;
    if (r.ok()) {
      ++acked;
    } else {
      failed = true;
    }
    cv.notify_one();
  };
  const auto start = std::chrono::steady_clock::now();
  const auto end = start + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return in_flight < window; });
      if (failed) Die("an async increment failed");
      ++in_flight;
    }
    db->IncrementAsync("c", 1, done);
  }
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return in_flight == 0; });
    if (failed) Die("an async increment failed");
  }
  const double el =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  Result<int64_t> total = db->ReadExact("c");
  if (!total.ok() || *total != static_cast<int64_t>(acked)) {
    Die("tally async total does not match the acknowledged increments");
  }
  return {"tally IncrementAsync, sync=true, window " + std::to_string(window),
          1, acked / el};
}

// ---- SQLite, WAL, synchronous=FULL ----

Row SqliteFull(double seconds) {
  TempDir dir;
  const std::string path = dir.Sub("counters.sqlite");
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) Die("sqlite open");
  auto exec = [db](const char* sql) {
    if (sqlite3_exec(db, sql, nullptr, nullptr, nullptr) != SQLITE_OK) {
      Die(std::string("sqlite: ") + sql + ": " + sqlite3_errmsg(db));
    }
  };
  exec("PRAGMA journal_mode=WAL");
  exec("PRAGMA synchronous=FULL");
  exec("CREATE TABLE counters(name TEXT PRIMARY KEY, value INTEGER NOT NULL)");
  exec("INSERT INTO counters VALUES('c', 0)");
  sqlite3_stmt* update = nullptr;
  if (sqlite3_prepare_v2(db,
                         "UPDATE counters SET value = value + 1 "
                         "WHERE name = 'c'",
                         -1, &update, nullptr) != SQLITE_OK) {
    Die(std::string("sqlite prepare: ") + sqlite3_errmsg(db));
  }
  const auto start = std::chrono::steady_clock::now();
  // One thread: each step is one autocommit transaction, fsynced (FULL).
  const uint64_t n = RunFor(1, seconds, [update](int) {
    const bool ok = sqlite3_step(update) == SQLITE_DONE;
    sqlite3_reset(update);
    return ok;
  });
  const double el = std::chrono::duration<double>(
                        std::chrono::steady_clock::now() - start)
                        .count();
  sqlite3_finalize(update);
  sqlite3_stmt* read = nullptr;
  int64_t total = -1;
  if (sqlite3_prepare_v2(db, "SELECT value FROM counters WHERE name = 'c'",
                         -1, &read, nullptr) == SQLITE_OK &&
      sqlite3_step(read) == SQLITE_ROW) {
    total = sqlite3_column_int64(read, 0);
  }
  sqlite3_finalize(read);
  sqlite3_close(db);
  if (total != static_cast<int64_t>(n)) {
    Die("sqlite total " + std::to_string(total) + " != " + std::to_string(n));
  }
  return {"SQLite WAL synchronous=FULL, txn per increment", 1, n / el};
}

}  // namespace
}  // namespace tally

int main(int argc, char** argv) {
  double seconds = 3;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--seconds" && i + 1 < argc) {
      seconds = std::atof(argv[++i]);
      if (seconds <= 0) tally::Die("--seconds must be > 0");
    } else {
      std::fprintf(stderr, "usage: tally_durability_bench [--seconds S]\n");
      return 2;
    }
  }
  using tally::Print;
  const tally::Row sqlite = tally::SqliteFull(seconds);
  Print(sqlite);
  const tally::Row raw1 = tally::RawSync(1, seconds);
  Print(raw1);
  Print(tally::RawSync(64, seconds));
  Print(tally::TallyDurable(1, seconds));
  Print(tally::TallyDurable(8, seconds));
  const tally::Row t64 = tally::TallyDurable(64, seconds);
  Print(t64);
  const tally::Row a64 = tally::TallyAsync(seconds, 64);
  Print(a64);
  Print(tally::TallyAsync(seconds, 1024));
  for (const tally::Row* r : {&t64, &a64}) {
    const char* what = r == &t64 ? "64 producer threads" : "64 in flight (async)";
    std::printf("ratio tally %-21s / SQLite FULL:       %6.1fx  (target >= 10x) %s\n",
                what, r->per_s / sqlite.per_s,
                r->per_s >= 10 * sqlite.per_s ? "met" : "NOT MET");
    std::printf("ratio tally %-21s / raw sync 1 thread: %6.1fx  (target >= 20x) %s\n",
                what, r->per_s / raw1.per_s,
                r->per_s >= 20 * raw1.per_s ? "met" : "NOT MET");
  }
  return 0;
}
