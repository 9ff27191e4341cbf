// A prepared SQLite statement, shared by the SQLite peers of bench/
// (sqlite_peer_bench, sqlite_apply and tally_likes_bench), and the WAL
// connection of the transaction-per-N peers. Prepared once with
// SQLITE_PREPARE_PERSISTENT (they are reused for every row) and finalized on
// destruction, which must come before the connection's sqlite3_close (or
// close with sqlite3_close_v2).

#ifndef TALLY_BENCH_SQLITE_STATEMENT_H_
#define TALLY_BENCH_SQLITE_STATEMENT_H_

#include <sqlite3.h>

#include <string>

namespace tally::bench {

class Statement {
 public:
  Statement() = default;
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  bool Prepare(sqlite3* db, const char* sql) {
    return sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt_,
                              nullptr) == SQLITE_OK;
  }
  sqlite3_stmt* get() const { return stmt_; }
  // Steps once (to DONE or ROW) and resets; false on an error.
  bool Run() {
    const int rc = sqlite3_step(stmt_);
    sqlite3_reset(stmt_);
    return rc == SQLITE_DONE || rc == SQLITE_ROW;
  }

 private:
  sqlite3_stmt* stmt_ = nullptr;
};

// A connection in WAL mode with what every transaction-per-N peer calls
// (sqlite_peer_bench, tally_likes_bench): Exec, the last error text, BEGIN
// and COMMIT as prepared statements. A subclass adds its tables and
// statements; close_v2 on destruction, so the handle closes once the
// statements (the subclass's are destroyed first, this class's after this
// body) are finalized.
class WalConnection {
 public:
  WalConnection() = default;
  ~WalConnection() { sqlite3_close_v2(db_); }
  WalConnection(const WalConnection&) = delete;
  WalConnection& operator=(const WalConnection&) = delete;

  // Opens `path` with journal_mode=WAL and PRAGMA synchronous=`synchronous`
  // (NORMAL, FULL); false on an error (Error() says which).
  bool OpenWal(const std::string& path, const char* synchronous) {
    if (sqlite3_open(path.c_str(), &db_) != SQLITE_OK) return false;
    const std::string sync = std::string("PRAGMA synchronous=") + synchronous;
    return Exec("PRAGMA journal_mode=WAL") && Exec(sync.c_str()) &&
           begin_.Prepare(db_, "BEGIN") && commit_.Prepare(db_, "COMMIT");
  }
  bool Exec(const char* sql) {
    return sqlite3_exec(db_, sql, nullptr, nullptr, nullptr) == SQLITE_OK;
  }
  std::string Error() const {
    return db_ != nullptr ? sqlite3_errmsg(db_) : "sqlite3_open failed";
  }
  bool Begin() { return begin_.Run(); }
  bool Commit() { return commit_.Run(); }

 protected:
  sqlite3* db_ = nullptr;

 private:
  Statement begin_, commit_;
};

}  // namespace tally::bench

#endif  // TALLY_BENCH_SQLITE_STATEMENT_H_
