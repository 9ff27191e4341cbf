// counterctl: inspect and change a tally database from the shell.
//
//   counterctl --db DIR SUBCOMMAND [ARGS] [FLAGS]
//
// The grammar is in cli.cc (CommandLine); the behaviour of each subcommand
// in cmd_<name>.cc. Usage errors become one line on stderr with exit code 2.

#include <exception>
#include <optional>
#include <string>

#include "cli.h"
#include "common.h"

int main(int argc, char** argv) {
  // Nothing in the tool is meant to throw past this point; if something
  // does (std::bad_alloc reading a huge file), say so in one line.
  try {
    counterctl::CommandLine command_line;
    if (std::optional<int> code = command_line.Parse(argc, argv)) return *code;
    return command_line.Run();
  } catch (const std::exception& e) {
    counterctl::PrintError(std::string("internal error: ") + e.what());
  } catch (...) {
    counterctl::PrintError("internal error: unknown exception");
  }
  return counterctl::kExitError;
}
