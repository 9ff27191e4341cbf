#include "cli_spec.h"

#include <set>
#include <string>
#include <vector>

namespace counterctl {
namespace {

std::string Join(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

std::vector<std::string> Flags(const CommandSpec& c) {
  std::vector<std::string> out;
  for (const OptionSpec& o : c.options) {
    out.insert(out.end(), o.names.begin(), o.names.end());
  }
  out.push_back("--help");
  return out;
}

std::vector<std::string> Names(const std::vector<CommandSpec>& commands) {
  std::vector<std::string> out;
  for (const CommandSpec& c : commands) {
    out.push_back(c.name);
    out.insert(out.end(), c.aliases.begin(), c.aliases.end());
  }
  return out;
}

void CollectValueOptions(const CommandSpec& c, std::set<std::string>* out) {
  for (const OptionSpec& o : c.options) {
    if (!o.value.empty() && !o.positional) out->insert(o.names.begin(), o.names.end());
  }
  for (const CommandSpec& s : c.subcommands) CollectValueOptions(s, out);
}

std::string CasePattern(const CommandSpec& c) {
  std::string p = c.name;
  for (const std::string& a : c.aliases) p += "|" + a;
  return p;
}

// roff: a leading '.' or '\'' would be a request; '-' a hyphen, not a minus.
std::string Roff(const std::string& text) {
  std::string out;
  for (const char ch : text) {
    if (ch == '\\') {
      out += "\\e";
    } else if (ch == '-') {
      out += "\\-";
    } else {
      out += ch;
    }
  }
  if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out = "\\&" + out;
  return out;
}

void ManOptions(const std::vector<OptionSpec>& options, std::string* out) {
  for (const OptionSpec& o : options) {
    if (o.positional) continue;
    std::string names;
    for (const std::string& n : o.names) {
      names += (names.empty() ? "" : ", ") + ("\\fB" + Roff(n) + "\\fR");
    }
    if (!o.value.empty()) names += " \\fI" + Roff(o.value) + "\\fR";
    *out += ".TP\n" + names + "\n" + Roff(o.description) + "\n";
  }
}

// "counterctl: inspect ..." (the --help title) without the name.
std::string Summary(const std::string& description) {
  const std::string prefix = "counterctl: ";
  return description.rfind(prefix, 0) == 0 ? description.substr(prefix.size())
                                           : description;
}

std::string Usage(const CommandSpec& c, const std::string& prefix) {
  std::string line = prefix + c.name;
  for (const OptionSpec& o : c.options) {
    if (o.positional) line += " " + o.value;
  }
  if (!c.subcommands.empty()) line += " ACTION";
  return line;
}

}  // namespace

std::string BashCompletion(const CommandSpec& root) {
  std::set<std::string> value_options;
  CollectValueOptions(root, &value_options);
  std::string s =
      "# bash completion for counterctl, generated from its command-line\n"
      "# definition (counterctl completion bash). Source it, or install it\n"
      "# as bash-completion/completions/counterctl.\n"
      "_counterctl() {\n"
      "  local cur=\"${COMP_WORDS[COMP_CWORD]}\"\n"
      "  local prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n"
      "  case \"$prev\" in\n"
      "    --db|-d|--file|--to) COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n"
      "  esac\n"
      "  # Options that take a value: their value is not a subcommand.\n"
      "  local takes=\" " + Join({value_options.begin(), value_options.end()}) +
      " \"\n"
      "  local sub=\"\" act=\"\" skip=\"\" w i\n"
      "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
      "    w=\"${COMP_WORDS[i]}\"\n"
      "    if [[ -n $skip ]]; then skip=\"\"; continue; fi\n"
      "    if [[ $takes == *\" $w \"* ]]; then skip=1; continue; fi\n"
      "    [[ $w == -* ]] && continue\n"
      "    if [[ -z $sub ]]; then sub=\"$w\"; elif [[ -z $act ]]; then act=\"$w\"; fi\n"
      "  done\n"
      "  local words\n"
      "  case \"$sub\" in\n"
      "    \"\") words=\"" + Join(Names(root.subcommands)) + " help completion man " +
      Join(Flags(root)) + " --version\" ;;\n"
      "    help) words=\"" + Join(Names(root.subcommands)) + "\" ;;\n"
      "    completion) words=\"bash zsh\" ;;\n";
  for (const CommandSpec& c : root.subcommands) {
    s += "    " + CasePattern(c) + ")\n";
    if (c.subcommands.empty()) {
      s += "      words=\"" + Join(Flags(c)) + "\" ;;\n";
      continue;
    }
    s += "      case \"$act\" in\n";
    s += "        \"\") words=\"" + Join(Names(c.subcommands)) + " " +
         Join(Flags(c)) + "\" ;;\n";
    for (const CommandSpec& a : c.subcommands) {
      s += "        " + CasePattern(a) + ") words=\"" + Join(Flags(a)) +
           "\" ;;\n";
    }
    s += "      esac ;;\n";
  }
  s +=
      "  esac\n"
      "  COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
      "}\n"
      "complete -o default -F _counterctl counterctl\n";
  return s;
}

std::string ZshCompletion(const CommandSpec& root) {
  return "#compdef counterctl\n"
         "# zsh completion for counterctl (counterctl completion zsh): the\n"
         "# bash function below, through zsh's bashcompinit.\n"
         "autoload -U +X bashcompinit && bashcompinit\n" +
         BashCompletion(root);
}

std::string ManPage(const CommandSpec& root, const std::string& version) {
  std::string m =
      ".\\\" Generated from counterctl's command-line definition "
      "(counterctl man).\n"
      ".TH COUNTERCTL 1 \"\" \"" + Roff(version) + "\" \"User Commands\"\n"
      ".SH NAME\n"
      "counterctl \\- " + Roff(Summary(root.description)) + "\n"
      ".SH SYNOPSIS\n"
      ".B counterctl\n"
      "[\\fB\\-\\-db\\fR \\fIDIR\\fR] \\fISUBCOMMAND\\fR [\\fIARGS\\fR] "
      "[\\fIFLAGS\\fR]\n"
      ".br\n"
      ".B counterctl help\n"
      "[\\fISUBCOMMAND\\fR]\n"
      ".br\n"
      ".B counterctl completion\n"
      "\\fBbash\\fR|\\fBzsh\\fR\n"
      ".br\n"
      ".B counterctl man\n"
      ".SH DESCRIPTION\n"
      "counterctl inspects and changes a tally database from the shell. The "
      "database is named by \\fB\\-\\-db\\fR (or \\fB\\-d\\fR), before or "
      "after the subcommand, or by \\fBTALLY_DB\\fR. Results go to stdout; "
      "every error is one line on stderr starting with \"counterctl: \".\n"
      ".SH OPTIONS\n";
  ManOptions(root.options, &m);
  m += ".SH SUBCOMMANDS\n";
  for (const CommandSpec& c : root.subcommands) {
    m += ".SS " + Roff(Usage(c, "")) + "\n" + Roff(c.description) + "\n";
    if (!c.aliases.empty()) m += "Alias: " + Roff(Join(c.aliases)) + ".\n";
    ManOptions(c.options, &m);
    for (const CommandSpec& a : c.subcommands) {
      m += ".TP\n\\fB" + Roff(Usage(a, c.name + " ")) + "\\fR\n" +
           Roff(a.description) + "\n";
      ManOptions(a.options, &m);
    }
  }
  m +=
      ".SH EXIT STATUS\n"
      ".TP\n0\nsuccess\n"
      ".TP\n1\na tally operation failed\n"
      ".TP\n2\nusage error\n"
      ".TP\n3\n\\fBverify\\fR found a broken invariant\n"
      ".TP\n130, 143\n\\fBapply\\fR stopped by SIGINT or SIGTERM (128 + "
      "the signal) after committing the batches it had started\n"
      ".SH ENVIRONMENT\n"
      ".TP\n.B TALLY_DB\nthe database when no \\fB\\-\\-db\\fR is given\n"
      ".SH SEE ALSO\n"
      "docs/counterctl.md in the tally source tree.\n";
  return m;
}

}  // namespace counterctl
