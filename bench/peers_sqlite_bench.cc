// sqlite_peer_bench: the SQLite peer of tally_api_bench, in the same
// harness (fixed operation counts, $TALLY_BENCH_SCALE, bench_util.h's
// latency log and id streams).
//
// One database file per benchmark, WAL mode, synchronous=NORMAL (like
// tally's sync=false: a process crash loses nothing, power loss may lose the
// tail) or FULL (fsync per commit, like sync=true). Two tables:
//   counters(name TEXT PRIMARY KEY, value INTEGER)
//   events(counter TEXT, event_id TEXT, delta INTEGER,
//          PRIMARY KEY(counter, event_id))
//
//   sqlite/increment/sync:M/batch:N   UPDATE counters SET value=value+1,
//                                     over 4 counters in turn.
//   sqlite/once/sync:M/dup:D/batch:N  per delivery: INSERT OR IGNORE the
//                                     event; only when a row was inserted,
//                                     UPDATE the counter (D% duplicates).
// batch:1 is one transaction per event (BEGIN ... COMMIT), batch:1000 one
// per 1000 events. Prepared statements are reused. After the loop the
// counters must sum to what was applied and events must hold one row per
// distinct id. p50_us/p99_us/max_us are per transaction. The once batch
// benchmark without duplicates also reports bytes_per_event: the database
// file after a WAL checkpoint, divided by the events it holds.

#include <benchmark/benchmark.h>
#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "bench/sqlite_statement.h"

namespace tally::bench {
namespace {

const char* const kCounters[] = {"c0", "c1", "c2", "c3"};
constexpr int kCounterCount = 4;

class Sqlite : public WalConnection {
 public:
  // Opens `path` with journal_mode=WAL and the given synchronous mode and
  // creates the tables and counters; returns an error text or "".
  std::string Open(const std::string& path, const char* synchronous) {
    if (!OpenWal(path, synchronous) ||
        !Exec("CREATE TABLE events(counter TEXT, event_id TEXT, "
              "delta INTEGER, PRIMARY KEY(counter, event_id))") ||
        !Exec("CREATE TABLE counters(name TEXT PRIMARY KEY, value INTEGER)")) {
      return Error();
    }
    for (const char* c : kCounters) {
      const std::string sql =
          std::string("INSERT INTO counters VALUES('") + c + "', 0)";
      if (!Exec(sql.c_str())) return Error();
    }
    if (!insert_event_.Prepare(db_,
                               "INSERT OR IGNORE INTO events(counter, "
                               "event_id, delta) VALUES(?1, ?2, ?3)") ||
        !add_.Prepare(db_,
                      "UPDATE counters SET value=value+?1 WHERE name=?2")) {
      return Error();
    }
    return "";
  }

  bool Add(const char* counter, int64_t delta) {
    sqlite3_bind_int64(add_.get(), 1, delta);
    sqlite3_bind_text(add_.get(), 2, counter, -1, SQLITE_STATIC);
    return add_.Run() && sqlite3_changes(db_) == 1;
  }

  // The once recipe: insert the marker; count only a new one.
  bool AddOnce(const char* counter, const std::string& id, int64_t delta) {
    sqlite3_bind_text(insert_event_.get(), 1, counter, -1, SQLITE_STATIC);
    sqlite3_bind_text(insert_event_.get(), 2, id.data(),
                      static_cast<int>(id.size()), SQLITE_STATIC);
    sqlite3_bind_int64(insert_event_.get(), 3, delta);
    if (!insert_event_.Run()) return false;
    return sqlite3_changes(db_) == 0 || Add(counter, delta);
  }

  // A single integer from `sql`, or -1.
  int64_t Scalar(const char* sql) {
    Statement q;
    if (!q.Prepare(db_, sql) || sqlite3_step(q.get()) != SQLITE_ROW) return -1;
    return sqlite3_column_int64(q.get(), 0);
  }

