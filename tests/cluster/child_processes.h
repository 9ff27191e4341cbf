// Runs a test's work in child processes, each its own client of the
// cluster (its own Db, its own connections), and gathers what each
// reports. Used by the cluster tests that race writers across processes.

#ifndef TALLY_TESTS_CLUSTER_CHILD_PROCESSES_H_
#define TALLY_TESTS_CLUSTER_CHILD_PROCESSES_H_

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <type_traits>
#include <vector>

namespace tally::test {

// Forks `n` children; child i runs `work(i)` and sends its result (a
// trivially copyable T) back on a pipe, then exits. Returns the results in
// child order after every child exited; a child that could not report, or
// exited other than with 0, fails the test (its result stays `failed`).
template <typename T>
std::vector<T> RunInChildren(int n, const std::function<T(int)>& work,
                             const T& failed) {
  static_assert(std::is_trivially_copyable_v<T>);
  std::vector<pid_t> children;
  std::vector<int> reads;
  for (int i = 0; i < n; ++i) {
    int fds[2];
    EXPECT_EQ(pipe(fds), 0);
    const pid_t pid = fork();
    EXPECT_GE(pid, 0);
    if (pid == 0) {
      close(fds[0]);
      const T result = work(i);
      const ssize_t sent = write(fds[1], &result, sizeof result);
      _exit(sent == static_cast<ssize_t>(sizeof result) ? 0 : 1);
    }
    close(fds[1]);
    children.push_back(pid);
    reads.push_back(fds[0]);
  }
  std::vector<T> results(children.size(), failed);
  for (size_t i = 0; i < children.size(); ++i) {
    EXPECT_EQ(read(reads[i], &results[i], sizeof(T)),
              static_cast<ssize_t>(sizeof(T)))
        << "child " << i << " reported nothing";
    close(reads[i]);
    int status = 0;
    EXPECT_EQ(waitpid(children[i], &status, 0), children[i]);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "child " << i;
  }
  return results;
}

}  // namespace tally::test

#endif  // TALLY_TESTS_CLUSTER_CHILD_PROCESSES_H_
