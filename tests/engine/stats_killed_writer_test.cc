// A writer killed without closing leaves its last published figures: a
// reader shows them with their age and marks them not live, whether the
// dead writer is still a zombie (not yet reaped) or gone. The writer is a
// child process: this test binary run again with only
// StatsKilledWriterChild.Body, which writes, publishes, tells the parent
// through a pipe and waits for its SIGKILL.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "engine/test_hooks.h"
#include "tally/admin.h"
#include "tally/db.h"
#include "tally/limits.h"
#include "testutil/child_test.h"
#include "testutil/db_fixture.h"

namespace tally {
namespace {

constexpr int64_t kStart = 1'796'083'200'000;
constexpr int kChildIncrements = 11;
constexpr int kChildDuplicates = 4;
constexpr char kDbVar[] = "TALLY_STATS_CHILD_DB";
constexpr char kFdVar[] = "TALLY_STATS_CHILD_FD";

// The child's body (skipped unless the parent started it).
TEST(StatsKilledWriterChild, Body) {
  const char* path = std::getenv(kDbVar);
  const char* fd = std::getenv(kFdVar);
  if (path == nullptr || fd == nullptr) {
    GTEST_SKIP() << "the writer StatsKilledWriter starts";
  }
  test::ManualClock clock(kStart);
  Options o;
  o.clock = &clock;
  o.stats_publish_interval_ms = kMaxStatsPublishIntervalMs;
  std::unique_ptr<Db> db;
  ASSERT_OK(Db::Open(o, path, &db));
  ASSERT_OK(db->CreateCounter("c", {2}));
  for (int i = 0; i < kChildIncrements; ++i) {
    ASSERT_OK(db->IncrementOnce("c", "e-" + std::to_string(i), 1));
  }
  for (int i = 0; i < kChildDuplicates; ++i) {
    ASSERT_OK(db->IncrementOnce("c", "e-0", 1));
  }
  ASSERT_OK(engine::PublishStatsForTest(db.get()));
  const int out = std::atoi(fd);
  ASSERT_EQ(::write(out, "p", 1), 1);
  for (;;) ::pause();  // until the parent's SIGKILL
}

class StatsKilledWriter : public test::DbTest {
 protected:
  StatsKilledWriter() : DbTest(kStart) {}

  // Starts the child writer on path(); returns its pid once it published
  // (-1, with a test failure, if it did not).
  pid_t StartWriter() {
    return test::StartChildTest("StatsKilledWriterChild.Body",
                                {std::string(kDbVar) + "=" + path()}, kFdVar);
  }

  std::unique_ptr<Db> OpenReader() {
    Options o = ClockOptions();
    o.read_only = true;
    return Open(o);
  }

  void ExpectDeadWritersFigures(const EngineStats& s, pid_t pid) {
    EXPECT_EQ(s.origin.source, StatsSource::kWriter) << s.origin.problem;
    EXPECT_EQ(s.origin.writer_pid, static_cast<uint64_t>(pid));
    EXPECT_FALSE(s.origin.live);
    EXPECT_FALSE(s.origin.closed) << "it never closed";
    EXPECT_EQ(s.origin.as_of_ms, kStart);
    EXPECT_EQ(s.origin.age_ms, 5000);
    EXPECT_EQ(s.applied, uint64_t{kChildIncrements});
    EXPECT_EQ(s.duplicates, uint64_t{kChildDuplicates});
  }
};

TEST_F(StatsKilledWriter, ItsFiguresShowTheirAgeAndAreNotLive) {
  const pid_t pid = StartWriter();
  ASSERT_GT(pid, 0);
  clock_.Advance(5000);
  auto reader = OpenReader();
  ASSERT_NE(reader, nullptr);
  EngineStats s = GetStats(*reader);
  EXPECT_TRUE(s.origin.live) << "the child still runs";
  EXPECT_EQ(s.origin.writer_pid, static_cast<uint64_t>(pid));

  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  // Dead but not reaped: a zombie still holds the pid.
  siginfo_t info{};
  ASSERT_EQ(::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT),
            0);
  EXPECT_EQ(info.si_code, CLD_KILLED);
  ExpectDeadWritersFigures(GetStats(*reader), pid);

  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ExpectDeadWritersFigures(GetStats(*reader), pid);
  Result<DbStats> all = GetDbStats(*reader);
  ASSERT_OK(all);
  ExpectDeadWritersFigures(all->engine, pid);
}

}  // namespace
}  // namespace tally