 private:
  Statement insert_event_, add_;
};

// After the loop: counters sum to `expected`, events hold `events` rows.
void Check(benchmark::State& state, Sqlite* db, int64_t expected,
           int64_t events) {
  if (state.error_occurred()) return;
  const int64_t sum = db->Scalar("SELECT sum(value) FROM counters");
  const int64_t rows = db->Scalar("SELECT count(*) FROM events");
  if (sum != expected || rows != events) {
    Fail(state, "check",
         "sum " + std::to_string(sum) + " (want " + std::to_string(expected) +
             "), events " + std::to_string(rows) + " (want " +
             std::to_string(events) + ")");
  }
}

bool OpenSqlite(benchmark::State& state, const TempDir& dir, Sqlite* db,
                const char* sync) {
  const std::string err = dir.ok() ? db->Open(dir.Sub("db.sqlite"), sync)
                                   : std::string("mkdtemp failed");
  if (!err.empty()) Fail(state, "open", err);
  return err.empty();
}

// The timed loop: one transaction of n add(i) calls per iteration, add(i)
// returning false on an error.
template <typename Add>
void Transactions(benchmark::State& state, Sqlite* db, LatencyLog* lat, int n,
                  Add add) {
  TimedLoop(state, lat, n, "transaction", [&](std::string* error) {
    bool ok = db->Begin();
    for (int i = 0; i < n && ok; ++i) ok = add(i);
    ok = ok && db->Commit();
    if (!ok) *error = db->Error();
    return ok;
  });
}

void BM_SqliteIncrement(benchmark::State& state, const char* sync, int n) {
  TempDir dir;
  Sqlite db;
  if (!OpenSqlite(state, dir, &db, sync)) return;
  LatencyLog lat;
  int64_t next = 0;
  Transactions(state, &db, &lat, n, [&](int) {
    return db.Add(kCounters[next++ % kCounterCount], 1);
  });
  Check(state, &db, state.iterations() * n, 0);
  lat.Report(state);
}

void BM_SqliteOnce(benchmark::State& state, const char* sync, int dup, int n) {
  size_t distinct = 0;
  const auto ids = DeliveryIds(
      static_cast<size_t>(state.max_iterations) * static_cast<size_t>(n), dup,
      &distinct);
  TempDir dir;
  Sqlite db;
  if (!OpenSqlite(state, dir, &db, sync)) return;
  LatencyLog lat;
  size_t next = 0;
  Transactions(state, &db, &lat, n,
               [&](int) { return db.AddOnce("c0", ids[next++], 1); });
  Check(state, &db, static_cast<int64_t>(distinct),
        static_cast<int64_t>(distinct));
  lat.Report(state);
  if (dup == 0 && n > 1 && !state.error_occurred() &&
      db.Exec("PRAGMA wal_checkpoint(TRUNCATE)")) {
    state.counters["bytes_per_event"] =
        static_cast<double>(DirBytes(dir.path())) /
        static_cast<double>(distinct);
  }
}

void RegisterAll() {
  struct Mode {
    const char* name;
    const char* pragma;
    int64_t per_event;  // events at scale 1, one transaction each
  };
  for (const Mode& m :
       {Mode{"normal", "NORMAL", 20000}, Mode{"full", "FULL", 2000}}) {
    const std::string sync = std::string("/sync:") + m.name;
    Register("sqlite/increment" + sync + "/batch:1", Scaled(m.per_event),
             BM_SqliteIncrement, m.pragma, 1);
    Register("sqlite/increment" + sync + "/batch:1000", Scaled(100),
             BM_SqliteIncrement, m.pragma, 1000);
    // Duplicates change little under FULL (the fsync dominates): only the
    // NORMAL mode runs all three streams.
    for (int dup : {0, 50, 90}) {
      if (dup != 0 && std::string(m.name) == "full") continue;
      const std::string base =
          "sqlite/once" + sync + "/dup:" + std::to_string(dup);
      Register(base + "/batch:1", Scaled(m.per_event), BM_SqliteOnce, m.pragma,
               dup, 1);
      Register(base + "/batch:1000", Scaled(100), BM_SqliteOnce, m.pragma, dup,
               1000);
    }
  }
}

}  // namespace
}  // namespace tally::bench

int main(int argc, char** argv) {
  tally::bench::RegisterAll();
  return tally::bench::RunBenchmarks(
      argc, argv, {{"sqlite_version", sqlite3_libversion()}});
}
