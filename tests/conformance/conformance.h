// ConformanceTest: the fixture of every conformance suite. Each test gets a
// fresh scratch directory, a ManualClock the backend reads through
// Options::clock (time moves only when the test moves it: no sleeps), and
// a Db opened by the backend's factory (db_). A suite derives from it
// (`class Claims : public ConformanceTest {};`), writes TEST_Ps, and ends
// with TALLY_CONFORMANCE_SUITE(Claims), which runs it once per backend as
// Backend/Claims.Name/<backend>.
//
// Public API only: tally/*.h and the public-API helpers of tests/testutil.

#ifndef TALLY_TESTS_CONFORMANCE_CONFORMANCE_H_
#define TALLY_TESTS_CONFORMANCE_CONFORMANCE_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <utility>

#include "conformance/backend.h"
#include "tally/db.h"
#include "tally/options.h"
#include "testutil/status_code.h"
#include "testutil/temp_dir.h"
#include "testutil/testutil.h"

namespace tally::conformance {

inline constexpr int64_t kSecond = 1'000;
inline constexpr int64_t kMinute = 60'000;
inline constexpr int64_t kHour = 3'600'000;
inline constexpr int64_t kDay = 86'400'000;
// 2026-12-01T00:00:00Z, a UTC midnight.
inline constexpr int64_t kMidnight = 1'796'083'200'000;
static_assert(kMidnight % kDay == 0, "kMidnight must be a UTC midnight");
// Where every test's clock starts: noon of that day (a minute and an hour
// boundary too, so windows and buckets begin where the tests say).
inline constexpr int64_t kStart = kMidnight + 12 * kHour;

class ConformanceTest : public ::testing::TestWithParam<BackendFactory> {
 protected:
  ConformanceTest() : clock_(kStart) {}

  void SetUp() override {
    ASSERT_TRUE(dir_.ok()) << "no scratch directory (see stderr)";
    db_ = OpenWith(BaseOptions());
    ASSERT_NE(db_, nullptr);
  }
  void TearDown() override { db_.reset(); }

  const BackendFactory& backend() const { return GetParam(); }

  // What every database of a test is opened with: time from clock_, no
  // background roll-ups (ReadCached moves only by RollupNow and by a
  // first read).
  Options BaseOptions() const {
    Options o;
    o.clock = &clock_;
    o.rollup_interval_ms = 0;
    return o;
  }

  // Opens the test's database through the factory.
  Status TryOpen(const Options& options, std::unique_ptr<Db>* db) {
    return backend().open(options, dir_.path(), db);
  }
  // The same, failing the test (and returning null) on an error.
  std::unique_ptr<Db> OpenWith(const Options& options) {
    std::unique_ptr<Db> db;
    Status s = TryOpen(options, &db);
    EXPECT_TRUE(s.ok()) << backend().name << ": open: " << s.ToString();
    return db;
  }
  // Closes db_ and opens the same database again: what it held must be
  // there (a backend's durability across a restart of its client).
  void Reopen() {
    db_.reset();
    db_ = OpenWith(BaseOptions());
  }

  int64_t Now() const { return clock_.NowMillis(); }
  // A path in the scratch directory (not created).
  std::string Sub(const std::string& name) const { return dir_.Sub(name); }

 private:
  test::TempDir dir_{"tally-conformance"};  // first: removed last

 protected:
  test::ManualClock clock_;
  std::unique_ptr<Db> db_;
};

// The value of `r`. A failed `r` is a test failure recorded at the
// caller's line, and yields T{} so that the test goes on to report what
// else differs (test::OkValue would abort the whole binary: a backend in
// the making fails many calls at once).
template <typename T>
T Got(Result<T> r, const char* file = __builtin_FILE(),
      int line = __builtin_LINE()) {
  if (!r.ok()) {
    ADD_FAILURE_AT(file, line) << r.status().ToString();
    return T{};
  }
  return std::move(r).value();
}

// Whether `s` has `code` and its message holds `part`, for
// EXPECT_TRUE(Fails(...)) with the status in the failure message.
inline ::testing::AssertionResult Fails(const Status& s, Status::Code code,
                                        const std::string& part = "") {
  if (s.code() == code && s.message().find(part) != std::string::npos) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << "got " << s.ToString() << "; want " << test::StatusCodeName(code)
         << " with \""
         << part << "\"";
}
template <typename T>
::testing::AssertionResult Fails(const Result<T>& r, Status::Code code,
                                 const std::string& part = "") {
  return Fails(r.status(), code, part);
}

using Code = Status::Code;

}  // namespace tally::conformance

namespace tally {
// gtest prints the answers by name (found by ADL) in failure messages.
inline void PrintTo(Outcome o, std::ostream* os) { *os << OutcomeName(o); }
inline void PrintTo(HoldState s, std::ostream* os) { *os << HoldStateName(s); }
inline void PrintTo(ClaimAnswer a, std::ostream* os) {
  *os << ClaimAnswerName(a);
}
inline void PrintTo(ClaimState s, std::ostream* os) {
  *os << ClaimStateName(s);
}
}  // namespace tally

// Runs the TEST_Ps of `suite` once per backend of Factories().
#define TALLY_CONFORMANCE_SUITE(suite)                                        \
  INSTANTIATE_TEST_SUITE_P(                                                   \
      Backend, suite, ::testing::ValuesIn(::tally::conformance::Factories()), \
      ::tally::conformance::FactoryName)

#endif  // TALLY_TESTS_CONFORMANCE_CONFORMANCE_H_
