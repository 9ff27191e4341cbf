// Checks of Status and Result for the tests of tests/cluster/ that use the
// public API alone (testutil/testutil.h reaches into the engine): ASSERT_OK
// of a Status or a Result, and Got, a Result's value.

#ifndef TALLY_TESTS_CLUSTER_API_CHECKS_H_
#define TALLY_TESTS_CLUSTER_API_CHECKS_H_

#include <gtest/gtest.h>

#include <utility>

#include "tally/tally.h"

namespace tally::test {

inline Status StatusOf(const Status& s) { return s; }
template <typename T>
Status StatusOf(const Result<T>& r) {
  return r.status();
}

// A Result's value, failing the test (and answering T()) when it is not ok.
template <typename T>
T Got(Result<T> r) {
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? std::move(r).value() : T();
}

}  // namespace tally::test

#define ASSERT_OK(expr)                                         \
  do {                                                          \
    const ::tally::Status _s = ::tally::test::StatusOf(expr);   \
    ASSERT_TRUE(_s.ok()) << #expr << ": " << _s.ToString();     \
  } while (0)

#endif  // TALLY_TESTS_CLUSTER_API_CHECKS_H_
