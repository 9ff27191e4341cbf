// counterctl wal dump decodes the outbox family and the newer meta keys
// (issue 13): outbox entries, the settled watermark, the acknowledged
// cursor and an acknowledgement's range delete, none of them raw.

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "counterctl_fixture.h"
#include "tally/db.h"
#include "tally/outbox.h"

namespace tally::test {
namespace {

using CounterctlWalOutbox = CounterctlTest;

// 2026-11-30T10:00:00Z.
constexpr int64_t kNow = 1796032800000;

bool HasLineStarting(const std::string& out, const std::string& prefix) {
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

TEST_F(CounterctlWalOutbox, DumpDecodesOutboxEntriesAndTheirCursors) {
  ManualClock clock(kNow);
  {
    Options o;
    o.clock = &clock;
    o.rollup_interval_ms = 0;
    std::unique_ptr<Db> db = OpenOrDie(db_, o);
    ASSERT_NE(db, nullptr);
    ASSERT_OK(db->CreateCounter("out", OutboxSpec(1)));
    ASSERT_OK(db->IncrementOnce("out", "E1", 5));
    ASSERT_OK(db->Increment("out", -2));
    ASSERT_OK(tally::AckOutbox(*db, 1));
  }
  const std::string out = CtlOk({"wal", "dump"});
  const std::string at = "2026-11-30T10:00:00.000Z";
  EXPECT_TRUE(HasLineStarting(
      out, "  outbox-entry seq=1 counter=out event=E1 delta=+5 time=" + at +
               " origin="))
      << out;
  EXPECT_TRUE(HasLineStarting(
      out, "  outbox-entry seq=2 counter=out delta=-2 time=" + at + " origin="))
      << out;
  EXPECT_TRUE(HasLineStarting(out, "  outbox-cursor put acked_through=1"))
      << out;
  EXPECT_TRUE(
      HasLineStarting(out,
                      "  delete-range family=outbox begin=0000000000000001 "
                      "end=0000000000000002"))
      << out;
  EXPECT_EQ(out.find("raw "), std::string::npos) << out;

  // Reopened: the writer records the settled watermark.
  {
    std::unique_ptr<Db> db = OpenOrDie(db_);
    ASSERT_NE(db, nullptr);
  }
  const std::string again = CtlOk({"wal", "dump"});
  EXPECT_TRUE(HasLineStarting(again, "  outbox-settled through=2")) << again;
  EXPECT_EQ(again.find("raw "), std::string::npos) << again;
}

}  // namespace
}  // namespace tally::test
