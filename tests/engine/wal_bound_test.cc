// Options::max_wal_bytes bounds the write-ahead log a writer keeps, and a
// clean close leaves next to nothing to replay (docs/durability.md,
// "Recovery time").
//
// The live log (the *.log bytes in the database directory) is sampled every
// kSampleEvery commits while writing. It may pass the bound by what is
// written while the flush the bound triggered runs, which depends on how
// fast that flush gets a thread: 12-30% of the bound in the runs behind
// docs/durability.md. The tests allow the bound once more (kMarginBounds),
// and check that without the bound the same run keeps more than that live.
// Small bounds and memtables keep the test short.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "engine/clean_close.h"
#include "tally/db.h"
#include "tally/limits.h"
#include "tally/options.h"
#include "testutil/dir_files.h"
#include "testutil/testutil.h"

namespace tally {
namespace {

using test::TempDir;

constexpr int kSampleEvery = 64;
constexpr uint64_t kMarginBounds = 1;
// What a close that flushed leaves: an empty new log, or RocksDB's own few
// records of closing.
constexpr uint64_t kNextToNothing = 64 << 10;

using test::WalBytes;

Options Small(uint64_t max_wal_bytes, size_t write_buffer_bytes) {
  Options o;
  o.max_wal_bytes = max_wal_bytes;
  o.write_buffer_bytes = write_buffer_bytes;
  o.rollup_interval_ms = 0;  // nothing but the test writes
  return o;
}

uint64_t Ceiling(const Options& o) {
  return (1 + kMarginBounds) * o.max_wal_bytes;
}

struct WalRun {
  uint64_t peak = 0;     // the largest live log sampled while writing
  uint64_t written = 0;  // log bytes written in all (the growth, summed)
  uint64_t left = 0;     // the log left after the clean close
  int64_t total = 0;     // increments counted, over all counters
};

// The sum of counters c0..c3 of the database at `path`, opened with `o`.
int64_t SumOfCounters(const std::string& path, const Options& o) {
  std::unique_ptr<Db> db;
  Status s = Db::Open(o, path, &db);
  EXPECT_OK(s);
  if (!s.ok()) return -1;
  int64_t sum = 0;
  for (int c = 0; c < 4; ++c) {
    Result<int64_t> v = db->ReadExact("c" + std::to_string(c));
    EXPECT_OK(v);
    if (!v.ok()) return -1;
    sum += *v;
  }
  return sum;
}

// Once-increments (markers and shards) and plain increments alternating
// over four counters, one commit each, until `target` log bytes were
// written; event ids of the longest allowed size make each commit large.
WalRun ManyFamilies(const std::string& path, const Options& o,
                    uint64_t target) {
  WalRun run;
  {
    auto db = test::OpenOrDie(path, o);
    EXPECT_NE(db, nullptr);
    if (db == nullptr) return run;
    for (int c = 0; c < 4; ++c) {
      EXPECT_OK(db->CreateCounter("c" + std::to_string(c), {4}));
    }
    const std::string pad(kMaxEventIdBytes - 16, 'x');
    uint64_t last = WalBytes(path);
    for (int i = 0; run.written < target; ++i) {
      const std::string counter = "c" + std::to_string(i % 4);
      if (i % 2 == 0) {
        EXPECT_OK(db->IncrementOnce(counter, pad + std::to_string(i), 1));
      } else {
        EXPECT_OK(db->Increment(counter, 1));
      }
      ++run.total;
      if (i % kSampleEvery != 0) continue;
      const uint64_t now = WalBytes(path);
      run.peak = std::max(run.peak, now);
      if (now > last) run.written += now - last;
      last = now;
    }
  }
  run.left = WalBytes(path);
  return run;
}

// Plain increments of one counter (the shards family only) after the
// counter's creation wrote the meta family once, at the start of the log.
WalRun OneFamily(const std::string& path, const Options& o, uint64_t target) {
  WalRun run;
  {
    auto db = test::OpenOrDie(path, o);
    EXPECT_NE(db, nullptr);
    if (db == nullptr) return run;
    EXPECT_OK(db->CreateCounter("hot", {8}));
    uint64_t last = WalBytes(path);
    for (int i = 0; run.written < target; ++i) {
      EXPECT_OK(db->Increment("hot", 1));
      if (i % kSampleEvery != 0) continue;
      const uint64_t now = WalBytes(path);
      run.peak = std::max(run.peak, now);
      if (now > last) run.written += now - last;
      last = now;
    }
  }
  run.left = WalBytes(path);
  return run;
}

TEST(WalBound, ManyFamiliesStayUnderTheBoundAndACleanCloseLeavesLittle) {
  TempDir dir;
  const Options o = Small(kMinWalBytes, kMinWriteBufferBytes);
  const WalRun run = ManyFamilies(dir.Sub("db"), o, 4 * o.max_wal_bytes);
  EXPECT_GE(run.written, 4 * o.max_wal_bytes);
  // meta (the time mark), shards and markers are written.
  EXPECT_LE(run.peak, Ceiling(o)) << run.peak;
  EXPECT_LE(run.left, engine::kCloseFlushMinWalBytes);
  EXPECT_LE(run.left, o.max_wal_bytes);
  // Every increment is still there.
  EXPECT_EQ(SumOfCounters(dir.Sub("db"), o), run.total);
}

// A family that holds one old write keeps every later log alive unless the
// bound flushes it: with the bound effectively off the same run keeps more
// than the ceiling (twice the bound) live, so the bounded run's figure is the
// bound's.
TEST(WalBound, OneBusyFamilyDoesNotKeepOldLogsAliveForAnother) {
  const Options bounded = Small(kMinWalBytes, kMinWriteBufferBytes);
  const uint64_t target = 4 * bounded.max_wal_bytes;
  {
    TempDir dir;
    const WalRun run = OneFamily(dir.Sub("db"), bounded, target);
    EXPECT_LE(run.peak, Ceiling(bounded)) << run.peak;
    EXPECT_LE(run.left, engine::kCloseFlushMinWalBytes);
    EXPECT_LE(run.left, bounded.max_wal_bytes);
  }
  {
    TempDir dir;
    const WalRun run = OneFamily(
        dir.Sub("db"), Small(kMaxWalBytes, kMinWriteBufferBytes), target);
    EXPECT_GT(run.peak, Ceiling(bounded)) << run.peak;
    // The clean close still leaves little.
    EXPECT_LE(run.left, engine::kCloseFlushMinWalBytes);
  }
}

// A close of a writer whose live log is over kCloseFlushMinWalBytes flushes
// it: a read-only open next has nothing to replay, and sees every increment.
TEST(WalBound, ReadOnlyOpenAfterACleanCloseSeesEverything) {
  TempDir dir;
  const Options o = Small(uint64_t{64} << 20, size_t{16} << 20);
  const WalRun run =
      ManyFamilies(dir.Sub("db"), o, 2 * engine::kCloseFlushMinWalBytes);
  // No memtable filled and the bound was far: the whole log was live.
  EXPECT_GT(run.peak, engine::kCloseFlushMinWalBytes);
  EXPECT_LE(run.left, kNextToNothing) << run.left;
  Options ro = o;
  ro.read_only = true;
  EXPECT_EQ(SumOfCounters(dir.Sub("db"), ro), run.total);
}

}  // namespace
}  // namespace tally
