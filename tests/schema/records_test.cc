// FlatBuffer records round-trip, and bytes that are not a valid record of
// the expected kind are Corruption, never garbage.
#include "schema/records.h"

#include <gtest/gtest.h>

namespace tally::schema {
namespace {

TEST(Records, RoundTrip) {
  std::string bytes;
  CounterRecord c{7, "orders-today", 10, 1, 1, 1234, 0};
  EncodeCounter(c, &bytes);
  CounterRecord c2;
  ASSERT_TRUE(DecodeCounter(bytes, &c2).ok());
  EXPECT_EQ(c2.id, 7u);
  EXPECT_EQ(c2.name, "orders-today");
  EXPECT_EQ(c2.shard_count, 10u);
  EXPECT_EQ(c2.policy, 1);

  EncodeMarker("ORDER_ACCEPTED:ord-1", 7, 3, -5, 99, &bytes);
  MarkerRecord m;
  ASSERT_TRUE(DecodeMarker(bytes, &m).ok());
  EXPECT_EQ(m.event_id, "ORDER_ACCEPTED:ord-1");
  EXPECT_EQ(m.counter_id, 7u);
  EXPECT_EQ(m.shard, 3u);
  EXPECT_EQ(m.delta, -5);
  EXPECT_FALSE(m.strict);
  MarkerAnswer a;
  ASSERT_TRUE(DecodeMarkerAnswer(bytes, &a).ok());
  EXPECT_EQ(a.delta, -5);
  EXPECT_EQ(a.shard, 3u);
  EXPECT_FALSE(a.strict);

  // A strict counter's marker keeps the event's answer.
  const StrictAnswer refused{true, -2, 0};
  EncodeMarker("take-1", 7, 0, 0, 99, &bytes, 0, false, &refused);
  ASSERT_TRUE(DecodeMarker(bytes, &m).ok());
  EXPECT_TRUE(m.strict);
  EXPECT_TRUE(m.answer.refused);
  EXPECT_EQ(m.answer.asked, -2);
  EXPECT_EQ(m.delta, 0);
  ASSERT_TRUE(DecodeMarkerAnswer(bytes, &a).ok());
  EXPECT_TRUE(a.strict && a.answer.refused);
  EXPECT_EQ(a.answer.asked, -2);

  HeaderRecord h{1, 42, 5, "abcd"};
  EncodeHeader(h, &bytes);
  HeaderRecord h2;
  ASSERT_TRUE(DecodeHeader(bytes, &h2).ok());
  EXPECT_EQ(h2.next_counter_id, 42u);
  EXPECT_EQ(h2.db_id, "abcd");
}

// RocksDB values may sit at any address: decoding must not depend on the
// caller's alignment (UBSan caught misaligned loads here).
TEST(Records, DecodesAtEveryAlignment) {
  std::string good;
  EncodeMarker("evt", 9, 1, -77, 5, &good);
  for (size_t offset = 0; offset < 8; ++offset) {
    std::string shifted(offset, 'x');
    shifted += good;
    MarkerRecord m;
    ASSERT_TRUE(DecodeMarker(std::string_view(shifted).substr(offset), &m).ok());
    EXPECT_EQ(m.delta, -77);
  }
}

TEST(Records, WrongKindIsCorruption) {
  std::string bytes;
  EncodeMarker("e", 1, 0, 1, 0, &bytes);
  CounterRecord c;
  EXPECT_TRUE(DecodeCounter(bytes, &c).IsCorruption());
}

// Every truncation and every single-byte flip of a marker either decodes to
// a verified record or is Corruption; none crashes (run under ASAN too).
TEST(Records, TruncatedAndFlippedBytesAreCaught) {
  std::string good;
  EncodeMarker("ORDER_ACCEPTED:ord-1", 7, 3, 5, 99, &good);
  MarkerRecord m;
  // A cut that only drops trailing alignment padding still holds the whole
  // record; any cut that loses content must be refused.
  for (size_t n = 0; n < good.size(); ++n) {
    Status s = DecodeMarker(good.substr(0, n), &m);
    if (s.ok()) {
      EXPECT_EQ(m.event_id, "ORDER_ACCEPTED:ord-1") << n;
      EXPECT_EQ(m.delta, 5) << n;
      EXPECT_GT(n, good.size() - 8) << "only padding may be cut";
    } else {
      EXPECT_TRUE(s.IsCorruption()) << n;
    }
  }
  size_t caught = 0;
  for (size_t i = 0; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] = static_cast<char>(bad[i] ^ 0x5a);
    if (!DecodeMarker(bad, &m).ok()) ++caught;
  }
  EXPECT_GT(caught, 0u);
}

}  // namespace
}  // namespace tally::schema
