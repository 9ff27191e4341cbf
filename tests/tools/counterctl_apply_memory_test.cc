// counterctl apply streams its input (issue 28, item 11): a file larger
// than apply's memory bound is applied with a peak RSS under that bound,
// read from a path (several threads) and from stdin, and every line counts.
// Before, `apply --file F` read F whole: its RSS grew with the file (82 MB
// for this test's 64 MB file), which this test catches.

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "apply_input.h"
#include "counterctl_fixture.h"
#include "subprocess.h"
#include "testutil/sanitized.h"

namespace tally::test {
namespace {

// The input: 500,000 plain increments of ~128 bytes, 64 MB, over four
// counters with long names (long lines make a large file of few lines).
constexpr int kLines = 500'000;
constexpr int kCounters = 4;
// The peak RSS allowed: the database's own memory (RocksDB's block cache,
// memtables and the process, ~20 MiB here: plain increments fold into one
// write per shard and batch) plus apply's bound for --threads 2 --batch
// 1000 (2 x (kApplyChunkBytes + 1000 x ~1 KiB), apply_input.h), with room
// to spare, and well under the file's size: a run that held the file would
// need more than the file.
constexpr long kRssLimitKb = 40 << 10;

std::string CounterName(int i) {
  return "page-views-" + std::string(90, 'x') + "-" + std::to_string(i);
}

class CounterctlApplyMemory : public CounterctlTest {
 protected:
  // Writes the input; returns its path and sets the expected sums.
  std::string WriteInput(std::vector<int64_t>* sums) {
    const std::string path = tmp_.Sub("big.jsonl");
    std::ofstream out(path, std::ios::binary);
    sums->assign(kCounters, 0);
    std::string line;
    for (int i = 0; i < kLines; ++i) {
      const int delta = 1 + i % 7;
      line = "{\"counter\":\"" + CounterName(i % kCounters) +
             "\",\"delta\":" + std::to_string(delta) + "}\n";
      out << line;
      (*sums)[i % kCounters] += delta;
    }
    out.close();
    EXPECT_TRUE(out.good());
    return path;
  }
  void Create(const std::string& db) {
    for (int i = 0; i < kCounters; ++i) {
      CtlOnOk(db, {"create", CounterName(i), "--shards", "2"});
    }
  }
  void ExpectSums(const std::string& db, const std::vector<int64_t>& sums) {
    for (int i = 0; i < kCounters; ++i) {
      EXPECT_EQ(CtlOnOk(db, {"get", CounterName(i)}),
                std::to_string(sums[i]) + "\n")
          << CounterName(i);
    }
  }
};

TEST_F(CounterctlApplyMemory, ALargeFileIsAppliedInBoundedMemory) {
  if (kSanitized) GTEST_SKIP() << "the sanitizers' own memory hides apply's";
  std::vector<int64_t> sums;
  const std::string in = WriteInput(&sums);
  std::ifstream size_of(in, std::ios::binary | std::ios::ate);
  const long file_kb = static_cast<long>(size_of.tellg()) / 1024;
  ASSERT_GT(file_kb, kRssLimitKb) << "the file must be larger than the bound";
  const std::string summary =
      "applied=" + std::to_string(kLines) +
      " duplicates=0 conflicts=0 outside_window=0 rejected=0 lines=" +
      std::to_string(kLines) + "\n";

  struct Case {
    std::string db;
    std::vector<std::string> args;
    std::string stdin_path;
  };
  const std::vector<Case> cases = {
      // From the path, two threads.
      {db_, {"--file", in, "--threads", "2"}, "/dev/null"},
      // From stdin.
      {tmp_.Sub("fed"), {"--file", "-"}, in},
  };
  for (const Case& c : cases) {
    Create(c.db);
    std::vector<std::string> argv = {COUNTERCTL, "--db", c.db, "apply",
                                     "--batch", "1000"};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    const ProcessResult r = RunProcess(argv, tmp_.path(), 120, c.stdin_path);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, summary);
    EXPECT_LT(r.max_rss_kb, kRssLimitKb)
        << "apply --file " << c.args[1] << " held " << r.max_rss_kb
        << " KiB for a " << file_kb << " KiB input";
    ExpectSums(c.db, sums);
  }
}

// A line longer than kMaxApplyLineBytes is rejected without being held,
// and the lines around it count; so does a file without any line end.
TEST_F(CounterctlApplyMemory, AnOverlongLineIsRejectedAndTheRestCounts) {
  CtlOk({"create", "views", "--shards", "2"});
  // Runs apply on `file` (stdin from `in`) and checks that exactly line
  // `line` was rejected as too long and `applied` lines counted.
  auto expect = [this](const std::string& file, const std::string& in,
                       int line, int applied) {
    const ProcessResult r = RunProcess(
        {COUNTERCTL, "--db", db_, "apply", "--file", file}, tmp_.path(), 120,
        in);
    EXPECT_EQ(r.exit_code, 1) << file;
    EXPECT_EQ(r.err, "counterctl: " + file + ":" + std::to_string(line) +
                         ": line is longer than " +
                         std::to_string(counterctl::kMaxApplyLineBytes) +
                         " bytes\n");
    EXPECT_EQ(r.out, "applied=" + std::to_string(applied) +
                         " duplicates=0 conflicts=0 outside_window=0 "
                         "rejected=1 lines=" +
                         std::to_string(applied + 1) + "\n");
  };
  const std::string pad(counterctl::kMaxApplyLineBytes, ' ');
  const std::string in = WriteFile(
      "long.jsonl", "{\"counter\":\"views\",\"delta\":1}\n"
                    "{\"counter\":\"views\"," + pad + "\"delta\":10}\n"
                    "{\"counter\":\"views\",\"delta\":100}\n");
  expect(in, "/dev/null", 2, 2);
  EXPECT_EQ(CtlValue({"get", "views"}), "101");

  // No line end at all: one line, too long, from a path and from stdin.
  const std::string endless =
      WriteFile("endless.jsonl", std::string(3 << 20, '{'));
  expect(endless, "/dev/null", 1, 0);
  expect("-", endless, 1, 0);
  EXPECT_EQ(CtlValue({"get", "views"}), "101");
}

}  // namespace
}  // namespace tally::test
