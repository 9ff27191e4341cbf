// tally::Verify: a healthy database verifies clean; each kind of damage written
// behind the engine's back is reported, naming the key or counter.
#include <gtest/gtest.h>

#include "engine/coding.h"
#include "engine/format.h"
#include "tally/admin.h"
#include "testutil/db_fixture.h"
#include "testutil/raw_db.h"
#include "testutil/testutil.h"

namespace tally {
namespace {

using test::Dump;
using test::Mentions;
using test::OpenOrDie;
using test::RawDb;

// A database with a once-only counter "once" and a mixed counter "mixed".
uint64_t Populate(const std::string& path) {
  auto db = OpenOrDie(path);
  EXPECT_OK(db->CreateCounter("once", {4}));
  EXPECT_OK(db->CreateCounter("mixed", {2}));
  for (int i = 0; i < 50; ++i) {
    EXPECT_OK(db->IncrementOnce("once", "e" + std::to_string(i), i));
  }
  EXPECT_OK(db->Increment("mixed", 5));
  EXPECT_OK(db->IncrementOnce("mixed", "x", 1));
  return test::OkValue(db->DescribeCounter("once")).id;
}

class VerifyDb : public test::DbTest {};

TEST_F(VerifyDb, HealthyDatabaseIsClean) {
  Populate(path());
  auto db = Open();
  VerifyReport r;
  ASSERT_OK(tally::Verify(*db, &r));
  EXPECT_TRUE(r.ok()) << Dump(r);
  EXPECT_EQ(r.counters, 2u);
  EXPECT_EQ(r.markers, 51u);
  EXPECT_GE(r.shard_keys, 3u);
  // Only the once-only counter can be compared with its markers; the plain
  // increment's flag survived the reopen.
  EXPECT_EQ(r.sums_compared, 1u);
  EXPECT_NE(test::OkValue(db->DescribeCounter("mixed")).flags &
                engine::kCounterFlagPlainIncrements,
            0u);
  EXPECT_EQ(test::OkValue(db->DescribeCounter("once")).flags, 0u);
}

TEST_F(VerifyDb, ReportsCorruptShardValueByKey) {
  const uint64_t id = Populate(path());
  char key[engine::kShardKeyBytes];
  engine::EncodeShardKey(id, 1, key);
  {
    RawDb raw(path());
    ASSERT_TRUE(raw.db()->Put(rocksdb::WriteOptions(), raw.family(engine::kShards),
                              rocksdb::Slice(key, sizeof key), "xyz").ok());
  }
  auto db = Open();
  VerifyReport r;
  ASSERT_OK(tally::Verify(*db, &r));
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(Mentions(r, engine::HexKey(std::string_view(key, sizeof key))))
      << Dump(r);
  EXPECT_TRUE(Mentions(r, "malformed value")) << Dump(r);
  EXPECT_TRUE(db->ReadExact("once").status().IsCorruption());
}

TEST_F(VerifyDb, ReportsCorruptMarkerByKey) {
  const uint64_t id = Populate(path());
  std::string key;
  engine::EncodeMarkerKey(id, "e7", &key);
  {
    RawDb raw(path());
    ASSERT_TRUE(raw.db()->Put(rocksdb::WriteOptions(), raw.family(engine::kEvents),
                              key, "not a flatbuffer").ok());
  }
  auto db = Open();
  VerifyReport r;
  ASSERT_OK(tally::Verify(*db, &r));
  EXPECT_TRUE(Mentions(r, engine::HexKey(key))) << Dump(r);
  EXPECT_TRUE(Mentions(r, "event marker")) << Dump(r);
  // A redelivery of that event must not be counted on top of garbage.
  EXPECT_TRUE(db->IncrementOnce("once", "e7", 7).status().IsCorruption());
}

TEST_F(VerifyDb, ReportsOrphansAndSumMismatch) {
  const uint64_t id = Populate(path());
  {
    RawDb raw(path());
    char orphan[engine::kShardKeyBytes], shard0[engine::kShardKeyBytes];
    char one[engine::kValueBytes];
    engine::EncodeShardKey(999, 0, orphan);
    engine::EncodeShardKey(id, 0, shard0);
    engine::EncodeInt64(1, one);
    auto* shards = raw.family(engine::kShards);
    ASSERT_TRUE(raw.db()->Put(rocksdb::WriteOptions(), shards,
                              rocksdb::Slice(orphan, sizeof orphan),
                              rocksdb::Slice(one, sizeof one)).ok());
    // An operand with no marker: the once-only counter's sums now differ.
    ASSERT_TRUE(raw.db()->Merge(rocksdb::WriteOptions(), shards,
                                rocksdb::Slice(shard0, sizeof shard0),
                                rocksdb::Slice(one, sizeof one)).ok());
  }
  auto db = Open();
  VerifyReport r;
  ASSERT_OK(tally::Verify(*db, &r));
  EXPECT_TRUE(Mentions(r, "belongs to no counter (id 999)")) << Dump(r);
  EXPECT_TRUE(Mentions(r, "counter 'once': shard sum 1226 != marker delta sum 1225"))
      << Dump(r);
  EXPECT_EQ(r.problems.size(), 2u) << Dump(r);
}

TEST_F(VerifyDb, WorksReadOnlyBesideWriter) {
  Populate(path());
  auto writer = Open();
  ASSERT_OK(writer->IncrementOnce("once", "late", 3));
  Options ro;
  ro.read_only = true;
  auto reader = Open(ro);
  ASSERT_NE(reader, nullptr);
  VerifyReport r;
  ASSERT_OK(tally::Verify(*reader, &r));
  EXPECT_TRUE(r.ok()) << Dump(r);
  EXPECT_EQ(r.markers, 52u);
}

}  // namespace
}  // namespace tally
