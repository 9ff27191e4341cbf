// The crash test's quick mode: 20 SIGKILL cycles (10 under the sanitizers)
// of the crash writer without and with sync (every other one of those also
// a modelled power cut), and 12 of an import (issue 12, item 6; issue 28,
// item 13), every invariant of crash_check.h checked after each kill. The
// long mode is tally_crash_driver (docs/reliability.md).

#include <gtest/gtest.h>

#include <random>

#include "crash/crash_check.h"
#include "testutil/sanitized.h"
#include "testutil/testutil.h"

namespace tally {
namespace {

// Kill cycles per test: fewer under the sanitizers (testutil/sanitized.h);
// tally_crash_driver is the long mode.
constexpr int kCycles = test::kSanitized ? 6 : 20;

// Runs `cycles` cycles (of an import when `import`) and fails on any
// violation.
crash::CrashReport RunQuick(bool sync, bool import, int cycles) {
  test::TempDir dir;
  crash::CrashConfig config;
  config.writer = TALLY_CRASH_WRITER;
  config.dir = dir.path();
  config.cycles = cycles;
  config.sync = sync;
  config.import = import;
  config.seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(config.seed));
  crash::CrashReport report =
      import ? crash::RunImportCycles(config) : crash::RunCrashCycles(config);
  for (const std::string& v : report.violations) ADD_FAILURE() << v;
  EXPECT_GT(report.acknowledged, 0u);
  ::testing::Test::RecordProperty("cycles", report.cycles);
  ::testing::Test::RecordProperty("invariant_checks",
                                  static_cast<int>(report.checks));
  ::testing::Test::RecordProperty("keys_checked",
                                  static_cast<int>(report.keys_checked));
  return report;
}

TEST(Crash, KilledWriterLosesAndDoublesNothing) {
  crash::CrashReport r = RunQuick(/*sync=*/false, /*import=*/false, kCycles);
  EXPECT_EQ(r.cycles, kCycles);
  EXPECT_GT(r.checks, r.acknowledged);
  EXPECT_GT(r.keys_checked, 0u) << "the keyed counters were checked";
  // Points verified with the writer live may be none when every round was
  // Busy (a flush each few ms under TSAN); one per cycle with it stopped.
  EXPECT_EQ(r.reader_stopped_points, static_cast<uint64_t>(kCycles))
      << "the read-only reader verified beside each stopped writer";
  ::testing::Test::RecordProperty("reader_points",
                                  static_cast<int>(r.reader_points));
}

// With sync every other kill is also a modelled power cut (each WAL cut to
// its last sync): every acknowledged answer must hold after it too.
TEST(Crash, KilledSyncWriterLosesAndDoublesNothing) {
  crash::CrashReport r = RunQuick(/*sync=*/true, /*import=*/false, kCycles);
  EXPECT_EQ(r.cycles, kCycles);
  EXPECT_EQ(r.power_cuts, static_cast<uint64_t>(kCycles / 2));
  ::testing::Test::RecordProperty("cut_wal_bytes",
                                  static_cast<int>(r.cut_wal_bytes));
  EXPECT_GT(r.checks, r.acknowledged);
  EXPECT_GT(r.keys_checked, 0u) << "the keyed counters were checked";
  // Points verified with the writer live may be none when every round was
  // Busy (a flush each few ms under TSAN); one per cycle with it stopped.
  EXPECT_EQ(r.reader_stopped_points, static_cast<uint64_t>(kCycles))
      << "the read-only reader verified beside each stopped writer";
  ::testing::Test::RecordProperty("reader_points",
                                  static_cast<int>(r.reader_points));
}

// Item 6 of issue 12: imports SIGKILLed at random points and rerun leave
// every counter whole or absent, and the finished import equals the export.
TEST(Crash, Item06_KilledImportLeavesEachCounterWholeOrAbsent) {
  crash::CrashReport r = RunQuick(/*sync=*/false, /*import=*/true, 12);
  EXPECT_EQ(r.cycles, 13);  // and the finishing one
  ::testing::Test::RecordProperty("interrupted_imports", r.interrupted_imports);
}

}  // namespace
}  // namespace tally
