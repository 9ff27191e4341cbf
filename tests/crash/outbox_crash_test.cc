// The outbox power-cut crash test's quick mode (issue 12, item 4): SIGKILL
// cycles of an edge syncing into a hub, each followed by a modelled power
// cut on the edge; every invariant of outbox_check.h checked after each.

#include <gtest/gtest.h>

#include <random>

#include "crash/outbox_check.h"
#include "testutil/testutil.h"

namespace tally {
namespace {

TEST(Crash, Item04_EdgePowerCutNeverReusesOutboxIdentities) {
  test::TempDir dir;
  crash::OutboxCrashConfig config;
  config.writer = TALLY_CRASH_OUTBOX_WRITER;
  config.dir = dir.path();
  config.cycles = 10;
  config.seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(config.seed));
  crash::OutboxCrashReport report = crash::RunOutboxPowerCutCycles(config);
  for (const std::string& v : report.violations) ADD_FAILURE() << v;
  EXPECT_EQ(report.cycles, config.cycles);
  EXPECT_GT(report.checks, 0u);
  ::testing::Test::RecordProperty("cycles", report.cycles);
  ::testing::Test::RecordProperty("invariant_checks",
                                  static_cast<int>(report.checks));
  ::testing::Test::RecordProperty("cut_entries_on_hub",
                                  static_cast<int>(report.cut_entries));
}

}  // namespace
}  // namespace tally
