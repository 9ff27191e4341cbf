// The read cost of a bucketed counter is bounded (issue 13): a read scans
// at most kMaxReadBuckets time buckets and refuses beyond, naming the
// limit, instead of scanning every bucket ever written; buckets past
// retention that compaction has not dropped yet are not stepped over. The
// keys a read visits are counted with RocksDB's per-thread perf context
// (the bytes its iterators returned), so the bound is asserted, not timed.

#include <gtest/gtest.h>
#include <rocksdb/perf_context.h>
#include <rocksdb/perf_level.h>

#include <cstdint>
#include <string>

#include "tally/db.h"
#include "tally/limits.h"
#include "testutil/testutil.h"

namespace tally {
namespace {

constexpr int64_t kMinute = 60'000;
constexpr int64_t kDay = 86'400'000;
// 2026-12-01T00:00:00Z.
constexpr int64_t kNow = 1'796'083'200'000;
constexpr int64_t kBuckets = static_cast<int64_t>(kMaxReadBuckets);
// Where the test clock starts: the engine's time never steps back, so
// tests that write into buckets and then let them expire start early.
constexpr int64_t kStart = kNow - 100'000 * kMinute;

const char kTooMany[] =
    "counter 'm': the read spans more than 65536 time buckets, the most one "
    "read scans (kMaxReadBuckets); read shorter ranges with ReadRange, or "
    "keep fewer buckets with a retention";

class BucketReadLimit : public ::testing::Test {
 protected:
  BucketReadLimit() : clock_(kStart) {
    Options o;
    o.clock = &clock_;
    o.rollup_interval_ms = 0;
    db_ = test::OpenOrDie(dir_.Sub("db"), o);
  }

  void Create(int64_t retention_ms = 0) {
    CounterSpec spec;
    spec.shards = 1;
    spec.bucket = BucketWidth::kMinute;
    spec.retention_ms = retention_ms;
    ASSERT_OK(db_->CreateCounter("m", spec));
  }
  // Adds 1 to each of `n` consecutive minute buckets from `first_ms`.
  void FillMinutes(int64_t first_ms, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_OK(
          db_->Increment("m", 1, IncrementOptions{{}, first_ms + i * kMinute}));
    }
  }
  // Entries the calling thread's memtable iterators stepped over since
  // ResetKeys (RocksDB's perf context). Every test here writes a few MB
  // into a fresh database, below the 16 MiB write buffer, so every shard
  // key is in the memtable and this is the number of keys a read visited.
  static void ResetKeys() {
    rocksdb::SetPerfLevel(rocksdb::PerfLevel::kEnableCount);
    rocksdb::get_perf_context()->Reset();
  }
  static uint64_t KeysRead() {
    const uint64_t n = rocksdb::get_perf_context()->next_on_memtable_count;
    rocksdb::SetPerfLevel(rocksdb::PerfLevel::kDisable);
    return n;
  }

  test::TempDir dir_;
  test::ManualClock clock_;
  std::unique_ptr<Db> db_;
};

TEST_F(BucketReadLimit, AtTheLimitAWholeReadWorks) {
  Create();
  FillMinutes(0, kBuckets);
  EXPECT_EQ(test::OkValue(db_->ReadExact("m")), kBuckets);
  EXPECT_EQ(test::OkValue(db_->ReadRange("m", 0, kBuckets * kMinute)),
            kBuckets);
}

// Failed before the limit: ReadExact returned 66536 after visiting every
// one of its 66536 buckets.
TEST_F(BucketReadLimit, BeyondTheLimitEveryWholeReadIsRefusedWithinTheBound) {
  Create();
  const int64_t n = kBuckets + 1000;
  FillMinutes(0, n);

  ResetKeys();
  Result<int64_t> exact = db_->ReadExact("m");
  const uint64_t keys = KeysRead();
  ASSERT_TRUE(exact.status().IsInvalidArgument()) << exact.status().ToString();
  EXPECT_EQ(exact.status().message(), kTooMany);
  // One key per bucket (one shard): the read stopped at the first bucket
  // past the limit.
  EXPECT_GE(keys, kMaxReadBuckets - 1);
  EXPECT_LE(keys, kMaxReadBuckets + 1);

  Result<std::vector<int64_t>> shards = db_->ShardCounts("m");
  EXPECT_TRUE(shards.status().IsInvalidArgument());
  EXPECT_EQ(shards.status().message(), kTooMany);
  Result<CachedValue> cached = db_->ReadCached("m");  // rolls it up first
  EXPECT_TRUE(cached.status().IsInvalidArgument());
  EXPECT_EQ(cached.status().message(), kTooMany);
  Result<int64_t> all = db_->ReadRange("m", 0, n * kMinute);
  EXPECT_TRUE(all.status().IsInvalidArgument());
  EXPECT_EQ(all.status().message(), kTooMany);

  // What the message points to: ranges within the limit read exactly.
  const int64_t half = n / 2 * kMinute;
  EXPECT_EQ(test::OkValue(db_->ReadRange("m", 0, half)) +
                test::OkValue(db_->ReadRange("m", half, n * kMinute)),
            n);
}

// Failed before: the scan started at the counter's first key and stepped
// over every expired bucket compaction had not dropped yet (2000 keys).
TEST_F(BucketReadLimit, BucketsPastRetentionAreNotSteppedOver) {
  Create(/*retention_ms=*/10 * kMinute);
  FillMinutes(kStart, 2000);  // every bucket retained when written
  clock_.Advance(2000 * kMinute);
  // Past retention: buckets starting before now - 11 minutes. Retained: the
  // last 11 of the 2000.
  ResetKeys();
  Result<int64_t> exact = db_->ReadExact("m");
  const uint64_t keys = KeysRead();
  ASSERT_OK(exact);
  EXPECT_EQ(*exact, 11);
  EXPECT_GE(keys, 10u);
  EXPECT_LE(keys, 12u);
  EXPECT_EQ(test::OkValue(db_->ReadRange("m", kStart, kNow + kDay)), 11);
}

// A retention that keeps more buckets than the limit: the limit counts the
// retained ones, so expired buckets still on disk never cause a refusal.
TEST_F(BucketReadLimit, ExpiredBucketsDoNotCountTowardTheLimit) {
  Create(/*retention_ms=*/(kBuckets - 2) * kMinute);
  const int64_t n = kBuckets + 100;
  FillMinutes(kStart, n);
  clock_.Advance(n * kMinute);
  // Retained: starts >= now - retention - 1 minute, the last kBuckets - 1.
  EXPECT_EQ(test::OkValue(db_->ReadExact("m")), kBuckets - 1);
}

}  // namespace
}  // namespace tally
