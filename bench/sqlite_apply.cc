// sqlite_apply: applies a JSON Lines file of once-events to SQLite, the way a
// careful application would without tally. It is the peer that
// bench/apply_vs_sqlite.sh times `counterctl apply` against.
//
//   sqlite_apply EVENTS.jsonl DB.sqlite
//
// Each line is {"counter":"c","event_id":"id","delta":1}, parsed with
// nlohmann::json and checked by counterctl apply's rules
// (tools/counterctl/apply_line.cc); blank lines are skipped. counterctl
// apply itself reads lines with a one-pass scanner (apply_scan.h), which
// bench/ may not include: the parse here costs more than counterctl's
// (docs/design.md, "counterctl apply: the cost of a line"). SQLite runs in WAL
// mode with synchronous=NORMAL (durable against a process crash, like tally
// with sync=false). Per event: INSERT OR IGNORE the (counter, event_id) row
// and, only when a row was inserted, add the delta to the counter; 1000
// events per transaction; every statement prepared once.
//
// Prints "lines=... applied=... duplicates=... rejected=... seconds=...
// lines_per_s=..." and then one "total NAME VALUE" line per counter, ordered
// by name. Exit status 0 on success, 1 with one line on stderr otherwise.
//
// A redelivery with a different delta is ignored as a duplicate here; tally
// reports it as a conflict. The generated benchmark files never contain one.

#include <sqlite3.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "bench/sqlite_statement.h"
#include "tally/limits.h"

namespace {

constexpr int kEventsPerTransaction = 1000;

using tally::bench::Statement;

// One once-event. Plain increments (no event_id) have no SQLite recipe here
// and are rejected.
struct Event {
  std::string counter;
  std::string event_id;
  int64_t delta = 1;
};

bool IsBlankLine(std::string_view line) {
  for (char c : line) {
    if (c != ' ' && c != '\t' && c != '\r' && c != '\n') return false;
  }
  return true;
}

// The checks counterctl apply makes on a string field: 1..max_bytes bytes,
// no control characters; copied out as counterctl copies it.
bool TakeString(const nlohmann::json& value, size_t max_bytes,
                std::string* out) {
  if (!value.is_string()) return false;
  const std::string& text = value.get_ref<const std::string&>();
  if (text.empty() || text.size() > max_bytes) return false;
  for (char c : text) {
    const unsigned char b = static_cast<unsigned char>(c);
    if (b < 0x20 || b == 0x7f) return false;
  }
  *out = text;
  return true;
}

// Parses and checks a line by counterctl apply's rules (a non-throwing
// nlohmann parse, a walk over the object's fields). Only the reason for a
// rejection is not built: it is never printed here.
bool ParseLine(std::string_view line, Event* event) {
  const nlohmann::json doc = nlohmann::json::parse(
      line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) return false;
  const nlohmann::json* counter = nullptr;
  const nlohmann::json* event_id = nullptr;
  const nlohmann::json* delta = nullptr;
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    if (it.key() == "counter") {
      counter = &it.value();
    } else if (it.key() == "event_id") {
      event_id = &it.value();
    } else if (it.key() == "delta") {
      delta = &it.value();
    } else {
      return false;
    }
  }
  if (counter == nullptr || event_id == nullptr ||
      !TakeString(*counter, tally::kMaxNameBytes, &event->counter) ||
      !TakeString(*event_id, tally::kMaxEventIdBytes, &event->event_id)) {
    return false;
  }
  event->delta = 1;
  if (delta == nullptr) return true;
  if (delta->is_number_unsigned()) {
    const uint64_t v = delta->get<uint64_t>();
    if (v > static_cast<uint64_t>(tally::kMaxDelta)) return false;
    event->delta = static_cast<int64_t>(v);
    return true;
  }
  if (delta->is_number_integer()) {
    event->delta = delta->get<int64_t>();
    return event->delta >= tally::kMinDelta;
  }
  return false;
}

int Die(sqlite3* db, const std::string& what) {
  std::cerr << "sqlite_apply: " << what;
  if (db != nullptr) std::cerr << ": " << sqlite3_errmsg(db);
  std::cerr << "\n";
  return 1;
}

bool Exec(sqlite3* db, const char* sql) {
  return sqlite3_exec(db, sql, nullptr, nullptr, nullptr) == SQLITE_OK;
}

