// counterctl verify against real databases: clean, damaged behind the
// engine's back (raw RocksDB writes), and held by another process.
#include <gtest/gtest.h>

#include "counterctl_fixture.h"
#include "engine/coding.h"
#include "testutil/raw_db.h"

namespace tally::test {
namespace {

using CounterctlVerify = CounterctlTest;

// Proves a healthy database verifies with exit 0 and a summary line, also
// while another process holds it.
TEST_F(CounterctlVerify, HealthyDatabaseExitsZero) {
  CtlOk({"create", "orders", "--shards", "4"});
  CtlOk({"incr", "orders", "--event-id", "o-1", "--by", "3"});
  CtlOk({"incr", "orders", "--event-id", "o-2"});
  std::string out = CtlOk({"verify"});
  EXPECT_NE(out.find("ok: counters=1"), std::string::npos) << out;
  EXPECT_NE(out.find("markers=2"), std::string::npos) << out;
  EXPECT_NE(out.find("sums_compared=1"), std::string::npos) << out;
  auto holder = OpenOrDie(db_);
  ASSERT_NE(holder, nullptr);
  ASSERT_OK(holder->IncrementOnce("orders", "o-3", 1));
  out = CtlOk({"verify"});
  EXPECT_NE(out.find("markers=3"), std::string::npos) << out;
}

// Proves a corrupted shard value and a corrupted marker make verify exit 3
// naming both keys, and make `get` fail instead of printing a number.
TEST_F(CounterctlVerify, CorruptShardAndMarkerAreReported) {
  CtlOk({"create", "orders", "--shards", "2"});
  CtlOk({"incr", "orders", "--event-id", "o-1"});
  CtlOk({"incr", "orders", "--event-id", "o-2"});
  uint64_t id;
  {
    auto db = OpenOrDie(db_);
    ASSERT_NE(db, nullptr);
    id = OkValue(db->DescribeCounter("orders")).id;
  }
  char shard_key[engine::kShardKeyBytes];
  engine::EncodeShardKey(id, 0, shard_key);
  std::string marker_key;
  engine::EncodeMarkerKey(id, "o-1", &marker_key);
  {
    RawDb raw(db_);
    ASSERT_NE(raw.db(), nullptr);
    ASSERT_TRUE(raw.db()->Put(rocksdb::WriteOptions(), raw.family(engine::kShards),
                              rocksdb::Slice(shard_key, sizeof shard_key), "12345").ok());
    ASSERT_TRUE(raw.db()->Put(rocksdb::WriteOptions(), raw.family(engine::kEvents),
                              marker_key, std::string(40, '\x7f')).ok());
  }
  ProcessResult r = Ctl({"verify"});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.out.find(engine::HexKey(std::string_view(shard_key, sizeof shard_key))),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find(engine::HexKey(marker_key)), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("FAILED"), std::string::npos) << r.out;

  ProcessResult get = Ctl({"get", "orders"});
  EXPECT_EQ(get.exit_code, 1);
  EXPECT_EQ(get.out, "") << "a corrupt counter must not print a number";
  EXPECT_NE(get.err.find("Corruption"), std::string::npos) << get.err;
}

}  // namespace
}  // namespace tally::test
