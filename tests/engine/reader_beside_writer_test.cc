// A reader in another process beside a writer with the default options
// (the case of `counterctl get` beside a running app, docs/design.md
// "Readers in other processes"): every fresh read-only open is one point
// across families (Verify: shard sum == marker delta sum), and the log it
// replays stays under twice Options::max_wal_bytes (the bound plus the
// margin a flush in progress lets the writer add), which is what keeps such
// an open cheap. The writer is a child process: this test binary run again
// with only ReaderBesideWriterChild.Body, which writes once-increments until
// the parent's SIGKILL.
#include <gtest/gtest.h>
#include <rocksdb/env.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "engine/writer_files.h"
#include "tally/admin.h"
#include "tally/db.h"
#include "testutil/child_test.h"
#include "testutil/db_fixture.h"

namespace tally {
namespace {

constexpr char kDbVar[] = "TALLY_BESIDE_CHILD_DB";
constexpr char kFdVar[] = "TALLY_BESIDE_CHILD_FD";
// Logs the writer must have switched to (each a flush the bound or a full
// memtable started) before the test ends, so that its bound was reached.
constexpr int kLogSwitches = 3;
// Points judged at least; a hang guard on the opens tried for them.
constexpr int kMinPoints = 10;
constexpr int kMaxTries = 5000;

// The child's body (skipped unless the parent started it): the default
// options, as an app would open the database.
TEST(ReaderBesideWriterChild, Body) {
  const char* path = std::getenv(kDbVar);
  const char* fd = std::getenv(kFdVar);
  if (path == nullptr || fd == nullptr) {
    GTEST_SKIP() << "the writer ReaderBesideWriter starts";
  }
  std::unique_ptr<Db> db;
  ASSERT_OK(Db::Open(Options(), path, &db));
  ASSERT_OK(db->CreateCounter("c", {8}));
  ASSERT_OK(db->IncrementOnce("c", "e-0", 1));
  const int out = std::atoi(fd);
  ASSERT_EQ(::write(out, "w", 1), 1);
  for (int i = 1;; ++i) {
    ASSERT_OK(db->IncrementOnce("c", "e-" + std::to_string(i), 1 + i % 7));
  }
}

// The bytes of the live logs in `path` now (a log deleted while it is
// listed counts as empty).
uint64_t LiveLogBytes(const std::string& path) {
  uint64_t total = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(path, ec)) {
    if (e.path().extension() != ".log") continue;
    std::error_code size_ec;
    const uint64_t n = std::filesystem::file_size(e.path(), size_ec);
    if (!size_ec) total += n;
  }
  return total;
}

class ReaderBesideWriter : public test::DbTest {};

TEST_F(ReaderBesideWriter, FreshOpensAreOnePointAndReplayUnderTheBound) {
  const uint64_t bound = Options().max_wal_bytes;
  const pid_t pid =
      test::StartChildTest("ReaderBesideWriterChild.Body",
                           {std::string(kDbVar) + "=" + path()}, kFdVar);
  ASSERT_GT(pid, 0);
  Options ro;
  ro.read_only = true;
  int points = 0, refused = 0, inconsistent = 0, switches = 0;
  uint64_t newest = 0, most_log = 0;
  std::string first;
  for (int tries = 0;
       tries < kMaxTries && (points < kMinPoints || switches < kLogSwitches);
       ++tries) {
    // Measured before the open: the log an open replays is at most what is
    // there when it starts plus what is written during it.
    most_log = std::max(most_log, LiveLogBytes(path()));
    std::unique_ptr<Db> reader;
    Status s = Db::Open(ro, path(), &reader);
    VerifyReport report;
    if (s.ok()) s = tally::Verify(*reader, &report);
    if (s.IsBusy()) {  // the documented refusals (secondaries.cc, Verify)
      ++refused;
      continue;
    }
    ASSERT_OK(s);
    ++points;
    if (!report.ok()) {
      ++inconsistent;
      if (first.empty()) first = report.problems[0];
    }
    engine::WriterFiles files;
    ASSERT_OK(engine::ListWriterFiles(rocksdb::Env::Default(), path(), &files));
    if (!files.logs.empty() && files.logs.back() != newest) {
      if (newest != 0) ++switches;
      newest = files.logs.back();
    }
  }
  ::testing::Test::RecordProperty("points", points);
  ::testing::Test::RecordProperty("refused", refused);
  ::testing::Test::RecordProperty("log_switches", switches);
  ::testing::Test::RecordProperty("most_log_bytes", std::to_string(most_log));
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(status)) << "the writer stopped by itself";
  EXPECT_GE(switches, kLogSwitches) << "the writer never reached its bound";
  EXPECT_GE(points, kMinPoints) << refused << " opens refused";
  EXPECT_EQ(inconsistent, 0) << "of " << points << " points; first: " << first;
  EXPECT_LE(most_log, 2 * bound)
      << "the live log reached " << most_log << " bytes, bound " << bound;
}

}  // namespace
}  // namespace tally
