// counterctl apply stopped and continued, and fed live (issue 18):
//  - SIGINT (and SIGTERM) in the middle of a large file: the batches in
//    flight are finished, the summary and one line naming the committed
//    lines are printed, the exit code is 128 + the signal; a second run
//    with --skip L ends with every counter exactly as one whole run leaves
//    it, plain increments included;
//  - --file - applies each line while the feed is still open (within
//    --max-delay), so a slow feed is counted as it goes, before EOF.
// The kill point is chosen from what apply reports (--progress), never by
// sleeping.

#include <gtest/gtest.h>
#include <signal.h>

#include <nlohmann/json.hpp>
#include <fstream>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "counterctl_fixture.h"
#include "subprocess.h"
#include "tally/db.h"
#include "testutil/sanitized.h"

namespace tally::test {
namespace {

// Under the sanitizers counterctl runs 5-10x slower: fewer lines still
// leave it far from done when the first batch is reported.
constexpr int kLines = kSanitized ? 50000 : 200000;

class CounterctlApplyStop : public CounterctlTest {
 protected:
  // orders: once-increments, each event twice; views: plain increments.
  std::string WriteInput() {
    std::string text;
    text.reserve(kLines * 48);
    for (int i = 0; i < kLines; ++i) {
      if (i % 3 == 0) {
        text += "{\"counter\":\"orders\",\"event_id\":\"e" +
                std::to_string((i / 3) % (kLines / 6)) + "\",\"delta\":1}\n";
      } else {
        text += "{\"counter\":\"views\",\"delta\":" + std::to_string(1 + i % 5) +
                "}\n";
      }
    }
    return WriteFile("in.jsonl", text);
  }
  void Create(const std::string& db) {
    CtlOnOk(db, {"create", "orders", "--shards", "4"});
    CtlOnOk(db, {"create", "views", "--shards", "4"});
  }
  std::vector<std::string> Values(const std::string& db) {
    // (Plain increments pick their shards at random: totals, not shards.)
    return {CtlOnOk(db, {"get", "orders"}), CtlOnOk(db, {"get", "views"}),
            CtlOnOk(db, {"events", "orders", "--count"})};
  }

