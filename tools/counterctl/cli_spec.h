// counterctl's grammar as plain data (CommandLine::Spec builds it from the
// CLI11 tree), and what is generated from it: the bash and zsh completion
// scripts and the man page, so none of them can drift from the parser.
// `counterctl completion bash|zsh` and `counterctl man` print them; the
// build writes them next to the binary and `cmake --install` installs them.

#ifndef TALLY_TOOLS_COUNTERCTL_CLI_SPEC_H_
#define TALLY_TOOLS_COUNTERCTL_CLI_SPEC_H_

#include <string>
#include <vector>

namespace counterctl {

struct OptionSpec {
  std::vector<std::string> names;  // "-d", "--db"; empty for a positional
  std::string value;               // "DIR"; empty for a flag
  std::string description;
  bool positional = false;
};

struct CommandSpec {
  std::string name;  // "counterctl" for the root
  std::vector<std::string> aliases;
  std::string description;
  std::vector<OptionSpec> options;  // without --help
  std::vector<CommandSpec> subcommands;
};

// A bash completion function for `counterctl` (complete -F).
std::string BashCompletion(const CommandSpec& root);
// The zsh completion file (#compdef), on zsh's bash completion layer.
std::string ZshCompletion(const CommandSpec& root);
// The man page, counterctl(1), in roff.
std::string ManPage(const CommandSpec& root, const std::string& version);

}  // namespace counterctl

#endif  // TALLY_TOOLS_COUNTERCTL_CLI_SPEC_H_
