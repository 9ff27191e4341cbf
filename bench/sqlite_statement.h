// A prepared SQLite statement, shared by the SQLite peers of bench/
// (sqlite_peer_bench and sqlite_apply). Prepared once with
// SQLITE_PREPARE_PERSISTENT (they are reused for every row) and finalized on
// destruction, which must come before the connection's sqlite3_close (or
// close with sqlite3_close_v2).

#ifndef TALLY_BENCH_SQLITE_STATEMENT_H_
#define TALLY_BENCH_SQLITE_STATEMENT_H_

#include <sqlite3.h>

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

}  // namespace tally::bench

#endif  // TALLY_BENCH_SQLITE_STATEMENT_H_
