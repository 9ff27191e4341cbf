// Test helpers: ASSERT_OK/EXPECT_OK for Status and Result,
// ASSERT_OK_AND_ASSIGN/OkValue to read a Result's value, database opens,
// clocks and import helpers (the temporary directory is testutil/temp_dir.h).
#ifndef TALLY_TESTS_TESTUTIL_H_
#define TALLY_TESTS_TESTUTIL_H_

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "engine/open_on_env.h"
#include "tally/admin.h"
#include "tally/db.h"
#include "tally/import.h"
#include "tally/status.h"
#include "tally/types.h"
#include "testutil/temp_dir.h"

namespace tally::test {

// Whether any problem of a Verify report contains `needle`.
inline bool Mentions(const VerifyReport& r, const std::string& needle) {
  for (const std::string& p : r.problems) {
    if (p.find(needle) != std::string::npos) return true;
  }
  return false;
}

// A Verify report's problems, one per line (for failure messages).
inline std::string Dump(const VerifyReport& r) {
  std::string out;
  for (const std::string& p : r.problems) out += p + "\n";
  return out;
}

inline const Status& StatusOf(const Status& s) { return s; }
template <typename T>
const Status& StatusOf(const Result<T>& r) {
  return r.status();
}

template <typename T>
::testing::AssertionResult IsOk(const char* expr, const T& value) {
  const Status& s = StatusOf(value);
  if (s.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << expr << ": " << s.ToString();
}

// Streamable like any gtest assertion; evaluates `expr` once.
#define ASSERT_OK(expr) ASSERT_PRED_FORMAT1(::tally::test::IsOk, expr)
#define EXPECT_OK(expr) EXPECT_PRED_FORMAT1(::tally::test::IsOk, expr)

// ASSERT_OK_AND_ASSIGN(lhs, expr): evaluates `expr` (a Result) once, fails
// the test (returning from the function, as ASSERT_OK) unless it is OK, and
// moves its value into `lhs`, a variable or a declaration:
//   ASSERT_OK_AND_ASSIGN(int64_t v, db->ReadExact("c"));
// Reading the value of a failed Result aborts (tally/status.h), so a test
// reads a value only through this, OkValue or after ASSERT_OK on it.
#define ASSERT_OK_AND_ASSIGN(lhs, expr)                                    \
  TALLY_ASSERT_OK_AND_ASSIGN_(TALLY_TEST_CAT_(tally_result_, __COUNTER__), \
                              lhs, expr)
#define TALLY_ASSERT_OK_AND_ASSIGN_(tmp, lhs, expr)                        \
  auto tmp = (expr);                                                       \
  if (!tmp.ok()) GTEST_FAIL() << #expr << ": " << tmp.status().ToString(); \
  lhs = std::move(tmp).value()
#define TALLY_TEST_CAT_(a, b) TALLY_TEST_CAT2_(a, b)
#define TALLY_TEST_CAT2_(a, b) a##b

// The value of `r`, for inside an expression where ASSERT_OK_AND_ASSIGN's
// statement does not fit: EXPECT_EQ(OkValue(db->ReadExact("c")), 3).
// A failed `r` is recorded as a test failure at the caller's line, with
// `what` and its status; reading its value then aborts the test process
// (Result's rule), which ends that one test as failed: never a made-up value.
template <typename T>
T OkValue(Result<T> r, const char* what = "Result",
          const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  if (!r.ok())
    ADD_FAILURE_AT(file, line) << what << ": " << r.status().ToString();
  return std::move(r).value();
}

// Opens (creating) a database at `path`, failing the test on error.
// A counter spec with `shards` shards and an outbox.
CounterSpec OutboxSpec(uint32_t shards);

// `env`, when given, holds the files (engine/open_on_env.h); not owned.
std::unique_ptr<Db> OpenOrDie(const std::string& path,
                              const Options& options = Options(),
                              rocksdb::Env* env = nullptr);

// Runs `body` on a thread of its own and waits for it up to `bound`: a hang
// detector for tests of deadlocks, not a timing assertion (pick a bound far
// beyond any run, sanitizers included). On a hang it reports `what` as a
// test failure and ends the process with status 1 at once: the hung thread
// can be neither joined nor abandoned safely (it uses the test's objects).
void FinishesOrDie(const std::string& what, std::chrono::seconds bound,
                   const std::function<void()>& body);

// Counter `c` of `from` as an export holds it (shard values and every
// marker, read in pages of `page_size`).
CounterImport ExportedCounter(Db* from, const CounterInfo& c,
                              size_t page_size = 1000);

// Imports every counter of `from` that `to` does not hold, the way
// `counterctl import --merge skip-existing` does; the first failure ends it.
Status ImportMissing(Db* from, Db* to);

// Runs ImportMissing(from, db at `path`) over a FileSystem whose WAL
// appends fail from the (cut + 1)th on (the disk then holds what a SIGKILL
// after `cut` appends leaves), then closes the database. Returns whether
// the import ran to its end before the cut (then it must have succeeded).
bool ImportCutAfter(Db* from, const std::string& path, int cut);

// A clock tests move by hand. Thread-safe, as Clock requires: the engine's
// background threads (the roll-up worker) read it while a test advances it.
class ManualClock : public Clock {
 public:
  explicit ManualClock(int64_t now_ms) : now_ms_(now_ms) {}
  int64_t NowMillis() const override { return now_ms_.load(); }
  void Advance(int64_t ms) { now_ms_.fetch_add(ms); }

 private:
  std::atomic<int64_t> now_ms_;
};

}  // namespace tally::test

#endif  // TALLY_TESTS_TESTUTIL_H_
