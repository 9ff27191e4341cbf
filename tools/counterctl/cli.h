// counterctl's command line, apart from running it: builds the CLI11 tree of
// every subcommand and parses an argv into the chosen subcommand's
// arguments. Parsing touches no database and no file, so tests and the
// fuzzer (tests/fuzz/fuzz_counterctl_args.cc) can call it on any argv.
//
// Not thread-safe; one CommandLine per process run (or per fuzz input).

#ifndef TALLY_TOOLS_COUNTERCTL_CLI_H_
#define TALLY_TOOLS_COUNTERCTL_CLI_H_

#include <memory>
#include <optional>

namespace counterctl {

class CommandLine {
 public:
  // Builds the whole grammar. CLI11 may throw while building it (a
  // programming error, never the user's input).
  CommandLine();
  ~CommandLine();
  CommandLine(const CommandLine&) = delete;
  CommandLine& operator=(const CommandLine&) = delete;

  // Parses argv (argv[0] is the program name). Returns std::nullopt when a
  // subcommand was chosen and Run() may run it; otherwise the exit code the
  // process should end with, already reported: 0 after --help or --version
  // (printed on stdout), kExitUsage after one "counterctl: ..." line on
  // stderr. No exception escapes for any argv.
  std::optional<int> Parse(int argc, const char* const* argv);

  // Runs the subcommand Parse chose and returns its exit code. Only after
  // Parse returned std::nullopt.
  int Run();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace counterctl

#endif  // TALLY_TOOLS_COUNTERCTL_CLI_H_
