// Issue 3's done-means: while `counterctl apply` runs in another process,
// `get` and `verify` answer (the value of the lines committed so far,
// every invariant holding), and after it ends `get` gives the final total.
//
// apply reads a feed on stdin that the test holds open: between the chunks
// the test writes, apply is still running (holding the database, waiting
// for more), so every get and verify below runs during it by construction.
// (Issue 28, item 16: it used to apply a file and hope the reads came
// before the end, a race with the machine's speed.)
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "counterctl_fixture.h"
#include "subprocess.h"

namespace tally::test {
namespace {

using CounterctlLive = CounterctlTest;

// The line number of a "committed through line N" progress line; -1 for
// any other line.
long CommittedThrough(const std::string& line) {
  const std::string prefix = "committed through line ";
  if (line.rfind(prefix, 0) != 0) return -1;
  return std::stol(line.substr(prefix.size()));
}

TEST_F(CounterctlLive, GetAndVerifyAnswerDuringApply) {
  constexpr int kChunks = 4;
  constexpr int kPerChunk = 5000;
  CtlOk({"create", "orders", "--shards", "8"});
  LiveProcess apply({COUNTERCTL, "--db", db_, "apply", "--file", "-",
                     "--max-delay", "20ms", "--progress"},
                    tmp_.path());
  ASSERT_TRUE(apply.started());
  long lines = 0;
  for (int c = 0; c < kChunks; ++c) {
    std::ostringstream chunk;
    for (int i = 0; i < kPerChunk; ++i) {
      chunk << R"({"counter":"orders","event_id":"ord-)" << lines++
            << R"(","delta":2})" << "\n";
    }
    ASSERT_TRUE(apply.Write(chunk.str())) << "apply ended";
    // Every line of the chunk committed; apply waits for the next one.
    for (long through = 0; through < lines;) {
      std::string line;
      ASSERT_TRUE(apply.ReadLine(&line)) << "apply ended";
      through = CommittedThrough(line);
      ASSERT_GE(through, 0) << line;
      ASSERT_LE(through, lines) << line;
    }
    // Read beside the live writer: exactly what it committed.
    EXPECT_EQ(CtlValue({"get", "orders"}), std::to_string(2 * lines));
    // Exit 0: shard sums equal marker sums at this point.
    const ProcessResult verify = Ctl({"verify"});
    EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
  }
  const ProcessResult r = apply.Wait();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "applied=" + std::to_string(lines) +
                       " duplicates=0 conflicts=0 outside_window=0 "
                       "rejected=0 lines=" +
                       std::to_string(lines) + "\n");
  EXPECT_EQ(CtlValue({"get", "orders"}), std::to_string(2 * lines));
  EXPECT_EQ(CtlValue({"events", "orders", "--count"}), std::to_string(lines));
}

}  // namespace
}  // namespace tally::test
