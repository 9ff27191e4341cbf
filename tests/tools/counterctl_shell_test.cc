// counterctl's completion scripts and man page (issue 18) are generated from
// its grammar: every subcommand and every flag that `counterctl help`
// prints (CLI11's own rendering of the parser) is in the man page, and the
// bash completion, run in a real bash, completes subcommands, actions and
// flags, skipping option values.

#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "counterctl_fixture.h"

namespace tally::test {
namespace {

class CounterctlShell : public CounterctlTest {
 protected:
  // What `counterctl help [SUB]` lists under `section`: the first word of
  // each indented line.
  std::vector<std::string> HelpWords(const std::vector<std::string>& args,
                                     const std::string& section) {
    const ProcessResult r = CtlRaw(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::vector<std::string> words;
    std::istringstream lines(r.out);
    std::string line;
    bool in = false;
    while (std::getline(lines, line)) {
      if (line.rfind(section, 0) == 0) {
        in = true;
        continue;
      }
      if (in && (line.empty() || line[0] != ' ')) in = false;
      // Entries start two spaces in; deeper lines continue a description.
      if (!in || line.size() < 3 || line[2] == ' ') continue;
      std::istringstream fields(line);
      std::string first;
      fields >> first;
      if (!first.empty() && first.back() == ',') first.pop_back();  // "events, markers"
      words.push_back(first);
    }
    return words;
  }

  // Runs the generated bash completion on `words` (the cursor on the last)
  // and returns its candidates.
  std::string Complete(const std::string& script,
                       const std::vector<std::string>& words) {
    std::string array;
    for (const std::string& w : words) array += " '" + w + "'";
    const std::string program = "source " + script + "; COMP_WORDS=(" +
                                array + "); COMP_CWORD=" +
                                std::to_string(words.size() - 1) +
                                "; _counterctl; echo \"${COMPREPLY[*]}\"";
    const ProcessResult r = RunProcess({"/bin/bash", "-c", program}, tmp_.path());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    return r.out.empty() ? r.out : r.out.substr(0, r.out.size() - 1);
  }
};

TEST_F(CounterctlShell, ManPageHasEverySubcommandAndFlagHelpShows) {
  const ProcessResult man = CtlRaw({"man"});
  ASSERT_EQ(man.exit_code, 0) << man.err;
  EXPECT_EQ(man.out.rfind(".\\\" Generated", 0), 0u);
  EXPECT_NE(man.out.find(".TH COUNTERCTL 1"), std::string::npos);
  const std::vector<std::string> subs = HelpWords({"help"}, "Subcommands:");
  ASSERT_GE(subs.size(), 30u);
  for (const std::string& sub : subs) {
    std::string escaped;
    for (char c : sub) escaped += c == '-' ? std::string("\\-") : std::string(1, c);
    EXPECT_NE(man.out.find("\n.SS " + escaped), std::string::npos) << sub;
    if (sub == "ldb") continue;  // its flags are ldb's own
    for (const std::string& flag : HelpWords({"help", sub}, "Options:")) {
      // "-h,--help" and "-n,--top"-style pairs: each name is in the page.
      std::stringstream names(flag);
      std::string name;
      while (std::getline(names, name, ',')) {
        if (name == "-h" || name == "--help") continue;
        std::string roff;
        for (char c : name) roff += c == '-' ? std::string("\\-") : std::string(1, c);
        EXPECT_NE(man.out.find("\\fB" + roff + "\\fR"), std::string::npos)
            << sub << " " << name;
      }
    }
  }
}

TEST_F(CounterctlShell, BashCompletionCompletesFromTheGrammar) {
  const std::string script = tmp_.Sub("counterctl.bash");
  const ProcessResult gen = CtlRaw({"completion", "bash"});
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  WriteFile("counterctl.bash", gen.out);

  EXPECT_EQ(Complete(script, {"counterctl", "cre"}), "create");
  // The value of --db is not taken for the subcommand.
  EXPECT_EQ(Complete(script, {"counterctl", "--db", "backup", "ba"}), "backup");
  EXPECT_EQ(Complete(script, {"counterctl", "-d", "x", "backup", ""}),
            "create list verify restore --help");
  EXPECT_EQ(Complete(script, {"counterctl", "incr", "orders", "--b"}), "--by");
  EXPECT_EQ(Complete(script, {"counterctl", "claims", "release", "k", "--t"}),
            "--token");
  EXPECT_EQ(Complete(script, {"counterctl", "help", "wa"}), "wal watch");
  EXPECT_EQ(Complete(script, {"counterctl", "events", "x", "--fo"}),
            "--format");

  const ProcessResult zsh = CtlRaw({"completion", "zsh"});
  EXPECT_EQ(zsh.exit_code, 0);
  EXPECT_EQ(zsh.out.rfind("#compdef counterctl\n", 0), 0u);
  EXPECT_NE(zsh.out.find(gen.out), std::string::npos);
}

TEST_F(CounterctlShell, BadRequestsAreUsageErrors) {
  const ProcessResult fish = CtlRaw({"completion", "fish"});
  EXPECT_EQ(fish.exit_code, 2);
  EXPECT_EQ(fish.err, "counterctl: completion takes one shell: bash or zsh\n");
  const ProcessResult man = CtlRaw({"man", "x"});
  EXPECT_EQ(man.exit_code, 2);
  EXPECT_EQ(man.err, "counterctl: man takes no arguments\n");
}

}  // namespace
}  // namespace tally::test
