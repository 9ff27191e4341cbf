#include "testutil/child_test.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <climits>
#include <utility>

extern char** environ;

namespace tally::test {

pid_t SpawnChildTest(const std::string& filter, std::vector<std::string> env,
                     const char* fd_var, int* read_fd) {
  char exe[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) {
    ADD_FAILURE() << "cannot find this test binary";
    return -1;
  }
  exe[n] = '\0';
  int fds[2];
  if (::pipe(fds) != 0) {
    ADD_FAILURE() << "pipe failed";
    return -1;
  }
  // Everything the child needs is made before the fork: between fork and
  // exec it calls only async-signal-safe functions.
  env.push_back(std::string(fd_var) + "=" + std::to_string(fds[1]));
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  for (char** e = environ; *e != nullptr; ++e) envp.push_back(*e);
  envp.push_back(nullptr);
  std::string filter_arg = "--gtest_filter=" + filter;
  char* argv[] = {exe, filter_arg.data(), nullptr};
  const int null = ::open("/dev/null", O_WRONLY);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    if (null >= 0) ::dup2(null, STDOUT_FILENO);  // the child's gtest output
    ::execve(exe, argv, envp.data());
    ::_exit(127);
  }
  if (null >= 0) ::close(null);
  ::close(fds[1]);
  *read_fd = fds[0];
  return pid;
}

pid_t StartChildTest(const std::string& filter, std::vector<std::string> env,
                     const char* fd_var) {
  int fd = -1;
  const pid_t pid = SpawnChildTest(filter, std::move(env), fd_var, &fd);
  if (pid < 0) return -1;
  char byte = 0;
  const ssize_t got = ::read(fd, &byte, 1);
  ::close(fd);
  if (got != 1) {
    ADD_FAILURE() << "the child " << filter << " ended before it was ready";
    int status = 0;
    ::waitpid(pid, &status, 0);
    return -1;
  }
  return pid;
}

}  // namespace tally::test
