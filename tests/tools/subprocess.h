// Runs a program as a child process and captures what it printed, for
// tests that check a command-line tool from the outside.
#ifndef TALLY_TESTS_TOOLS_SUBPROCESS_H_
#define TALLY_TESTS_TOOLS_SUBPROCESS_H_

#include <string>
#include <vector>

namespace tally::test {

struct ProcessResult {
  int exit_code = -1;  // the exit status, or -1 if killed by a signal
  int signal = 0;      // the signal that killed it, or 0
  std::string out;     // everything written to stdout
  std::string err;     // everything written to stderr
  double seconds = 0;  // wall time from fork to exit
  long max_rss_kb = 0;  // the child's peak resident memory (ru_maxrss)

  // The number of lines written to stderr.
  size_t ErrLines() const;
  // The last non-empty line of stdout, without its newline.
  std::string LastOutLine() const;
};

// Runs `argv[0]` with `argv`, stdin from `stdin_path`, stdout and stderr
// into files under `scratch_dir`. A child still running after `timeout_s`
// seconds is killed by SIGALRM (and reported through `signal`), so a hung
// tool fails the test instead of hanging it.
ProcessResult RunProcess(const std::vector<std::string>& argv,
                         const std::string& scratch_dir, int timeout_s = 120,
                         const std::string& stdin_path = "/dev/null");

// A child the test talks to while it runs: its stdin and stdout are pipes
// (the test writes lines in and reads lines out as they come), its stderr
// a file under `scratch_dir`. As for RunProcess, SIGALRM ends a child still
// running after `timeout_s` seconds, so a read from a hung one returns
// end-of-file instead of hanging the test. Not thread-safe.
class LiveProcess {
 public:
  LiveProcess(const std::vector<std::string>& argv,
              const std::string& scratch_dir, int timeout_s = 120);
  ~LiveProcess();  // kills and reaps the child if Wait() was not called
  LiveProcess(const LiveProcess&) = delete;
  LiveProcess& operator=(const LiveProcess&) = delete;

  bool started() const { return pid_ > 0; }
  // Writes to the child's stdin; false once it is closed or gone.
  bool Write(const std::string& text);
  void CloseStdin();
  // The next line of stdout without its newline; false at end-of-file.
  bool ReadLine(std::string* line);
  // Sends `sig` to the child.
  void Signal(int sig);
  // Closes stdin (unless `close_stdin` is false: for a child that must end
  // on its own, e.g. on a signal, without seeing end-of-input), reads stdout
  // to its end, reaps the child: `out` holds what ReadLine had not returned
  // yet. The timeout still ends a child that never does.
  ProcessResult Wait(bool close_stdin = true);

 private:
  int pid_ = -1;
  int in_ = -1;   // the child's stdin, write end
  int out_ = -1;  // the child's stdout, read end
  std::string err_path_;
  std::string buffered_;  // read from stdout, not yet returned as a line
};

}  // namespace tally::test

#endif  // TALLY_TESTS_TOOLS_SUBPROCESS_H_
