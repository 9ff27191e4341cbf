#include "engine/coding.h"

#include <gtest/gtest.h>

#include <cstdio>

#include "engine/rules.h"

namespace tally::engine {
namespace {

// Shard keys are big-endian so bytewise order is numeric order.
TEST(Coding, ShardKeyRoundTripsAndSortsNumerically) {
  char a[kShardKeyBytes], b[kShardKeyBytes];
  EncodeShardKey(1, 255, a);
  EncodeShardKey(1, 256, b);
  EXPECT_LT(std::string(a, sizeof a), std::string(b, sizeof b));
  EncodeShardKey(0x0102030405060708ULL, 0x0a0b0c0d, a);
  EXPECT_EQ(std::string(a, sizeof a),
            std::string("\x01\x02\x03\x04\x05\x06\x07\x08\x0a\x0b\x0c\x0d", 12));
  uint64_t id;
  uint32_t shard;
  ASSERT_TRUE(DecodeShardKey(std::string_view(a, sizeof a), &id, &shard));
  EXPECT_EQ(id, 0x0102030405060708ULL);
  EXPECT_EQ(shard, 0x0a0b0c0du);
  EXPECT_FALSE(DecodeShardKey(std::string_view(a, 11), &id, &shard));
}

// Values are 8-byte little-endian; any other length is malformed, never 0.
TEST(Coding, Int64IsLittleEndianAndStrict) {
  char buf[kValueBytes];
  EncodeInt64(-2, buf);
  EXPECT_EQ(std::string(buf, 8), std::string("\xfe\xff\xff\xff\xff\xff\xff\xff", 8));
  int64_t v = 99;
  ASSERT_TRUE(DecodeInt64(std::string_view(buf, 8), &v));
  EXPECT_EQ(v, -2);
  EXPECT_FALSE(DecodeInt64(std::string_view(buf, 7), &v));
  EXPECT_FALSE(DecodeInt64(std::string_view(), &v));
  EXPECT_FALSE(DecodeInt64(std::string(9, '\0'), &v));
}

TEST(Coding, MarkerKeyCarriesCounterIdPrefix) {
  std::string key;
  EncodeMarkerKey(7, "ord-1", &key);
  ASSERT_EQ(key.size(), 8u + 5u);
  uint64_t id;
  std::string_view event;
  ASSERT_TRUE(DecodeMarkerKey(key, &id, &event));
  EXPECT_EQ(id, 7u);
  EXPECT_EQ(event, "ord-1");
  EXPECT_FALSE(DecodeMarkerKey(key.substr(0, 8), &id, &event));
}

// The shard of an event id is stored implicitly (retries must find it): pin
// the hash to published FNV-1a 64 vectors so it can never drift.
TEST(Hash, Fnv1a64MatchesPublishedVectors) {
  EXPECT_EQ(Fnv1a64(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(Fnv1a64("a"), 0xaf63dc4c8601ec8cULL);
  EXPECT_EQ(Fnv1a64("foobar"), 0x85944171f73967e8ULL);
  // StableHash = fmix64(FNV-1a 64): values pinned in docs/format.md.
  EXPECT_EQ(StableHash(""), 0xefd01f60ba992926ULL);
  EXPECT_EQ(StableHash("a"), 0x82a2a958a9bece5bULL);
  EXPECT_EQ(StableHash("foobar"), 0x2c22194922d1672bULL);
  EXPECT_EQ(ShardOfKey("foobar", 10), 0x2c22194922d1672bULL % 10);
}

// Regression: plain FNV-1a put ids differing only in their last digit
// ("ord-0000"/"ord-0001") on adjacent shards, pairing up the histogram.
TEST(Hash, ConsecutiveIdsDoNotPairUp) {
  int paired = 0;
  for (int k = 0; k < 200; k += 2) {
    char a[16], b[16];
    std::snprintf(a, sizeof a, "ord-%04d", k);
    std::snprintf(b, sizeof b, "ord-%04d", k + 1);
    const uint32_t sa = ShardOfKey(a, 10), sb = ShardOfKey(b, 10);
    if (sa % 2 == 0 && sb == sa + 1) ++paired;
  }
  EXPECT_LT(paired, 25) << "adjacent ids land on paired shards";
}

TEST(ShardPicker, RandomShardStaysInRangeAndSpreads) {
  std::vector<int> hits(10, 0);
  for (int i = 0; i < 10000; ++i) {
    uint32_t s = RandomShard(10);
    ASSERT_LT(s, 10u);
    ++hits[s];
  }
  for (int h : hits) EXPECT_GT(h, 500) << "shard choice is badly skewed";
  EXPECT_EQ(RandomShard(1), 0u);
}

}  // namespace
}  // namespace tally::engine
