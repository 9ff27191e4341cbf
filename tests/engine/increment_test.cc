// Plain increments, exact reads and shard histograms, overflow and corrupt
// values read through the public API.
#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include <limits>
#include <numeric>
#include <thread>

#include "engine/coding.h"
#include "engine/rocksdb_options.h"
#include "testutil/db_fixture.h"
#include "testutil/raw_db.h"
#include "testutil/testutil.h"

namespace tally {
namespace {

class Increment : public test::DbMatrixTest {};

TEST_P(Increment, ExactReadSumsShards) {
  auto db = Open();
  ASSERT_OK(db->CreateCounter("views", {8}));
  int64_t expect = 0;
  for (int i = 1; i <= 500; ++i) {
    auto r = db->Increment("views", i % 7 - 3);
    ASSERT_OK(r);
    EXPECT_EQ(r->outcome, Outcome::kApplied);
    EXPECT_LT(r->shard, 8u);
    expect += i % 7 - 3;
  }
  EXPECT_EQ(test::OkValue(db->ReadExact("views")), expect);
  auto shards = db->ShardCounts("views");
  ASSERT_OK(shards);
  ASSERT_EQ(shards->size(), 8u);
  EXPECT_EQ(std::accumulate(shards->begin(), shards->end(), int64_t{0}), expect);
}

// Affinity keys pin a device's increments to one shard.
TEST_P(Increment, AffinityKeyPinsShard) {
  auto db = Open();
  ASSERT_OK(db->CreateCounter("per-device", {16, ShardPolicy::kAffinity}));
  IncrementOptions o;
  o.affinity_key = "device-42";
  auto first = db->Increment("per-device", 1, o);
  ASSERT_OK(first);
  for (int i = 0; i < 20; ++i) {
    auto r = db->Increment("per-device", 1, o);
    ASSERT_OK(r);
    EXPECT_EQ(r->shard, first->shard);
  }
  EXPECT_EQ((test::OkValue(db->ShardCounts("per-device")))[first->shard], 21);
  // Under the affinity policy an increment without a key is refused.
  EXPECT_TRUE(db->Increment("per-device", 1).status().IsInvalidArgument());
}

// Many threads on one hot shard: no lost increments, and the bounded
// operand chain keeps folding correctly.
TEST_P(Increment, ConcurrentHotShardLosesNothing) {
  Options options = BaseOptions();
  options.max_pending_operands = 16;
  auto db = Open(options);
  ASSERT_OK(db->CreateCounter("hot", {1}));
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&db] {
      for (int i = 0; i < 2000; ++i) EXPECT_OK(db->Increment("hot", 1));
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(test::OkValue(db->ReadExact("hot")), 16000);
}

// Overflow is a state: the write that crosses int64 is accepted (it cannot
// be known without a read), and every read reports OutOfRange, never a
// wrapped number.
TEST_P(Increment, OverflowIsReportedOnRead) {
  auto db = Open();
  ASSERT_OK(db->CreateCounter("big", {1}));
  ASSERT_OK(db->Increment("big", std::numeric_limits<int64_t>::max()));
  ASSERT_OK(db->Increment("big", 1));
  EXPECT_TRUE(db->ReadExact("big").status().IsOutOfRange());
  EXPECT_TRUE(db->ShardCounts("big").status().IsOutOfRange());
  db.reset();
  db = Open();
  EXPECT_TRUE(db->ReadExact("big").status().IsOutOfRange())
      << "overflow must survive flush and reopen";
  ASSERT_OK(db->CreateCounter("other", {1}));
  ASSERT_OK(db->Increment("other", 1)) << "other counters stay writable";
}

// Two shards each within int64 whose sum is not: the read says so.
TEST_P(Increment, SumBeyondInt64IsOutOfRange) {
  auto db = Open();
  ASSERT_OK(db->CreateCounter("two", {2, ShardPolicy::kAffinity}));
  IncrementOptions a, b;
  a.affinity_key = "a";
  b.affinity_key = "b";
  ASSERT_NE(test::OkValue(db->Increment("two", 1, a)).shard,
            test::OkValue(db->Increment("two", 1, b)).shard);
  const int64_t big = std::numeric_limits<int64_t>::max() - 1;
  ASSERT_OK(db->Increment("two", big, a));
  ASSERT_OK(db->Increment("two", big, b));
  EXPECT_TRUE(db->ReadExact("two").status().IsOutOfRange());
  ASSERT_OK(db->ShardCounts("two"));  // each shard alone is fine
}

// A malformed shard value written behind the engine's back reads as
// Corruption naming the key, never as a number.
TEST_P(Increment, CorruptShardValueIsCorruptionNamingKey) {
  uint64_t id;
  {
    auto db = Open();
    ASSERT_OK(db->CreateCounter("c", {1}));
    ASSERT_OK(db->Increment("c", 5));
    id = test::OkValue(db->DescribeCounter("c")).id;
  }
  {
    test::RawDb raw(path());
    ASSERT_NE(raw.db(), nullptr);
    char key[engine::kShardKeyBytes];
    engine::EncodeShardKey(id, 0, key);
    ASSERT_TRUE(raw.db()->Put(rocksdb::WriteOptions(), raw.family(engine::kShards),
                              rocksdb::Slice(key, sizeof key), "bad").ok());
  }
  auto db = Open();
  auto r = db->ReadExact("c");
  ASSERT_TRUE(r.status().IsCorruption()) << r.status().ToString();
  EXPECT_NE(r.status().message().find("key"), std::string::npos);
  EXPECT_NE(r.status().message().find("'c'"), std::string::npos);
  // A later increment folds onto the corrupt value and stays corrupt.
  ASSERT_OK(db->Increment("c", 1));
  EXPECT_TRUE(db->ReadExact("c").status().IsCorruption());
}

TALLY_WRITE_MODES(Increment);

}  // namespace
}  // namespace tally
