// A child process for a test that needs a second process (a writer beside
// a reader, a writer to kill): this test binary run again with only one
// test, which signals the parent through a pipe when it is ready.
//
// Thread safety: call from the test's thread before it starts others.

#ifndef TALLY_TESTS_TESTUTIL_CHILD_TEST_H_
#define TALLY_TESTS_TESTUTIL_CHILD_TEST_H_

#include <sys/types.h>

#include <string>
#include <vector>

namespace tally::test {

// Runs this binary with --gtest_filter=`filter`, its environment plus `env`
// ("NAME=value" each) and `fd_var`=the write end of a pipe, stdout to
// /dev/null. Returns the child's pid and sets *read_fd to the pipe's read
// end (the caller closes it); -1, with a test failure, if it could not.
pid_t SpawnChildTest(const std::string& filter, std::vector<std::string> env,
                     const char* fd_var, int* read_fd);

// SpawnChildTest, then waits for the child's first byte on the pipe.
// Returns the child's pid once it wrote it; -1, with a test failure, if it
// ended first (it is then reaped).
pid_t StartChildTest(const std::string& filter, std::vector<std::string> env,
                     const char* fd_var);

}  // namespace tally::test

#endif  // TALLY_TESTS_TESTUTIL_CHILD_TEST_H_
