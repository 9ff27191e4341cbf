// The crash test's quick mode: 20 SIGKILL cycles of the crash writer without
// and with sync, every invariant of crash_check.h checked after each kill.
// The long mode is tally_crash_driver (docs/reliability.md).

#include <gtest/gtest.h>

#include <random>

#include "crash/crash_check.h"
#include "testutil/testutil.h"

namespace tally {
namespace {

void RunQuick(bool sync) {
  test::TempDir dir;
  crash::CrashConfig config;
  config.writer = TALLY_CRASH_WRITER;
  config.dir = dir.path();
  config.cycles = 20;
  config.sync = sync;
  config.seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(config.seed));
  crash::CrashReport report = crash::RunCrashCycles(config);
  for (const std::string& v : report.violations) ADD_FAILURE() << v;
  EXPECT_EQ(report.cycles, config.cycles);
  EXPECT_GT(report.acknowledged, 0u);
  EXPECT_GT(report.checks, report.acknowledged);
  EXPECT_GT(report.reader_points, 0u) << "the read-only reader verified";
  ::testing::Test::RecordProperty("reader_points",
                                  static_cast<int>(report.reader_points));
  ::testing::Test::RecordProperty("cycles", report.cycles);
  ::testing::Test::RecordProperty("invariant_checks",
                                  static_cast<int>(report.checks));
}

TEST(Crash, KilledWriterLosesAndDoublesNothing) { RunQuick(/*sync=*/false); }

TEST(Crash, KilledSyncWriterLosesAndDoublesNothing) { RunQuick(/*sync=*/true); }

}  // namespace
}  // namespace tally
