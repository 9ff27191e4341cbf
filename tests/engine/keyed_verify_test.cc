// tally::Verify knows keyed counters: each key's shard sum is compared with
// its own markers' deltas, and a shard or marker key that carries a key
// under a named counter (or none under a keyed one) is reported, naming it.
#include <gtest/gtest.h>

#include <string>

#include "engine/rules.h"
#include "engine/coding.h"
#include "engine/format.h"
#include "schema/records.h"
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

constexpr uint32_t kShards = 4;

struct Ids {
  uint64_t likes = 0;   // keyed, once-only
  uint64_t orders = 0;  // named, once-only
};

// A keyed once-only counter "likes" (keys post-1..post-5, a few likes
// each) and a named once-only counter "orders".
Ids Populate(const std::string& path) {
  auto db = OpenOrDie(path);
  CounterSpec keyed{kShards};
  keyed.keyed = true;
  EXPECT_OK(db->CreateCounter("likes", keyed));
  EXPECT_OK(db->CreateCounter("orders", {2}));
  for (int post = 1; post <= 5; ++post) {
    for (int user = 0; user < post * 3; ++user) {
      EXPECT_OK(db->IncrementOnce({"likes", "post-" + std::to_string(post)},
                                  "user-" + std::to_string(user), 1));
    }
  }
  for (int i = 0; i < 10; ++i) {
    EXPECT_OK(db->IncrementOnce("orders", "o" + std::to_string(i), 2));
  }
  return {test::OkValue(db->DescribeCounter("likes")).id,
          test::OkValue(db->DescribeCounter("orders")).id};
}

// Replaces the marker of (key, event) of counter `id` with one of `delta`.
void PutMarker(RawDb& raw, uint64_t id, const std::string& key,
               const std::string& event, int64_t delta) {
  std::string mkey, value;
  engine::EncodeMarkerKeyOf(engine::KeyPrefix(id, key), event, &mkey);
  schema::EncodeMarker(event, id, engine::ShardOfKey(event, kShards), delta,
                       1'000, &value);
  ASSERT_TRUE(raw.db()
                  ->Put(rocksdb::WriteOptions(), raw.family(engine::kEvents),
                        mkey, value)
                  .ok());
}

class KeyedVerify : public test::DbTest {};

TEST_F(KeyedVerify, CleanKeyedCounterComparesEveryKey) {
  Populate(path());
  auto db = Open();
  VerifyReport r;
  ASSERT_OK(tally::Verify(*db, &r));
  EXPECT_TRUE(r.ok()) << Dump(r);
  EXPECT_EQ(r.counters, 2u);
  EXPECT_EQ(r.markers, 3u + 6 + 9 + 12 + 15 + 10);
  EXPECT_EQ(r.keys_compared, 5u);
  EXPECT_EQ(r.sums_compared, 2u);  // the keyed counter and the named one
}

TEST_F(KeyedVerify, MarkerDisagreeingWithItsKeysShardNamesTheKey) {
  const Ids ids = Populate(path());
  {
    RawDb raw(path());
    // post-2's user-1 liked with +1; its marker now says +2, and post-4's
    // user-0 says 0: the counter's total still matches its markers' sum,
    // each of the two keys does not.
    PutMarker(raw, ids.likes, "post-2", "user-1", 2);
    PutMarker(raw, ids.likes, "post-4", "user-0", 0);
  }
  auto db = Open();
  VerifyReport r;
  ASSERT_OK(tally::Verify(*db, &r));
  EXPECT_TRUE(Mentions(
      r, "counter 'likes' key 'post-2': shard sum 6 != marker delta sum 7"))
      << Dump(r);
  EXPECT_TRUE(Mentions(
      r, "counter 'likes' key 'post-4': shard sum 12 != marker delta sum 11"))
      << Dump(r);
  EXPECT_EQ(r.problems.size(), 2u) << Dump(r);
  EXPECT_EQ(r.keys_compared, 5u);
}

TEST_F(KeyedVerify, KeyedGrammarUnderANamedCounterIsReported) {
  const Ids ids = Populate(path());
  char key[engine::kMaxShardKeyBytes];
  const size_t size = engine::EncodeShardKeyOf(
      engine::KeyPrefix(ids.orders, "stray"), engine::kNoBucket, 1, key);
  std::string marker_key;
  engine::EncodeMarkerKeyOf(engine::KeyPrefix(ids.orders, "stray"), "o3",
                            &marker_key);
  {
    RawDb raw(path());
    char one[engine::kValueBytes];
    engine::EncodeInt64(1, one);
    ASSERT_TRUE(raw.db()
                    ->Put(rocksdb::WriteOptions(), raw.family(engine::kShards),
                          rocksdb::Slice(key, size),
                          rocksdb::Slice(one, sizeof one))
                    .ok());
    std::string value;
    schema::EncodeMarker("o3", ids.orders, engine::ShardOfKey("o3", 2), 1,
                         1'000, &value);
    ASSERT_TRUE(raw.db()
                    ->Put(rocksdb::WriteOptions(), raw.family(engine::kEvents),
                          marker_key, value)
                    .ok());
  }
  auto db = Open();
  VerifyReport r;
  ASSERT_OK(tally::Verify(*db, &r));
  const std::string shard_hex = engine::HexKey(std::string_view(key, size));
  EXPECT_TRUE(Mentions(r, "shards: key " + shard_hex +
                              " of counter 'orders' carries key 'stray', "
                              "but the counter is not keyed"))
      << Dump(r);
  EXPECT_TRUE(Mentions(r, "events: key " + engine::HexKey(marker_key) +
                              " of counter 'orders' carries key 'stray'"))
      << Dump(r);
  // Counted in no sum: the named counter's own shards and markers agree.
  EXPECT_EQ(r.problems.size(), 2u) << Dump(r);
}

TEST_F(KeyedVerify, NamedGrammarUnderAKeyedCounterIsReported) {
  const Ids ids = Populate(path());
  char key[engine::kShardKeyBytes];
  engine::EncodeShardKey(ids.likes, 0, key);
  {
    RawDb raw(path());
    char one[engine::kValueBytes];
    engine::EncodeInt64(1, one);
    ASSERT_TRUE(raw.db()
                    ->Put(rocksdb::WriteOptions(), raw.family(engine::kShards),
                          rocksdb::Slice(key, sizeof key),
                          rocksdb::Slice(one, sizeof one))
                    .ok());
  }
  auto db = Open();
  VerifyReport r;
  ASSERT_OK(tally::Verify(*db, &r));
  EXPECT_TRUE(Mentions(
      r, "shards: key " + engine::HexKey(std::string_view(key, sizeof key)) +
             " of counter 'likes' carries no key, but the "
             "counter is keyed"))
      << Dump(r);
  EXPECT_EQ(r.problems.size(), 1u) << Dump(r);
  EXPECT_EQ(r.keys_compared, 5u);
}

}  // namespace
}  // namespace tally
