// Child processes of the crash tests: start one with its stdout on a pipe,
// read its progress bytes, SIGKILL it.

#ifndef TALLY_TESTS_CRASH_CHILD_PROCESS_H_
#define TALLY_TESTS_CRASH_CHILD_PROCESS_H_

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

namespace tally::crash {

// Starts argv[0] with `argv`, its stdout on a pipe whose read end goes to
// *out_fd; returns its pid (-1 on failure).
inline pid_t StartChild(const std::vector<std::string>& argv, int* out_fd) {
  int fds[2];
  if (::pipe(fds) != 0) return -1;
  std::vector<char*> args;
  for (const std::string& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(fds[1], STDOUT_FILENO);
    ::close(fds[0]);
    ::close(fds[1]);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  *out_fd = fds[0];
  return pid;
}

// Reads `want` progress bytes; false if the child exited first.
inline bool AwaitProgress(int fd, int want) {
  char buf[64];
  int got = 0;
  while (got < want) {
    const ssize_t n = ::read(fd, buf, std::min<size_t>(sizeof buf, want - got));
    if (n <= 0) return false;
    got += static_cast<int>(n);
  }
  return true;
}

// SIGKILLs the child and reaps it; true when SIGKILL is what ended it.
inline bool KillChild(pid_t pid, int fd) {
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ::close(fd);
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

}  // namespace tally::crash

#endif  // TALLY_TESTS_CRASH_CHILD_PROCESS_H_
