// counterctl's progress line (issue 18): the text it draws (rate, percent,
// time left, in the unit that moves), and that the long subcommands draw it
// on a terminal, never into a pipe, and not with --quiet. The terminal is a
// real pseudo-terminal on the child's stderr.

#include <fcntl.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

#include "counterctl_fixture.h"
#include "progress.h"

namespace tally::test {
namespace {

using counterctl::ProgressState;
using counterctl::ProgressText;

TEST(ProgressText, KnownTotalShowsPercentRateAndTimeLeft) {
  ProgressState p{"apply", "lines", 24000, 300000, false, 2.0};
  EXPECT_EQ(ProgressText(p), "apply: 24000/300000 lines 8% [#" +
                                 std::string(23, ' ') +
                                 "] 12.0k lines/s, 23s left");
  p.done = 300000;
  p.elapsed_s = 25;
  EXPECT_EQ(ProgressText(p), "apply: 300000/300000 lines 100% [" +
                                 std::string(24, '#') + "] 12.0k lines/s");
}

TEST(ProgressText, AnEstimateIsMarkedAndNeverReaches100) {
  ProgressState p{"export", "records", 5000, 4000, true, 1.0};
  EXPECT_EQ(ProgressText(p), "export: 5000/~4000 records 99% [" +
                                 std::string(23, '#') + " ] 5.0k records/s");
}

TEST(ProgressText, BytesReadAsSizes) {
  ProgressState p{"compact", "bytes", 12u << 20, 40u << 20, false, 1.5};
  EXPECT_EQ(ProgressText(p), "compact: 12.0 MiB/40.0 MiB 30% [#######" +
                                 std::string(17, ' ') +
                                 "] 8.0 MiB/s, 4s left");
}

TEST(ProgressText, UnknownTotalShowsCountAndRateOnly) {
  ProgressState p{"sync", "entries", 3000, 0, false, 2.0};
  EXPECT_EQ(ProgressText(p), "sync: 3000 entries 1.5k entries/s");
  // No rate before half a second: too little behind it to mean anything.
  p.elapsed_s = 0.1;
  EXPECT_EQ(ProgressText(p), "sync: 3000 entries");
}

TEST(ProgressText, ShortFormsOfCountsAndDurations) {
  EXPECT_EQ(counterctl::ShortCount(950), "950");
  EXPECT_EQ(counterctl::ShortCount(4.5e6), "4.5M");
  EXPECT_EQ(counterctl::ShortDuration(125), "2m05s");
  EXPECT_EQ(counterctl::ShortDuration(7260), "2h01m");
  EXPECT_EQ(counterctl::ShortBytes(900), "900 B");
  EXPECT_EQ(counterctl::ShortBytes(1536), "1.5 KiB");
}

struct PtyResult {
  int exit_code = -1;
  std::string tty;  // what the child wrote to its terminal stderr
  std::string out;  // its stdout
};

// Runs argv with stderr on a new pseudo-terminal and stdout on a pipe.
PtyResult RunWithTerminalStderr(const std::vector<std::string>& argv) {
  PtyResult r;
  int master = -1, slave = -1;
  if (openpty(&master, &slave, nullptr, nullptr, nullptr) != 0) {
    ADD_FAILURE() << "openpty failed: errno " << errno;
    return r;
  }
  int out[2];
  if (pipe(out) != 0) {
    ADD_FAILURE() << "pipe failed";
    return r;
  }
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(slave, STDERR_FILENO);
    dup2(out[1], STDOUT_FILENO);
    const int devnull = open("/dev/null", O_RDONLY);
    dup2(devnull, STDIN_FILENO);
    close(master);
    close(slave);
    close(out[0]);
    close(out[1]);
    alarm(120);  // a hung child fails the test instead of hanging it
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  close(slave);
  close(out[1]);
  // Read both until the child is gone: the pty reports EIO once the last
  // slave descriptor closes; stdout ends at EOF.
  char buf[4096];
  bool tty_open = true, out_open = true;
  while (tty_open || out_open) {
    if (out_open) {
      const ssize_t n = read(out[0], buf, sizeof(buf));
      if (n > 0) r.out.append(buf, static_cast<size_t>(n));
      if (n == 0 || (n < 0 && errno != EINTR)) out_open = false;
      if (n > 0) continue;
    }
    if (tty_open) {
      const ssize_t n = read(master, buf, sizeof(buf));
      if (n > 0) r.tty.append(buf, static_cast<size_t>(n));
      if (n == 0 || (n < 0 && errno != EINTR)) tty_open = false;
    }
  }
  close(master);
  close(out[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

class CounterctlProgress : public CounterctlTest {
 protected:
  PtyResult OnTerminal(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {COUNTERCTL, "--db", db_};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunWithTerminalStderr(argv);
  }
};

TEST_F(CounterctlProgress, LongCommandsDrawOnATerminalInTheirUnit) {
  CtlOk({"create", "orders", "--shards", "4"});
  std::string lines;
  for (int i = 0; i < 20000; ++i) {
    lines += "{\"counter\":\"orders\",\"event_id\":\"e" + std::to_string(i) +
             "\"}\n";
  }
  const std::string file = WriteFile("orders.jsonl", lines);
  const std::string exported = tmp_.Sub("orders.export");
  struct Case {
    std::vector<std::string> args;
    std::string drawn;  // the start of the progress line
  };
  const std::vector<Case> cases = {
      // Bytes of the file (it is read as it goes, never counted first).
      {{"apply", "--file", file}, "apply: 0 B/"},
      {{"verify"}, "verify: 0/~"},
      {{"compact"}, "compact: 0 B/"},
      {{"export", exported}, "export: 2/~"},  // RocksDB's estimate
  };
  for (const Case& c : cases) {
    const PtyResult r = OnTerminal(c.args);
    EXPECT_EQ(r.exit_code, 0) << c.args[0] << ": " << r.tty;
    EXPECT_NE(r.tty.find("\r" + c.drawn), std::string::npos)
        << c.args[0] << " drew: " << r.tty;
    // Cleared at the end, so the result starts on a clean line.
    EXPECT_NE(r.tty.rfind("\r\x1b[K"), std::string::npos) << c.args[0];
    EXPECT_NE(r.out, "") << c.args[0];
  }
  EXPECT_EQ(CtlValue({"get", "orders"}), "20000");

  const std::string target = tmp_.Sub("copy");
  const PtyResult imported = RunWithTerminalStderr(
      {COUNTERCTL, "--db", target, "import", exported});
  EXPECT_EQ(imported.exit_code, 0) << imported.tty;
  // 1 counter record, 4 shard values, 20000 markers.
  EXPECT_NE(imported.tty.find("\rimport: 0/20005 records 0% ["),
            std::string::npos)
      << imported.tty;
}

// Its own test, named for scripts/dev's TSAN pass, which leaves backups out
// (RocksDB's BackupEngine copies on threads TSAN cannot see).
TEST_F(CounterctlProgress, BackupDrawsBytesOnATerminal) {
  CtlOk({"create", "orders", "--shards", "4"});
  CtlOk({"incr", "orders", "--by", "3"});
  const PtyResult r = OnTerminal({"backup", "create", tmp_.Sub("backups")});
  EXPECT_EQ(r.exit_code, 0) << r.tty;
  EXPECT_NE(r.tty.find("\rbackup: 0 B/~"), std::string::npos) << r.tty;
  EXPECT_NE(r.tty.rfind("\r\x1b[K"), std::string::npos);
  EXPECT_NE(r.out.find("backup 1 created"), std::string::npos) << r.out;
}

TEST_F(CounterctlProgress, QuietAndPipesDrawNothing) {
  CtlOk({"create", "orders", "--shards", "4"});
  std::string lines;
  for (int i = 0; i < 2000; ++i) lines += "{\"counter\":\"orders\"}\n";
  const std::string file = WriteFile("orders.jsonl", lines);
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{
           {"--quiet", "apply", "--file", file},
           {"apply", "--file", file, "-q"},
           {"--quiet", "verify"},
           {"compact", "--quiet"}}) {
    const PtyResult r = OnTerminal(args);
    EXPECT_EQ(r.exit_code, 0) << r.tty;
    EXPECT_EQ(r.tty, "") << args[0];
  }
  // stderr a file (RunProcess): nothing but errors, and here none.
  const ProcessResult piped = Ctl({"apply", "--file", file});
  EXPECT_EQ(piped.exit_code, 0);
  EXPECT_EQ(piped.err, "");
  EXPECT_EQ(CtlValue({"get", "orders"}), "6000");
}

}  // namespace
}  // namespace tally::test
