// Conformance: reads of keyed counters (ReadKeys, ListKeys, TopKeys,
// DeleteKey) and cached totals (RollupNow, ReadCached).
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "conformance/conformance.h"
#include "tally/limits.h"

namespace tally::conformance {
namespace {

class Reads : public ConformanceTest {
 protected:
  static CounterSpec Keyed(uint32_t shards) {
    CounterSpec spec;
    spec.shards = shards;
    spec.keyed = true;
    return spec;
  }
};

TEST_P(Reads, ReadKeysAnswersInTheOrderGiven) {
  ASSERT_OK(db_->CreateCounter("likes", Keyed(8)));
  for (int i = 0; i < 30; ++i) {
    ASSERT_OK(db_->Increment({"likes", "p" + std::to_string(i)}, i + 1));
  }
  const std::vector<std::string_view> keys = {"p29", "p0", "missing", "p7",
                                              "p29"};
  const std::vector<int64_t> values = Got(db_->ReadKeys("likes", keys));
  EXPECT_EQ(values, (std::vector<int64_t>{30, 1, 0, 8, 30}));
  for (size_t i = 0; i < keys.size(); ++i) {
    EXPECT_EQ(Got(db_->ReadExact({"likes", keys[i]})), values.at(i)) << keys[i];
  }
  EXPECT_TRUE(Fails(db_->ReadKeys("likes", {}), Code::kInvalidArgument));
  const std::vector<std::string_view> too_many(kMaxReadKeys + 1, "p1");
  EXPECT_TRUE(Fails(db_->ReadKeys("likes", too_many), Code::kInvalidArgument));
  EXPECT_TRUE(
      Fails(db_->ReadKeys("likes", {"p1", ""}), Code::kInvalidArgument, "1"));
  const std::vector<std::string_view> most(kMaxReadKeys, "p2");
  const std::vector<int64_t> many = Got(db_->ReadKeys("likes", most));
  ASSERT_EQ(many.size(), kMaxReadKeys);
  EXPECT_EQ(many.back(), 3);
}

TEST_P(Reads, ListKeysPagesInKeyByteOrderUnderAPrefix) {
  ASSERT_OK(db_->CreateCounter("views", Keyed(2)));
  std::map<std::string, int64_t> want;
  for (int i = 0; i < 12; ++i) {
    const std::string key = (i % 3 == 0   ? "a/"
                             : i % 3 == 1 ? "ab/"
                                          : "b/") +
                            std::to_string(i);
    ASSERT_OK(db_->Increment({"views", key}, i + 1));
    ASSERT_OK(db_->Increment({"views", key}, 1));
    want[key] = i + 2;
  }
  ASSERT_OK(db_->Increment({"views", "a"}, 7));  // "a" sorts before "a/..."
  want["a"] = 7;
  ASSERT_OK(db_->Increment({"views", "zero"}, 3));  // sums to 0: listed
  ASSERT_OK(db_->Increment({"views", "zero"}, -3));
  want["zero"] = 0;
  std::vector<KeyValue> all;
  ListKeysOptions o;
  o.limit = 4;
  for (int pages = 0; pages < 10; ++pages) {
    const std::vector<KeyValue> page = Got(db_->ListKeys("views", o));
    if (page.empty()) break;
    ASSERT_LE(page.size(), 4u);
    all.insert(all.end(), page.begin(), page.end());
    o.start_after = page.back().key;
  }
  ASSERT_EQ(all.size(), want.size());
  auto w = want.begin();
  for (const KeyValue& kv : all) {
    EXPECT_EQ(kv.key, w->first);
    EXPECT_EQ(kv.value, w->second) << kv.key;
    EXPECT_FALSE(kv.out_of_range);
    ++w;
  }
  ListKeysOptions p;
  p.prefix = "a/";
  const std::vector<KeyValue> a = Got(db_->ListKeys("views", p));
  EXPECT_EQ(a.size(), 4u);
  for (const KeyValue& kv : a) EXPECT_EQ(kv.key.rfind("a/", 0), 0u) << kv.key;
  p.prefix = "a";
  EXPECT_EQ(Got(db_->ListKeys("views", p)).size(), 9u);  // a, a/*, ab/*
  p.limit = 0;
  EXPECT_TRUE(Fails(db_->ListKeys("views", p), Code::kInvalidArgument));
  p.limit = kMaxListKeys + 1;
  EXPECT_TRUE(Fails(db_->ListKeys("views", p), Code::kInvalidArgument));
}

TEST_P(Reads, TopKeysExactNowOrFromTheLastRollUp) {
  ASSERT_OK(db_->CreateCounter("likes", Keyed(2)));
  int64_t total = 0;
  for (int i = 0; i < 50; ++i) {
    const int64_t v = (i * 37) % 23;  // ties included
    ASSERT_OK(db_->Increment({"likes", "p" + std::to_string(i)}, v));
    total += v;
  }
  const TopKeysResult exact = Got(db_->TopKeys("likes", 10, {true}));
  EXPECT_TRUE(exact.exact);
  EXPECT_EQ(exact.key_count, 50u);
  EXPECT_EQ(exact.total, total);
  EXPECT_EQ(exact.lag_ms, 0);
  ASSERT_EQ(exact.keys.size(), 10u);
  for (size_t i = 1; i < exact.keys.size(); ++i) {
    const KeyValue& a = exact.keys[i - 1];
    const KeyValue& b = exact.keys[i];
    EXPECT_TRUE(a.value > b.value || (a.value == b.value && a.key < b.key))
        << a.key << "=" << a.value << " before " << b.key << "=" << b.value;
  }
  EXPECT_EQ(exact.keys[0].value, 22);
  // Never rolled up: the first cached read rolls it up.
  const TopKeysResult cached = Got(db_->TopKeys("likes", 10));
  EXPECT_FALSE(cached.exact);
  ASSERT_EQ(cached.keys.size(), 10u);
  for (size_t i = 0; i < 10; ++i) {
    EXPECT_EQ(cached.keys[i].key, exact.keys[i].key);
    EXPECT_EQ(cached.keys[i].value, exact.keys[i].value);
  }
  EXPECT_EQ(cached.as_of_ms, kStart);
  EXPECT_EQ(Got(db_->ReadCached("likes")).value, total);
  // Later increments wait for the next roll-up.
  ASSERT_OK(db_->Increment({"likes", "celebrity"}, 1000));
  clock_.Advance(5 * kSecond);
  const TopKeysResult stale = Got(db_->TopKeys("likes", 1));
  ASSERT_EQ(stale.keys.size(), 1u);
  EXPECT_NE(stale.keys[0].key, "celebrity");
  EXPECT_EQ(stale.lag_ms, 5 * kSecond);
  ASSERT_OK(db_->RollupNow("likes"));
  const TopKeysResult fresh = Got(db_->TopKeys("likes", 1));
  ASSERT_EQ(fresh.keys.size(), 1u);
  EXPECT_EQ(fresh.keys[0].key, "celebrity");
  EXPECT_EQ(fresh.total, total + 1000);
  EXPECT_EQ(fresh.key_count, 51u);
  EXPECT_EQ(fresh.as_of_ms, kStart + 5 * kSecond);
  EXPECT_TRUE(Fails(db_->TopKeys("likes", 0), Code::kInvalidArgument));
  EXPECT_TRUE(
      Fails(db_->TopKeys("likes", kMaxTopKeys + 1), Code::kInvalidArgument));
}

TEST_P(Reads, ReadCachedIsExactAsOfItsRollUp) {
  ASSERT_OK(db_->CreateCounter("c", CounterSpec{4}));
  for (int i = 1; i <= 10; ++i) ASSERT_OK(db_->Increment("c", i));
  // Never rolled up: rolled up by the read.
  const CachedValue first = Got(db_->ReadCached("c"));
  EXPECT_EQ(first.value, 55);
  EXPECT_EQ(first.as_of_ms, kStart);
  EXPECT_EQ(first.lag_ms, 0);
  clock_.Advance(1500);
  ASSERT_OK(db_->IncrementOnce("c", "e1", 5));
  ASSERT_OK(db_->Increment("c", 2));
  const CachedValue stale = Got(db_->ReadCached("c"));
  EXPECT_EQ(stale.value, 55);
  EXPECT_EQ(stale.as_of_ms, kStart);
  EXPECT_EQ(stale.lag_ms, 1500);
  // This process rolled it up, so it knows what came since.
  EXPECT_TRUE(stale.lag_increments_known);
  EXPECT_EQ(stale.lag_increments, 2u);
  ASSERT_OK(db_->RollupNow());  // every counter
  const CachedValue fresh = Got(db_->ReadCached("c"));
  EXPECT_EQ(fresh.value, 62);
  EXPECT_EQ(fresh.value, Got(db_->ReadExact("c")));
  EXPECT_EQ(fresh.as_of_ms, kStart + 1500);
  EXPECT_EQ(fresh.lag_ms, 0);
  EXPECT_EQ(fresh.lag_increments, 0u);
  // A keyed counter's cached total is the sum over its keys.
  ASSERT_OK(db_->CreateCounter("k", Keyed(1)));
  ASSERT_OK(db_->Increment({"k", "a"}, 3));
  ASSERT_OK(db_->Increment({"k", "b"}, 4));
  EXPECT_EQ(Got(db_->ReadCached("k")).value, 7);
}

TEST_P(Reads, DeleteKeyRemovesOneKeyWithItsMarkers) {
  ASSERT_OK(db_->CreateCounter("likes", Keyed(2)));
  ASSERT_OK(db_->IncrementOnce({"likes", "p1"}, "u1", 1));
  ASSERT_OK(db_->IncrementOnce({"likes", "p1"}, "u2", 1));
  ASSERT_OK(db_->IncrementOnce({"likes", "p10"}, "u1", 1));  // p1's neighbour
  ASSERT_OK(db_->IncrementOnce({"likes", "p2"}, "u1", 1));
  ASSERT_OK(db_->DeleteKey("likes", "p1"));
  EXPECT_EQ(Got(db_->ReadExact({"likes", "p1"})), 0);
  EXPECT_EQ(Got(db_->ReadExact({"likes", "p10"})), 1);
  EXPECT_EQ(Got(db_->ReadExact({"likes", "p2"})), 1);
  EXPECT_EQ(Got(db_->CountMarkers({"likes", "p1"})), 0u);
  EXPECT_EQ(Got(db_->CountMarkers("likes")), 2u);
  const std::vector<KeyValue> keys = Got(db_->ListKeys("likes", {}));
  ASSERT_EQ(keys.size(), 2u);
  EXPECT_EQ(keys[0].key, "p10");
  EXPECT_EQ(keys[1].key, "p2");
  // A redelivery after the delete counts again: its marker went too.
  EXPECT_EQ(Got(db_->IncrementOnce({"likes", "p1"}, "u1", 1)).outcome,
            Outcome::kApplied);
  EXPECT_EQ(Got(db_->ReadExact({"likes", "p1"})), 1);
  ASSERT_OK(db_->DeleteKey("likes", "never-seen"));
}

TALLY_CONFORMANCE_SUITE(Reads);

}  // namespace
}  // namespace tally::conformance
