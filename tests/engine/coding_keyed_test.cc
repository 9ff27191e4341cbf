// The key coding of keyed counters (engine/coding.h, docs/format.md "Keyed
// counters"): the bytes of named counters' keys do not change, a keyed
// key's bytes sort as its key does, KeyPrefix::End bounds exactly one key's
// range, and the decoders refuse what no grammar allows. Also the stored
// top list (engine/top_keys.h). tests/fuzz/fuzz_keys.cc checks the same
// grammars on arbitrary bytes.

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "engine/rules.h"
#include "engine/coding.h"
#include "engine/top_keys.h"
#include "tally/limits.h"

namespace tally::engine {
namespace {

std::string ShardKeyOf(uint64_t id, std::string_view key, int64_t bucket,
                       uint32_t shard) {
  char buf[kMaxShardKeyBytes];
  const size_t n = EncodeShardKeyOf(KeyPrefix(id, key), bucket, shard, buf);
  return std::string(buf, n);
}

std::string MarkerKeyOf(uint64_t id, std::string_view key,
                        std::string_view event_id) {
  std::string out;
  EncodeMarkerKeyOf(KeyPrefix(id, key), event_id, &out);
  return out;
}

std::string End(uint64_t id, std::string_view key) {
  std::string out;
  KeyPrefix(id, key).End(&out);
  return out;
}

// u64be(7), the id every test below uses.
const std::string kId7("\0\0\0\0\0\0\0\x07", 8);

// A named counter's keys are the bytes format 3 wrote: KeyPrefix with no
// key adds nothing.
TEST(CodingKeyed, NamedCountersKeysAreUnchanged) {
  char plain[kShardKeyBytes];
  EncodeShardKey(7, 3, plain);
  EXPECT_EQ(ShardKeyOf(7, {}, kNoBucket, 3), std::string(plain, sizeof plain));
  EXPECT_EQ(ShardKeyOf(7, {}, kNoBucket, 3),
            kId7 + std::string("\0\0\0\x03", 4));
  char bucketed[kBucketShardKeyBytes];
  EncodeBucketShardKey(7, 1'764'547'200'000, 2, bucketed);
  EXPECT_EQ(ShardKeyOf(7, {}, 1'764'547'200'000, 2),
            std::string(bucketed, sizeof bucketed));
  std::string marker;
  EncodeMarkerKey(7, "evt-1", &marker);
  EXPECT_EQ(MarkerKeyOf(7, {}, "evt-1"), marker);
  EXPECT_EQ(marker, kId7 + "evt-1");
  EXPECT_EQ(KeyPrefix(7, {}).bytes(), kId7);
  EXPECT_FALSE(KeyPrefix(7, {}).keyed());
}

// The keyed grammars, byte for byte, and back.
TEST(CodingKeyed, KeyedKeysCarryTheKeyClosedByZero) {
  EXPECT_TRUE(KeyPrefix(7, "ab").keyed());
  EXPECT_EQ(KeyPrefix(7, "ab").bytes(), kId7 + std::string("ab\0", 3));
  const std::string shard = ShardKeyOf(7, "ab", kNoBucket, 3);
  EXPECT_EQ(shard, kId7 + std::string("ab\0\0\0\0\x03", 7));
  ShardKeyParts parts;
  ASSERT_TRUE(DecodeAnyShardKey(shard, &parts));
  EXPECT_EQ(parts.counter_id, 7u);
  EXPECT_EQ(parts.key, "ab");
  EXPECT_EQ(parts.bucket, kNoBucket);
  EXPECT_EQ(parts.shard, 3u);

  const std::string bucketed = ShardKeyOf(7, "ab", 0x0102, 0x01000000);
  EXPECT_EQ(bucketed, kId7 + std::string("ab\0\0\0\0\0\0\0\x01\x02"
                                         "\x01\0\0\0",
                                         15));
  ASSERT_TRUE(DecodeAnyShardKey(bucketed, &parts));
  EXPECT_EQ(parts.key, "ab");
  EXPECT_EQ(parts.bucket, 0x0102);
  EXPECT_EQ(parts.shard, 0x01000000u);  // a keyed key's shard may be any u32

  const std::string marker = MarkerKeyOf(7, "ab", "user-1");
  EXPECT_EQ(marker, kId7 + std::string("ab\0user-1", 9));
  uint64_t id = 0;
  std::string_view key, event_id;
  ASSERT_TRUE(DecodeAnyMarkerKey(marker, &id, &key, &event_id));
  EXPECT_EQ(id, 7u);
  EXPECT_EQ(key, "ab");
  EXPECT_EQ(event_id, "user-1");
  // A named marker key (no 0 byte) decodes with no key.
  const std::string named = kId7 + "user-1";  // the views point into it
  ASSERT_TRUE(DecodeAnyMarkerKey(named, &id, &key, &event_id));
  EXPECT_TRUE(key.empty());
  EXPECT_EQ(event_id, "user-1");
}

// Keys sort in byte order, whatever follows them: "a" before "a/x" before
// "ab", for prefixes, shard keys (also the largest bucket and shard of "a"
// before the smallest of "a/x") and marker keys; a named counter's keys
// would all sort before its keyed ones (byte 8 is 0).
TEST(CodingKeyed, KeyOrderIsByteOrder) {
  const std::vector<std::string> keys = {"a", "a/x", "ab"};
  for (size_t i = 0; i + 1 < keys.size(); ++i) {
    const std::string& lo = keys[i];
    const std::string& hi = keys[i + 1];
    SCOPED_TRACE(lo + " < " + hi);
    EXPECT_LT(KeyPrefix(7, lo).bytes(), KeyPrefix(7, hi).bytes());
    EXPECT_LT(ShardKeyOf(7, lo, INT64_MAX, UINT32_MAX),
              ShardKeyOf(7, hi, kNoBucket, 0));
    EXPECT_LT(ShardKeyOf(7, lo, kNoBucket, UINT32_MAX),
              ShardKeyOf(7, hi, 0, 0));
    EXPECT_LT(MarkerKeyOf(7, lo, "\x7f\x7f\x7f"), MarkerKeyOf(7, hi, "!"));
  }
  EXPECT_LT(ShardKeyOf(7, {}, kMaxEventTimeMs, kMaxShards - 1),
            ShardKeyOf(7, "\x01", kNoBucket, 0));
  // One counter's keys, keyed or not, sort before the next counter's.
  EXPECT_LT(
      ShardKeyOf(7, std::string(kMaxKeyBytes, '\xff'), INT64_MAX, UINT32_MAX),
      ShardKeyOf(8, {}, kNoBucket, 0));
}

// KeyPrefix::End: the first key after a key's range, which holds every
// shard and marker key of that key and none of another key's.
TEST(CodingKeyed, KeyPrefixEndBoundsOneKey) {
  EXPECT_EQ(End(7, {}), std::string("\0\0\0\0\0\0\0\x08", 8));
  EXPECT_EQ(End(7, "a"), kId7 + "a\x01");
  const std::string begin(KeyPrefix(7, "a").bytes());
  const std::string end = End(7, "a");
  for (const std::string& in :
       {ShardKeyOf(7, "a", kNoBucket, 0),
        ShardKeyOf(7, "a", INT64_MAX, UINT32_MAX), MarkerKeyOf(7, "a", "e"),
        MarkerKeyOf(7, "a", "\x7f\x7f")}) {
    EXPECT_LE(begin, in);
    EXPECT_LT(in, end);
  }
  for (const std::string& out :
       {ShardKeyOf(7, "a/x", kNoBucket, 0), ShardKeyOf(7, "ab", kNoBucket, 0),
        MarkerKeyOf(7, "a/x", "e"), ShardKeyOf(7, {}, kNoBucket, 0),
        MarkerKeyOf(7, "\x7f", "e"), ShardKeyOf(6, "a", kNoBucket, 0)}) {
    EXPECT_FALSE(begin <= out && out < end) << HexKey(out);
  }
  // A keyed counter's key ranges lie inside its whole range.
  EXPECT_LE(kId7, begin);
  EXPECT_LT(End(7, std::string(kMaxKeyBytes, '\xff')), End(7, {}));
}

// What no grammar allows is refused: a key without its closing 0x00, a key
// longer than kMaxKeyBytes, a 0-length key (0x00 right after the id, which
// a named key's 4 or 12 remaining bytes cannot follow), a bucket start past
// INT64_MAX, a marker key with no event id after the key.
TEST(CodingKeyed, DecodersRefuseMalformedKeys) {
  ShardKeyParts parts;
  // No 0x00 after the key (the shard index's bytes hold none either).
  EXPECT_FALSE(DecodeAnyShardKey(kId7 + "post\x01\x01\x01\x01", &parts));
  const std::string longest(kMaxKeyBytes, 'k');
  const std::string longest_key = ShardKeyOf(7, longest, kNoBucket, 1);
  EXPECT_TRUE(DecodeAnyShardKey(longest_key, &parts));
  EXPECT_EQ(parts.key, longest);  // a view of longest_key
  const std::string too_long =
      kId7 + longest + "k" + std::string("\0\0\0\0\x01", 5);
  EXPECT_FALSE(DecodeAnyShardKey(too_long, &parts));
  EXPECT_FALSE(DecodeAnyShardKey(kId7 + std::string("\0\0\0\0\x01", 5),
                                 &parts));  // 0-length key
  EXPECT_FALSE(DecodeAnyShardKey(
      kId7 + std::string("\0", 1) + std::string(12, '\x01'), &parts));
  // A key followed by neither 4 nor 12 bytes.
  EXPECT_FALSE(DecodeAnyShardKey(kId7 + std::string("a\0\0\0\x01", 5), &parts));
  EXPECT_FALSE(DecodeAnyShardKey(
      kId7 + std::string("a\0", 2) + std::string(13, '\x01'), &parts));
  // A bucket start past INT64_MAX.
  EXPECT_FALSE(DecodeAnyShardKey(
      kId7 + std::string("a\0\x80\0\0\0\0\0\0\0\0\0\0\0", 14), &parts));
  EXPECT_FALSE(DecodeAnyShardKey(kId7, &parts));
  EXPECT_FALSE(DecodeAnyShardKey({}, &parts));

  uint64_t id = 0;
  std::string_view key, event_id;
  EXPECT_TRUE(
      DecodeAnyMarkerKey(MarkerKeyOf(7, longest, "e"), &id, &key, &event_id));
  EXPECT_FALSE(DecodeAnyMarkerKey(kId7 + longest + "k" + std::string("\0e", 2),
                                  &id, &key, &event_id));
  EXPECT_FALSE(DecodeAnyMarkerKey(kId7 + std::string("\0e", 2), &id, &key,
                                  &event_id));  // 0-length key
  EXPECT_FALSE(DecodeAnyMarkerKey(kId7 + std::string("post\0", 5), &id, &key,
                                  &event_id));  // no event id
  EXPECT_FALSE(DecodeAnyMarkerKey(kId7, &id, &key, &event_id));
}

// DeleteKey's range, [KeyPrefix, End), decodes to its counter and key (the
// WAL dump names them); no other pair of bounds does.
TEST(CodingKeyed, KeyRangeDecodesOnlyAKeysBounds) {
  uint64_t id = 0;
  std::string_view key;
  const std::string begin(KeyPrefix(7, "post-1").bytes());
  ASSERT_TRUE(DecodeKeyRange(begin, End(7, "post-1"), &id, &key));
  EXPECT_EQ(id, 7u);
  EXPECT_EQ(key, "post-1");
  const std::string longest(kMaxKeyBytes, 'k');
  const KeyPrefix longest_prefix(7, longest);  // key views its bytes
  ASSERT_TRUE(
      DecodeKeyRange(longest_prefix.bytes(), End(7, longest), &id, &key));
  EXPECT_EQ(key, longest);
  // A whole counter's range, another key's end, a key without its 0x00,
  // a 0-length key, a too-long key.
  EXPECT_FALSE(DecodeKeyRange(kId7, End(7, {}), &id, &key));
  EXPECT_FALSE(DecodeKeyRange(begin, End(7, "post-2"), &id, &key));
  EXPECT_FALSE(DecodeKeyRange(begin, End(8, "post-1"), &id, &key));
  EXPECT_FALSE(DecodeKeyRange(kId7 + "post-1", kId7 + "post-2", &id, &key));
  EXPECT_FALSE(DecodeKeyRange(kId7 + std::string("\0", 1),
                              kId7 + std::string("\x01", 1), &id, &key));
  EXPECT_FALSE(DecodeKeyRange(kId7 + longest + std::string("k\0", 2),
                              kId7 + longest + std::string("k\x01", 2), &id,
                              &key));
  EXPECT_FALSE(DecodeKeyRange(kId7 + std::string("a\0b\0", 4),
                              kId7 + std::string("a\0b\x01", 4), &id, &key));
}

TopKeysResult SampleTop() {
  TopKeysResult top;
  top.sequence = 90;
  top.as_of_ms = 1'764'547'200'000;
  top.key_count = 3;
  top.total = 12;
  top.keys = {{"post-1", 7}, {"a", 5}};
  return top;
}

// The stored top list, byte for byte (docs/format.md, "rollups"), and back.
TEST(CodingKeyed, TopListRoundTrips) {
  std::string bytes;
  EncodeTopList(SampleTop(), &bytes);
  const std::string le90("\x5a\0\0\0\0\0\0\0", 8);
  EXPECT_EQ(bytes.substr(0, 8), le90);
  EXPECT_EQ(bytes.size(), 36u + (8 + 1 + 6) + (8 + 1 + 1));
  EXPECT_EQ(bytes.substr(32, 4), std::string("\x02\0\0\0", 4));
  EXPECT_EQ(bytes.substr(36, 15),
            std::string("\x07\0\0\0\0\0\0\0\x06post-1", 15));
  TopKeysResult back;
  ASSERT_TRUE(DecodeTopList(bytes, &back));
  EXPECT_EQ(back.sequence, 90u);
  EXPECT_EQ(back.as_of_ms, 1'764'547'200'000);
  EXPECT_EQ(back.key_count, 3u);
  EXPECT_EQ(back.total, 12);
  ASSERT_EQ(back.keys.size(), 2u);
  EXPECT_EQ(back.keys[0].key, "post-1");
  EXPECT_EQ(back.keys[0].value, 7);
  EXPECT_EQ(back.keys[1].key, "a");
  EXPECT_EQ(back.keys[1].value, 5);
}

// Out-of-range keys (issue 28, item 5) add the tail: their count and the
// first of them; without any the bytes are those above, unchanged.
TEST(CodingKeyed, TopListCarriesItsOutOfRangeKeys) {
  TopKeysResult top = SampleTop();
  std::string plain;
  EncodeTopList(top, &plain);
  top.out_of_range_keys = 2;
  top.first_out_of_range_key = "bad";
  std::string bytes;
  EncodeTopList(top, &bytes);
  EXPECT_EQ(bytes, plain + std::string("\x02\0\0\0\0\0\0\0\x03" "bad", 12));
  TopKeysResult back;
  ASSERT_TRUE(DecodeTopList(bytes, &back));
  EXPECT_EQ(back.out_of_range_keys, 2u);
  EXPECT_EQ(back.first_out_of_range_key, "bad");
  EXPECT_EQ(back.keys.size(), 2u);
  ASSERT_TRUE(DecodeTopList(plain, &back));  // and a list without them
  EXPECT_EQ(back.out_of_range_keys, 0u);
  EXPECT_EQ(back.first_out_of_range_key, "");
  // Every cut of the tail, a count of 0 or above key_count, an empty key
  // and a byte after the key are refused.
  for (size_t n = plain.size() + 1; n < bytes.size(); ++n) {
    EXPECT_FALSE(DecodeTopList(std::string_view(bytes).substr(0, n), &back))
        << n;
  }
  for (const char count : {'\0', '\x04'}) {  // key_count is 3
    std::string bad = bytes;
    bad[plain.size()] = count;
    EXPECT_FALSE(DecodeTopList(bad, &back)) << int{count};
  }
  std::string empty_key = plain + std::string("\x01\0\0\0\0\0\0\0\0", 9);
  EXPECT_FALSE(DecodeTopList(empty_key, &back));
  EXPECT_FALSE(DecodeTopList(bytes + "x", &back));
}

// Every proper prefix, a trailing byte, a 0-length or too-long key and a
// count above kMaxTopKeys are refused.
TEST(CodingKeyed, TopListRefusesMalformedBytes) {
  std::string bytes;
  EncodeTopList(SampleTop(), &bytes);
  TopKeysResult back;
  for (size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_FALSE(DecodeTopList(std::string_view(bytes).substr(0, n), &back))
        << n;
  }
  EXPECT_FALSE(DecodeTopList(bytes + "x", &back));
  std::string zero_len = bytes;
  zero_len[36 + 8] = '\0';  // the first key's length
  EXPECT_FALSE(DecodeTopList(zero_len, &back));
  std::string too_long = bytes;
  too_long[36 + 8] = static_cast<char>(kMaxKeyBytes + 1);
  too_long.append(kMaxKeyBytes, 'k');
  EXPECT_FALSE(DecodeTopList(too_long, &back));
  TopKeysResult none = SampleTop();
  none.keys.clear();
  EncodeTopList(none, &bytes);
  ASSERT_TRUE(DecodeTopList(bytes, &back));
  EXPECT_TRUE(back.keys.empty());
  const uint32_t many = kMaxTopKeys + 1;
  bytes[32] = static_cast<char>(many & 0xff);
  bytes[33] = static_cast<char>(many >> 8);
  EXPECT_FALSE(DecodeTopList(bytes, &back));
}

}  // namespace
}  // namespace tally::engine
