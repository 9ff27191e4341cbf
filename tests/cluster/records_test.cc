// The cluster backend's reservation and roll-up records (cluster/
// records.h): what they encode reads back the same, and a reader refuses
// what is not one (Corruption naming the key), since a damaged or foreign
// value at a reservation's key must never count as held units, nor one at
// a roll-up's as a cached total.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cluster/records.h"
#include "tally/limits.h"

namespace tally::cluster {
namespace {

core::HoldRecord Open(std::string id, int64_t units, int64_t expires) {
  core::HoldRecord h;
  h.reservation_id = std::move(id);
  h.counter_id = 7;
  h.units = units;
  h.expires_at_ms = expires;
  return h;
}

TEST(ClusterRecords, OpenHoldsReadBackWithAnyIdBytes) {
  const std::vector<core::HoldRecord> open = {
      Open("cart-1", 3, 1796127300000), Open("a b\xc3\xa9", 1, 5),
      Open("x", kMaxDelta, 9)};
  const std::string bytes = EncodeOpenHolds(open);
  EXPECT_EQ(bytes.substr(0, 22), "h1 636172742d31 3 1796");
  std::vector<core::HoldRecord> back;
  ASSERT_TRUE(DecodeOpenHolds("k", bytes, 7, &back).ok());
  ASSERT_EQ(back.size(), open.size());
  for (size_t i = 0; i < open.size(); ++i) {
    EXPECT_EQ(back[i].reservation_id, open[i].reservation_id);
    EXPECT_EQ(back[i].units, open[i].units);
    EXPECT_EQ(back[i].expires_at_ms, open[i].expires_at_ms);
    EXPECT_EQ(back[i].counter_id, 7u);
    EXPECT_EQ(back[i].state, static_cast<uint8_t>(HoldState::kHeld));
  }
}

TEST(ClusterRecords, MalformedOpenHoldsAreRefused) {
  for (const char* bad :
       {"", "0", "h1", "h2 61 1 5", "h1 61 1", "h1 61 0 5", "h1 61 -1 5",
        "h1 6 1 5", "h1 6g 1 5", "h1 61 1 5 ", "h1  61 1 5", "h1 61 1 x",
        "h1 61 1 5 62 1", "h1 61 1.5 5"}) {
    std::vector<core::HoldRecord> out;
    const Status s = DecodeOpenHolds("tally:ns:{7.0}:h", bad, 7, &out);
    EXPECT_TRUE(s.IsCorruption()) << "'" << bad << "': " << s.ToString();
    EXPECT_NE(s.message().find("tally:ns:{7.0}:h"), std::string::npos);
  }
  std::string many = "h1";
  for (size_t i = 0; i <= kMaxOpenHolds; ++i) many += " 61 1 5";
  std::vector<core::HoldRecord> out;
  EXPECT_TRUE(DecodeOpenHolds("k", many, 7, &out).IsCorruption())
      << "more than kMaxOpenHolds entries";
}

TEST(ClusterRecords, ReservationRecordsReadBackAndRefuseDamage) {
  core::HoldRecord h = Open("r", 3, 1796127300000);
  h.created_at_ms = 1796126400000;
  h.state = static_cast<uint8_t>(HoldState::kCommitted);
  h.closed_at_ms = 1796126460000;
  const std::string bytes = EncodeHold(h);
  EXPECT_EQ(bytes, "r1 3 1796126400000 1796127300000 1 1796126460000");
  core::HoldRecord back;
  ASSERT_TRUE(DecodeHold("k", bytes, 7, &back).ok());
  EXPECT_EQ(back.units, 3);
  EXPECT_EQ(back.created_at_ms, h.created_at_ms);
  EXPECT_EQ(back.expires_at_ms, h.expires_at_ms);
  EXPECT_EQ(back.state, h.state);
  EXPECT_EQ(back.closed_at_ms, h.closed_at_ms);
  for (const char* bad :
       {"r1 3 1 2 1", "r1 0 1 2 1 5", "r1 3 2 2 1 5", "r1 3 1 2 5 5",
        "r1 3 1 2 0 5", "r1 3 1 2 1 0", "m1 3 1 2 1 5"}) {
    EXPECT_TRUE(DecodeHold("k", bad, 7, &back).IsCorruption()) << bad;
  }
}

TEST(ClusterRecords, RollupsReadBackAndRefuseDamage) {
  TopKeysResult top;
  top.as_of_ms = 1'796'126'400'000;
  top.key_count = 4;
  top.total = -5;
  top.out_of_range_keys = 1;
  top.first_out_of_range_key = "big key";
  top.keys = {{"a b", 7}, {std::string("\0\xff", 2), -12}};
  const std::string record = EncodeRollup(top);
  TopKeysResult back;
  ASSERT_TRUE(DecodeRollup("k", record, &back).ok()) << record;
  EXPECT_EQ(back.as_of_ms, top.as_of_ms);
  EXPECT_EQ(back.key_count, 4u);
  EXPECT_EQ(back.total, -5);
  EXPECT_EQ(back.out_of_range_keys, 1u);
  EXPECT_EQ(back.first_out_of_range_key, "big key");
  ASSERT_EQ(back.keys.size(), 2u);
  EXPECT_EQ(back.keys[1].key, std::string("\0\xff", 2));
  EXPECT_EQ(back.keys[1].value, -12);

  TopKeysResult named;  // a named counter's: no keys
  named.total = 9;
  ASSERT_TRUE(DecodeRollup("k", EncodeRollup(named), &back).ok());
  EXPECT_EQ(back.total, 9);
  EXPECT_TRUE(back.keys.empty());

  for (const std::string& bad :
       {std::string(), std::string("u1"), record + " 3",
        record.substr(0, record.size() - 1) + "g", "u2" + record.substr(2),
        std::string("u1 1 0 0 0 1 x 5 x"), std::string("u1 1 0 0 0 2 x 5 x61"),
        std::string("u1 1 -1 0 0 0 x")}) {
    const Status s = DecodeRollup("the-key", bad, &back);
    EXPECT_TRUE(s.IsCorruption()) << bad;
    EXPECT_NE(s.message().find("the-key"), std::string::npos);
  }
}

}  // namespace
}  // namespace tally::cluster
