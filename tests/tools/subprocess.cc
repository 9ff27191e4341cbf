#include "subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <fstream>
#include <sstream>

namespace tally::test {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

}  // namespace

size_t ProcessResult::ErrLines() const {
  size_t n = 0;
  for (char c : err) n += c == '\n';
  if (!err.empty() && err.back() != '\n') ++n;
  return n;
}

std::string ProcessResult::LastOutLine() const {
  size_t end = out.size();
  while (end > 0 && out[end - 1] == '\n') --end;
  const size_t start = out.rfind('\n', end == 0 ? 0 : end - 1);
  return out.substr(start == std::string::npos ? 0 : start + 1,
                    end - (start == std::string::npos ? 0 : start + 1));
}

ProcessResult RunProcess(const std::vector<std::string>& argv,
                         const std::string& scratch_dir, int timeout_s,
                         const std::string& stdin_path) {
  // Files rather than pipes: the child can write any amount without the
  // parent having to drain two pipes at once to avoid a deadlock.
  static std::atomic<int> serial{0};
  const std::string stem = scratch_dir + "/proc" + std::to_string(serial++);
  const std::string out_path = stem + ".out";
  const std::string err_path = stem + ".err";

  std::vector<char*> args;
  for (const std::string& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  ProcessResult result;
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid == 0) {
    // Only async-signal-safe calls between fork and exec. A pending alarm
    // survives exec, which is what bounds the child's run time.
    const int in = ::open(stdin_path.c_str(), O_RDONLY);
    const int out =
        ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int err =
        ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (in < 0 || out < 0 || err < 0 || ::dup2(in, 0) < 0 ||
        ::dup2(out, 1) < 0 || ::dup2(err, 2) < 0) {
      ::_exit(127);
    }
    ::alarm(static_cast<unsigned>(timeout_s));
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  if (pid < 0) {
    result.err = "fork failed";
    return result;
  }
  int status = 0;
  struct rusage usage {};
  while (::wait4(pid, &status, 0, &usage) < 0) {
    if (errno != EINTR) {
      result.err = "wait4 failed";
      return result;
    }
  }
  result.max_rss_kb = usage.ru_maxrss;
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  result.out = Slurp(out_path);
  result.err = Slurp(err_path);
  ::unlink(out_path.c_str());
  ::unlink(err_path.c_str());
  return result;
}

LiveProcess::LiveProcess(const std::vector<std::string>& argv,
                         const std::string& scratch_dir, int timeout_s) {
  // A write to a child that died must fail, not kill the test.
  ::signal(SIGPIPE, SIG_IGN);
  static std::atomic<int> serial{0};
  err_path_ = scratch_dir + "/live" + std::to_string(serial++) + ".err";
  std::vector<char*> args;
  for (const std::string& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int in[2], out[2];
  if (::pipe(in) != 0) return;
  if (::pipe(out) != 0) {
    ::close(in[0]);
    ::close(in[1]);
    return;
  }
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int err =
        ::open(err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (err < 0 || ::dup2(in[0], 0) < 0 || ::dup2(out[1], 1) < 0 ||
        ::dup2(err, 2) < 0) {
      ::_exit(127);
    }
    ::close(in[1]);
    ::close(out[0]);
    ::alarm(static_cast<unsigned>(timeout_s));
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  if (pid < 0) {
    ::close(in[1]);
    ::close(out[0]);
    return;
  }
  pid_ = pid;
  in_ = in[1];
  out_ = out[0];
}

LiveProcess::~LiveProcess() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    Wait();
  }
}

bool LiveProcess::Write(const std::string& text) {
  size_t done = 0;
  while (in_ >= 0 && done < text.size()) {
    const ssize_t n = ::write(in_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return in_ >= 0;
}

void LiveProcess::CloseStdin() {
  if (in_ >= 0) ::close(in_);
  in_ = -1;
}

bool LiveProcess::ReadLine(std::string* line) {
  for (;;) {
    const size_t nl = buffered_.find('\n');
    if (nl != std::string::npos) {
      *line = buffered_.substr(0, nl);
      buffered_.erase(0, nl + 1);
      return true;
    }
    char buf[4096];
    const ssize_t n = out_ < 0 ? 0 : ::read(out_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    buffered_.append(buf, static_cast<size_t>(n));
  }
}

void LiveProcess::Signal(int sig) {
  if (pid_ > 0) ::kill(pid_, sig);
}

ProcessResult LiveProcess::Wait(bool close_stdin) {
  ProcessResult result;
  if (close_stdin) CloseStdin();
  char buf[4096];
  for (ssize_t n; out_ >= 0 && (n = ::read(out_, buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    buffered_.append(buf, static_cast<size_t>(n));
  }
  if (out_ >= 0) ::close(out_);
  out_ = -1;
  int status = 0;
  while (pid_ > 0 && ::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  result.out = std::move(buffered_);
  buffered_.clear();
  result.err = Slurp(err_path_);
  ::unlink(err_path_.c_str());
  return result;
}

}  // namespace tally::test