  // Stops an apply of the whole input by `sig` once it reports a committed
  // line, continues it with --skip, and compares with one whole run.
  void StopAndContinue(int sig, const std::string& name) {
    const std::string in = WriteInput();
    const std::string whole = tmp_.Sub("whole");
    Create(whole);
    ASSERT_EQ(CtlOn(whole, {"apply", "--file", in}).exit_code, 0);

    Create(db_);
    LiveProcess apply({COUNTERCTL, "--db", db_, "apply", "--file", in,
                       "--batch", "500", "--threads", "2", "--progress"},
                      tmp_.path());
    ASSERT_TRUE(apply.started());
    std::string line;
    ASSERT_TRUE(apply.ReadLine(&line)) << "apply ended before a batch";
    EXPECT_EQ(line.rfind("committed through line ", 0), 0u) << line;
    apply.Signal(sig);
    const ProcessResult r = apply.Wait();
    ASSERT_EQ(r.exit_code, 128 + sig) << r.out << r.err;
    std::smatch m;
    const std::regex stopped("counterctl: interrupted by " + name +
                             ": lines 1\\.\\.([0-9]+) are committed \\(the "
                             "batches in flight were finished\\); continue "
                             "with --skip ([0-9]+)\n");
    ASSERT_TRUE(std::regex_match(r.err, m, stopped)) << r.err;
    EXPECT_EQ(m[1], m[2]);
    const int committed = std::stoi(m[1]);
    EXPECT_GT(committed, 0);
    EXPECT_LT(committed, kLines) << "stopped too late to show anything";
    EXPECT_EQ(committed % 500, 0) << "whole batches only";
    // The summary counts exactly the committed lines.
    EXPECT_NE(r.out.find(" lines=" + std::to_string(committed) + "\n"),
              std::string::npos)
        << r.out;

    const ProcessResult rest = Ctl({"apply", "--file", in, "--skip", m[1]});
    ASSERT_EQ(rest.exit_code, 0) << rest.err;
    EXPECT_NE(rest.out.find(" lines=" + std::to_string(kLines - committed)),
              std::string::npos)
        << rest.out;
    EXPECT_EQ(Values(db_), Values(whole));
  }
};

TEST_F(CounterctlApplyStop, SigintThenSkipCountsEveryLineOnce) {
  StopAndContinue(SIGINT, "SIGINT");
}

TEST_F(CounterctlApplyStop, SigtermThenSkipCountsEveryLineOnce) {
  StopAndContinue(SIGTERM, "SIGTERM");
}

// Each line of a feed that stays open is committed, and readable by
// another process, before the next one is written.
TEST_F(CounterctlApplyStop, AFeedIsCountedLineByLineBeforeEof) {
  Create(db_);
  LiveProcess apply({COUNTERCTL, "--db", db_, "apply", "--file", "-",
                     "--max-delay", "20ms", "--progress"},
                    tmp_.path());
  ASSERT_TRUE(apply.started());
  for (int i = 1; i <= 3; ++i) {
    ASSERT_TRUE(apply.Write("{\"counter\":\"views\",\"delta\":" +
                            std::to_string(i) + "}\n"));
    std::string line;
    ASSERT_TRUE(apply.ReadLine(&line)) << "apply ended";
    EXPECT_EQ(line, "committed through line " + std::to_string(i));
    // Read beside the writer, which still holds the database.
    EXPECT_EQ(CtlValue({"get", "views"}), std::to_string(i * (i + 1) / 2));
  }
  // A last line without its newline counts at EOF.
  ASSERT_TRUE(apply.Write("{\"counter\":\"views\",\"delta\":4}"));
  const ProcessResult r = apply.Wait();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "committed through line 4\n"
            "applied=4 duplicates=0 conflicts=0 outside_window=0 rejected=0 "
            "lines=4\n");
  EXPECT_EQ(CtlValue({"get", "views"}), "10");
}

// A feed stopped by SIGINT commits what it read and says so.
TEST_F(CounterctlApplyStop, AFeedStopsOnSigint) {
  Create(db_);
  LiveProcess apply({COUNTERCTL, "--db", db_, "apply", "--file", "-",
                     "--max-delay", "20ms", "--progress"},
                    tmp_.path());
  ASSERT_TRUE(apply.Write("{\"counter\":\"views\",\"delta\":5}\n"));
  std::string line;
  ASSERT_TRUE(apply.ReadLine(&line));
  EXPECT_EQ(line, "committed through line 1");
  apply.Signal(SIGINT);
  // Stdin stays open: the stop alone must end the feed (closing it raced
  // the signal: end-of-input could win, then exit 0).
  const ProcessResult r = apply.Wait(/*close_stdin=*/false);
  EXPECT_EQ(r.exit_code, 130) << r.err;
  EXPECT_EQ(r.err,
            "counterctl: interrupted by SIGINT: lines 1..1 are committed (the "
            "batches in flight were finished); stdin was not read further\n");
  EXPECT_EQ(CtlValue({"get", "views"}), "5");
}

// apply --json: the summary as one document (issue 18).
TEST_F(CounterctlApplyStop, JsonSummary) {
  Create(db_);
  const std::string in = WriteFile(
      "three.jsonl",
      "{\"counter\":\"orders\",\"event_id\":\"a\"}\n"
      "{\"counter\":\"orders\",\"event_id\":\"a\"}\n"
      "{\"counter\":\"views\",\"delta\":4}\n");
  nlohmann::json doc = CtlJson({"apply", "--file", in});
  EXPECT_EQ(doc["applied"], 2);
  EXPECT_EQ(doc["duplicates"], 1);
  EXPECT_EQ(doc["rejected"], 0);
  EXPECT_EQ(doc["lines"], 3);
  EXPECT_EQ(doc["committed_through"], 3);
  EXPECT_EQ(doc["stopped"], false);
  EXPECT_EQ(CtlValue({"get", "views"}), "4");
}

TEST_F(CounterctlApplyStop, BadFlagsAreOneLine) {
  Create(db_);
  const std::string in = WriteFile("small.jsonl", "{\"counter\":\"views\"}\n");
  const ProcessResult skip = Ctl({"apply", "--file", in, "--skip", "2"});
  EXPECT_EQ(skip.exit_code, 2);
  EXPECT_EQ(skip.err, "counterctl: --skip 2: " + in + " has only 1 lines\n");
  const ProcessResult neg = Ctl({"apply", "--file", in, "--skip", "-1"});
  EXPECT_EQ(neg.exit_code, 2);
  EXPECT_EQ(neg.err,
            "counterctl: --skip -1: expected a count of lines, an integer of "
            "at least 0\n");
  const ProcessResult delay =
      Ctl({"apply", "--file", "-", "--max-delay", "2m"});
  EXPECT_EQ(delay.exit_code, 2);
  EXPECT_EQ(delay.err,
            "counterctl: --max-delay 2m: expected a duration of 1ms..60s, "
            "such as 100ms\n");
  const ProcessResult feed = Ctl({"apply", "--file", "-", "--skip", "1"});
  EXPECT_EQ(feed.exit_code, 2);
  EXPECT_EQ(CtlValue({"get", "views"}), "0");
}

}  // namespace
}  // namespace tally::test
