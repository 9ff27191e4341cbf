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

  // The number of lines written to stderr.
  size_t ErrLines() const;
  // The last non-empty line of stdout, without its newline.
  std::string LastOutLine() const;
};

// Runs `argv[0]` with `argv`, stdin from /dev/null, stdout and stderr into
// files under `scratch_dir`. A child still running after `timeout_s` seconds
// is killed by SIGALRM (and reported through `signal`), so a hung tool fails
// the test instead of hanging it.
ProcessResult RunProcess(const std::vector<std::string>& argv,
                         const std::string& scratch_dir, int timeout_s = 120);

}  // namespace tally::test

#endif  // TALLY_TESTS_TOOLS_SUBPROCESS_H_
