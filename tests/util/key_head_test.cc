// KeyHead and KeyHeads (util/key_head.h): sorting by heads first, then by
// the whole key on equal heads, gives bytewise order, for keys that are
// prefixes of each other, hold 0 bytes, share their first 8 or 16 bytes,
// or are empty.

#include "util/key_head.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

namespace tally {
namespace {

bool HeadsFirst(const std::string& a, const std::string& b) {
  const KeyHeads ha = KeyHeads::Of(a), hb = KeyHeads::Of(b);
  if (!(ha == hb)) return ha < hb;
  return a < b;
}

TEST(KeyHead, IsTheBigEndianPrefixZeroPadded) {
  EXPECT_EQ(KeyHead(""), 0u);
  EXPECT_EQ(KeyHead(std::string("\x01", 1)), uint64_t{1} << 56);
  EXPECT_EQ(KeyHead("ABCDEFGHIJ"), 0x4142434445464748u);
  EXPECT_EQ(KeyHead("ABCDEFGHIJ", 8), 0x494A000000000000u);
  EXPECT_EQ(KeyHead("AB", 8), 0u);
}

TEST(KeyHead, HeadsThenKeysSortInBytewiseOrder) {
  std::mt19937_64 rng(20261206);
  // Few distinct bytes, 0 among them, and lengths around 8 and 16, so that
  // prefixes, equal heads and padding-against-0 cases are common.
  const std::string alphabet("\x00\x01\x7f\x80\xff", 5);
  for (int round = 0; round < 200; ++round) {
    std::vector<std::string> keys;
    for (int i = 0; i < 200; ++i) {
      std::string k(rng() % 20, '\0');
      for (char& c : k) c = alphabet[rng() % alphabet.size()];
      keys.push_back(k);
    }
    std::vector<std::string> want = keys, got = keys;
    std::sort(want.begin(), want.end());
    std::sort(got.begin(), got.end(), HeadsFirst);
    ASSERT_EQ(got, want) << "round " << round;
  }
}

TEST(KeyHead, APrefixSortsBeforeItsExtensionByZero) {
  const std::string a("ab"), b("ab\0", 3), c("ab\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 17);
  EXPECT_TRUE(HeadsFirst(a, b));
  EXPECT_TRUE(HeadsFirst(b, c));
  EXPECT_FALSE(HeadsFirst(c, a));
}

}  // namespace
}  // namespace tally
