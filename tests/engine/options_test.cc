// Every Options field is checked at Open: each numeric field just below and
// just above its range is refused with InvalidArgument naming the field, the
// value and the range, and nothing is created; both ends of every range
// open. (The booleans have no bad value; clock and env are pointers whose
// null means the default.)
#include "tally/options.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "tally/db.h"
#include "tally/limits.h"
#include "testutil/testutil.h"

namespace tally {
namespace {

using test::TempDir;

struct Refused {
  const char* field;
  std::function<void(Options*)> set;
  std::string message;
};

// The exact messages are spelled out (not built from limits.h) so that a
// changed limit shows up here and in docs/bad-input.md.
std::vector<Refused> RefusedOptions() {
  return {
      {"block_cache_bytes", [](Options* o) { o->block_cache_bytes = 0; },
       "block_cache_bytes 0 is outside 1048576..1099511627776"},
      {"block_cache_bytes",
       [](Options* o) { o->block_cache_bytes = (size_t{1} << 20) - 1; },
       "block_cache_bytes 1048575 is outside 1048576..1099511627776"},
      {"block_cache_bytes",
       [](Options* o) { o->block_cache_bytes = (size_t{1} << 40) + 1; },
       "block_cache_bytes 1099511627777 is outside 1048576..1099511627776"},
      {"write_buffer_bytes", [](Options* o) { o->write_buffer_bytes = 0; },
       "write_buffer_bytes 0 is outside 65536..68719476736"},
      {"write_buffer_bytes",
       [](Options* o) { o->write_buffer_bytes = (size_t{64} << 10) - 1; },
       "write_buffer_bytes 65535 is outside 65536..68719476736"},
      {"write_buffer_bytes",
       [](Options* o) { o->write_buffer_bytes = (size_t{64} << 30) + 1; },
       "write_buffer_bytes 68719476737 is outside 65536..68719476736"},
      {"max_wal_bytes",
       [](Options* o) { o->max_wal_bytes = (uint64_t{1} << 20) - 1; },
       "max_wal_bytes 1048575 is outside 1048576..1099511627776"},
      {"max_wal_bytes",
       [](Options* o) { o->max_wal_bytes = (uint64_t{1} << 40) + 1; },
       "max_wal_bytes 1099511627777 is outside 1048576..1099511627776"},
      {"max_pending_operands",
       [](Options* o) { o->max_pending_operands = 65537; },
       "max_pending_operands 65537 is outside 0..65536 (0: no bound)"},
      {"event_lock_stripes", [](Options* o) { o->event_lock_stripes = 0; },
       "event_lock_stripes 0 is outside 1..1048576"},
      {"event_lock_stripes",
       [](Options* o) { o->event_lock_stripes = (1u << 20) + 1; },
       "event_lock_stripes 1048577 is outside 1..1048576"},
      {"rollup_interval_ms",
       [](Options* o) { o->rollup_interval_ms = 86400001; },
       "rollup_interval_ms 86400001 is outside 0..86400000 (0: no roll-up "
       "thread)"},
      {"stats_publish_interval_ms",
       [](Options* o) { o->stats_publish_interval_ms = 99; },
       "stats_publish_interval_ms 99 is outside 100..3600000 (or 0: not "
       "published)"},
      {"stats_publish_interval_ms",
       [](Options* o) { o->stats_publish_interval_ms = 3600001; },
       "stats_publish_interval_ms 3600001 is outside 100..3600000 (or 0: not "
       "published)"},
      {"expiry_sweep_seconds",
       [](Options* o) { o->expiry_sweep_seconds = 3599; },
       "expiry_sweep_seconds 3599 is outside 3600..315360000 (or 0: "
       "RocksDB's default)"},
      {"expiry_sweep_seconds",
       [](Options* o) { o->expiry_sweep_seconds = 315360001; },
       "expiry_sweep_seconds 315360001 is outside 3600..315360000 (or 0: "
       "RocksDB's default)"},
      {"outbox_max_entries", [](Options* o) { o->outbox_max_entries = 0; },
       "outbox_max_entries 0 is outside 1..4294967296"},
      {"outbox_max_entries",
       [](Options* o) { o->outbox_max_entries = (uint64_t{1} << 32) + 1; },
       "outbox_max_entries 4294967297 is outside 1..4294967296"},
      {"group_commit_max_bytes",
       [](Options* o) { o->group_commit_max_bytes = 0; },
       "group_commit_max_bytes 0 is outside 1..67108864"},
      {"group_commit_max_bytes",
       [](Options* o) { o->group_commit_max_bytes = (size_t{64} << 20) + 1; },
       "group_commit_max_bytes 67108865 is outside 1..67108864"},
      {"group_commit_max_ops", [](Options* o) { o->group_commit_max_ops = 0; },
       "group_commit_max_ops 0 is outside 1..1048576"},
      {"group_commit_max_ops",
       [](Options* o) { o->group_commit_max_ops = (size_t{1} << 20) + 1; },
       "group_commit_max_ops 1048577 is outside 1..1048576"},
      {"group_commit_max_delay_us",
       [](Options* o) { o->group_commit_max_delay_us = 100001; },
       "group_commit_max_delay_us 100001 is outside 0..100000"},
      {"reads",
       [](Options* o) {
         o->read_only = true;
         o->reads = kReadAll + 1;
       },
       "reads 16 is outside 0..15 (tally::kRead* bits)"},
      {"reads", [](Options* o) { o->reads = kReadValues; },
       "reads 1 names less than everything (kReadAll, 15), but only a "
       "read_only database reads less; a writer reads all"},
  };
}

TEST(OptionsCheck, EachFieldOutsideItsRangeIsRefusedByName) {
  for (const Refused& r : RefusedOptions()) {
    SCOPED_TRACE(r.message);
    TempDir dir;
    Options o;
    r.set(&o);
    std::unique_ptr<Db> db;
    Status s = Db::Open(o, dir.Sub("db"), &db);
    EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
    EXPECT_EQ(s.message(), r.message);
    EXPECT_EQ(s.message().rfind(r.field, 0), 0u) << "names the field first";
    EXPECT_EQ(db, nullptr);
    EXPECT_FALSE(std::filesystem::exists(dir.Sub("db"))) << "nothing created";
  }
}

// A read-only open checks the same fields (it builds the same RocksDB
// options), before it looks at the path.
TEST(OptionsCheck, ReadOnlyOpenChecksTheSameFields) {
  TempDir dir;
  Options o;
  o.read_only = true;
  o.write_buffer_bytes = 0;
  std::unique_ptr<Db> db;
  Status s = Db::Open(o, dir.Sub("missing"), &db);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_EQ(s.message(), "write_buffer_bytes 0 is outside 65536..68719476736");
}

// Both ends of every range open a working database.
TEST(OptionsCheck, BothEndsOfEveryRangeOpen) {
  Options low;
  low.block_cache_bytes = kMinBlockCacheBytes;
  low.write_buffer_bytes = kMinWriteBufferBytes;
  low.max_wal_bytes = kMinWalBytes;
  low.max_pending_operands = 0;
  low.event_lock_stripes = 1;
  low.rollup_interval_ms = 0;
  low.stats_publish_interval_ms = kMinStatsPublishIntervalMs;
  low.expiry_sweep_seconds = kMinExpirySweepSeconds;
  low.outbox_max_entries = 1;
  low.group_commit_max_bytes = 1;
  low.group_commit_max_ops = 1;
  low.group_commit_max_delay_us = 0;

  // The largest write buffer and the largest WAL bound are opened apart:
  // together they make RocksDB reserve a ~70 GiB log file
  // (min(1.1 x write buffer, WAL bound)), which fills a small disk for
  // every process on it while the database is open.
  Options high;
  high.block_cache_bytes = kMaxBlockCacheBytes;
  high.write_buffer_bytes = kMaxWriteBufferBytes;
  high.max_wal_bytes = kMinWalBytes;
  high.max_pending_operands = kMaxPendingOperands;
  high.event_lock_stripes = kMaxEventLockStripes;
  high.rollup_interval_ms = kMaxRollupIntervalMs;
  high.stats_publish_interval_ms = kMaxStatsPublishIntervalMs;
  high.expiry_sweep_seconds = kMaxExpirySweepSeconds;
  high.outbox_max_entries = kMaxOutboxEntries;
  high.group_commit_max_bytes = kMaxGroupCommitBytes;
  high.group_commit_max_ops = kMaxGroupCommitOps;
  high.group_commit_max_delay_us = kMaxGroupCommitDelayUs;

  Options high_wal;
  high_wal.max_wal_bytes = kMaxWalBytes;

  Options off;
  off.expiry_sweep_seconds = 0;  // RocksDB's own default
  off.rollup_interval_ms = 1;
  off.stats_publish_interval_ms = 0;  // not published

  for (const Options& o : {low, high, high_wal, off}) {
    TempDir dir;
    std::unique_ptr<Db> db;
    ASSERT_OK(Db::Open(o, dir.Sub("db"), &db));
    ASSERT_OK(db->CreateCounter("c", {2}));
    ASSERT_OK(db->Increment("c", 3));
    Result<int64_t> v = db->ReadExact("c");
    ASSERT_OK(v);
    EXPECT_EQ(*v, 3);
  }
}

}  // namespace
}  // namespace tally
