// Crash atomicity: a child process runs concurrent once-increments and is
// SIGKILLed at a random moment; after reopening, every counter's shard sum
// equals the sum of its markers' deltas (marker and operand are one
// WriteBatch), over many cycles on the same database.

#include <gtest/gtest.h>
#include <rocksdb/db.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <map>
#include <random>

#include "engine/coding.h"
#include "engine/rocksdb_options.h"
#include "schema/records.h"
#include "testutil/raw_db.h"
#include "testutil/testutil.h"

namespace tally {
namespace {

constexpr int kCycles = 20;

// Starts the writer with its stdout on a pipe; returns its pid.
pid_t StartWriter(const std::string& db_path, uint64_t seed, int* out_fd) {
  int fds[2];
  if (::pipe(fds) != 0) return -1;
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(fds[1], STDOUT_FILENO);
    ::close(fds[0]);
    ::close(fds[1]);
    const std::string seed_arg = std::to_string(seed);
    ::execl(TALLY_CRASH_WRITER, TALLY_CRASH_WRITER, db_path.c_str(),
            seed_arg.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(fds[1]);
  *out_fd = fds[0];
  return pid;
}

// Reads `want` progress bytes; false if the writer exited first.
bool AwaitProgress(int fd, int want) {
  char buf[64];
  int got = 0;
  while (got < want) {
    const ssize_t n = ::read(fd, buf, std::min<size_t>(sizeof buf, want - got));
    if (n <= 0) return false;
    got += static_cast<int>(n);
  }
  return true;
}

// Sums every marker's delta per counter id, straight from RocksDB.
std::map<uint64_t, int64_t> MarkerSums(const std::string& path) {
  std::map<uint64_t, int64_t> sums;
  test::RawDb raw(path);
  if (raw.db() == nullptr) return sums;
  auto it = raw.Scan(engine::kEvents);
  for (; it->Valid(); it->Next()) {
    schema::MarkerRecord m;
    EXPECT_OK(schema::DecodeMarker(it->value().ToStringView(), &m));
    uint64_t id;
    std::string_view event;
    EXPECT_TRUE(engine::DecodeMarkerKey(it->key().ToStringView(), &id, &event));
    EXPECT_EQ(id, m.counter_id);
    EXPECT_EQ(event, m.event_id);
    sums[id] += m.delta;
  }
  EXPECT_TRUE(it->status().ok());
  return sums;
}

TEST(Crash, KilledWriterLeavesShardsEqualToMarkers) {
  test::TempDir dir;
  const std::string path = dir.Sub("db");
  std::mt19937 rng(std::random_device{}());
  const unsigned seed0 = rng();
  SCOPED_TRACE("seed " + std::to_string(seed0));
  int checks = 0;
  for (int cycle = 0; cycle < kCycles; ++cycle) {
    int fd = -1;
    const pid_t pid = StartWriter(path, seed0 + cycle, &fd);
    ASSERT_GT(pid, 0);
    const int wait_for = 1 + static_cast<int>(rng() % 120);
    const bool progressed = AwaitProgress(fd, wait_for);
    ::kill(pid, SIGKILL);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ::close(fd);
    ASSERT_TRUE(progressed) << "writer exited early, status " << status;
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

    std::map<uint64_t, int64_t> marker_sums = MarkerSums(path);
    auto db = test::OpenOrDie(path);
    ASSERT_NE(db, nullptr);
    auto counters = db->ListCounters();
    ASSERT_OK(counters);
    VerifyReport report;
    ASSERT_OK(db->Verify(&report));
    EXPECT_TRUE(report.ok()) << "cycle " << cycle << ": "
                             << (report.problems.empty() ? "" : report.problems[0]);
    for (const CounterInfo& c : *counters) {
      auto total = db->ReadExact(c.name);
      ASSERT_OK(total);
      EXPECT_EQ(*total, marker_sums[c.id])
          << "cycle " << cycle << " counter " << c.name;
      ++checks;
    }
  }
  EXPECT_GE(checks, kCycles);  // counters existed in (almost) every cycle
  RecordProperty("invariant_checks", checks);
}

}  // namespace
}  // namespace tally