// Runs a bound statement that returns no rows, then resets it for reuse.
bool Step(sqlite3_stmt* stmt) {
  const int rc = sqlite3_step(stmt);
  sqlite3_reset(stmt);
  return rc == SQLITE_DONE;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: sqlite_apply EVENTS.jsonl DB.sqlite\n";
    return 2;
  }
  std::ifstream in(argv[1]);
  if (!in) return Die(nullptr, std::string("cannot open ") + argv[1]);

  sqlite3* db = nullptr;
  if (sqlite3_open(argv[2], &db) != SQLITE_OK) {
    const int rc = Die(db, std::string("cannot open ") + argv[2]);
    sqlite3_close(db);
    return rc;
  }
  // Statements must be finalized before the connection closes: they live in
  // an inner scope.
  int rc = 0;
  {
    if (!Exec(db, "PRAGMA journal_mode=WAL") ||
        !Exec(db, "PRAGMA synchronous=NORMAL") ||
        !Exec(db,
              "CREATE TABLE IF NOT EXISTS events(counter TEXT, event_id TEXT, "
              "delta INTEGER, PRIMARY KEY(counter, event_id))") ||
        !Exec(db,
              "CREATE TABLE IF NOT EXISTS counters(name TEXT PRIMARY KEY, "
              "value INTEGER)")) {
      rc = Die(db, "setup");
    }
    Statement insert_event, add, insert_counter, totals;
    if (rc == 0 &&
        (!insert_event.Prepare(
             db,
             "INSERT OR IGNORE INTO events(counter, event_id, "
             "delta) VALUES(?1, ?2, ?3)") ||
         !add.Prepare(db, "UPDATE counters SET value=value+?1 WHERE name=?2") ||
         !insert_counter.Prepare(
             db, "INSERT INTO counters(name, value) VALUES(?1, ?2)") ||
         !totals.Prepare(db,
                         "SELECT name, value FROM counters ORDER BY name"))) {
      rc = Die(db, "prepare");
    }

    uint64_t lines = 0, applied = 0, duplicates = 0, rejected = 0;
    int in_transaction = 0;
    const auto start = std::chrono::steady_clock::now();
    std::string line;
    Event event;
    while (rc == 0 && std::getline(in, line)) {
      if (IsBlankLine(line)) continue;
      ++lines;
      if (!ParseLine(line, &event)) {
        ++rejected;
        continue;
      }
      const std::string& name = event.counter;
      const std::string& id = event.event_id;
      const int64_t d = event.delta;

      if (in_transaction == 0 && !Exec(db, "BEGIN")) {
        rc = Die(db, "begin");
        break;
      }
      sqlite3_stmt* ins = insert_event.get();
      sqlite3_bind_text(ins, 1, name.data(), static_cast<int>(name.size()),
                        SQLITE_STATIC);
      sqlite3_bind_text(ins, 2, id.data(), static_cast<int>(id.size()),
                        SQLITE_STATIC);
      sqlite3_bind_int64(ins, 3, d);
      if (!Step(ins)) {
        rc = Die(db, "insert event");
        break;
      }
      if (sqlite3_changes(db) == 1) {
        ++applied;
        sqlite3_stmt* upd = add.get();
        sqlite3_bind_int64(upd, 1, d);
        sqlite3_bind_text(upd, 2, name.data(), static_cast<int>(name.size()),
                          SQLITE_STATIC);
        if (!Step(upd)) {
          rc = Die(db, "update counter");
          break;
        }
        // A counter's first event creates its row (tally needs `create`).
        if (sqlite3_changes(db) == 0) {
          sqlite3_stmt* ic = insert_counter.get();
          sqlite3_bind_text(ic, 1, name.data(), static_cast<int>(name.size()),
                            SQLITE_STATIC);
          sqlite3_bind_int64(ic, 2, d);
          if (!Step(ic)) {
            rc = Die(db, "insert counter");
            break;
          }
        }
      } else {
        ++duplicates;
      }
      if (++in_transaction == kEventsPerTransaction) {
        if (!Exec(db, "COMMIT")) {
          rc = Die(db, "commit");
          break;
        }
        in_transaction = 0;
      }
    }
    if (rc == 0 && in_transaction > 0 && !Exec(db, "COMMIT")) {
      rc = Die(db, "commit");
    }
    if (rc == 0 && in.bad()) rc = Die(nullptr, "read error");
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();

    if (rc == 0) {
      std::printf(
          "lines=%llu applied=%llu duplicates=%llu rejected=%llu seconds=%.3f "
          "lines_per_s=%.0f\n",
          static_cast<unsigned long long>(lines),
          static_cast<unsigned long long>(applied),
          static_cast<unsigned long long>(duplicates),
          static_cast<unsigned long long>(rejected), seconds,
          seconds > 0 ? static_cast<double>(lines) / seconds : 0.0);
      sqlite3_stmt* t = totals.get();
      int step;
      while ((step = sqlite3_step(t)) == SQLITE_ROW) {
        std::printf("total %s %lld\n",
                    reinterpret_cast<const char*>(sqlite3_column_text(t, 0)),
                    static_cast<long long>(sqlite3_column_int64(t, 1)));
      }
      if (step != SQLITE_DONE) rc = Die(db, "read totals");
      sqlite3_reset(t);
    }
  }
  if (sqlite3_close(db) != SQLITE_OK && rc == 0) rc = Die(db, "close");
  return rc;
}
