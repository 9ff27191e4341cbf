// Conformance: the counter catalog (create, describe, list, delete),
// named and keyed counters, names and specs refused, and what a database
// keeps across a reopen.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "conformance/conformance.h"
#include "tally/limits.h"

namespace tally::conformance {
namespace {

class Counters : public ConformanceTest {};

TEST_P(Counters, CreateDescribeAndListInNameOrder) {
  CounterSpec views;
  views.shards = 8;
  CounterSpec likes;
  likes.shards = 2;
  likes.policy = ShardPolicy::kAffinity;
  likes.keyed = true;
  likes.dedupe_window_ms = kHour;
  CounterSpec calls;
  calls.bounds = CounterBounds::Between(0, 100);
  calls.bucket = BucketWidth::kMinute;
  calls.retention_ms = kDay;
  calls.sliding = true;
  ASSERT_OK(db_->CreateCounter("views", views));
  clock_.Advance(kSecond);
  ASSERT_OK(db_->CreateCounter("likes", likes));
  ASSERT_OK(db_->CreateCounter("calls", calls));

  const CounterInfo v = Got(db_->DescribeCounter("views"));
  EXPECT_EQ(v.name, "views");
  EXPECT_EQ(v.shards, 8u);
  EXPECT_EQ(v.policy, ShardPolicy::kRandom);
  EXPECT_EQ(v.created_at_ms, kStart);  // from Options::clock
  EXPECT_EQ(v.flags, 0u);              // no plain increment yet
  EXPECT_FALSE(v.keyed);
  EXPECT_FALSE(v.bounds.any());
  const CounterInfo l = Got(db_->DescribeCounter("likes"));
  EXPECT_EQ(l.created_at_ms, kStart + kSecond);
  EXPECT_EQ(l.policy, ShardPolicy::kAffinity);
  EXPECT_TRUE(l.keyed);
  EXPECT_EQ(l.dedupe_window_ms, kHour);
  const CounterInfo c = Got(db_->DescribeCounter("calls"));
  EXPECT_EQ(c.shards, 1u);
  EXPECT_EQ(c.bucket, BucketWidth::kMinute);
  EXPECT_EQ(c.retention_ms, kDay);
  EXPECT_TRUE(c.sliding);
  EXPECT_TRUE(c.bounds.has_min && c.bounds.has_max);
  EXPECT_EQ(c.bounds.min, 0);
  EXPECT_EQ(c.bounds.max, 100);

  const std::vector<CounterInfo> list = Got(db_->ListCounters());
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[0].name, "calls");
  EXPECT_EQ(list[1].name, "likes");
  EXPECT_EQ(list[2].name, "views");
  EXPECT_NE(list[0].id, list[1].id);
  EXPECT_NE(list[1].id, list[2].id);
  EXPECT_NE(list[0].id, list[2].id);
  EXPECT_EQ(list[2].id, v.id);
}

TEST_P(Counters, ATakenNameAndAMissingOneAreRefused) {
  ASSERT_OK(db_->CreateCounter("c", CounterSpec{}));
  EXPECT_TRUE(Fails(db_->CreateCounter("c", CounterSpec{4}),
                    Code::kAlreadyExists, "c"));
  ASSERT_OK(db_->DeleteCounter("c"));
  EXPECT_TRUE(Fails(db_->DescribeCounter("c"), Code::kNotFound));
  EXPECT_TRUE(Fails(db_->DeleteCounter("c"), Code::kNotFound));
  EXPECT_TRUE(Got(db_->ListCounters()).empty());
  // Every call naming a counter that does not exist: NotFound.
  EXPECT_TRUE(Fails(db_->Increment("nope", 1), Code::kNotFound, "nope"));
  EXPECT_TRUE(Fails(db_->IncrementOnce("nope", "e", 1), Code::kNotFound));
  EXPECT_TRUE(Fails(db_->ReadExact("nope"), Code::kNotFound));
  EXPECT_TRUE(Fails(db_->ShardCounts("nope"), Code::kNotFound));
  EXPECT_TRUE(Fails(db_->Reset("nope", "r"), Code::kNotFound));
  EXPECT_TRUE(Fails(db_->CountMarkers("nope"), Code::kNotFound));
  EXPECT_TRUE(Fails(db_->GetMarker("nope", "e"), Code::kNotFound));
  EXPECT_TRUE(Fails(db_->ReadCached("nope"), Code::kNotFound));
  EXPECT_TRUE(Fails(db_->ReadKeys("nope", {"k"}), Code::kNotFound));
  EXPECT_TRUE(Fails(db_->RollupNow("nope"), Code::kNotFound));
}

TEST_P(Counters, BadNamesAndSpecsAreRefusedAndCreateNothing) {
  for (const std::string& name :
       {std::string(), std::string(kMaxNameBytes + 1, 'n'),
        std::string("tab\there"), std::string("a\0b", 3),
        std::string("\xff\xfe")}) {
    EXPECT_TRUE(
        Fails(db_->CreateCounter(name, CounterSpec{}), Code::kInvalidArgument))
        << "name of " << name.size() << " bytes";
  }
  auto spec = [](auto change) {
    CounterSpec s;
    change(s);
    return s;
  };
  const std::vector<CounterSpec> bad = {
      spec([](CounterSpec& s) { s.shards = 0; }),
      spec([](CounterSpec& s) { s.shards = kMaxShards + 1; }),
      spec([](CounterSpec& s) { s.dedupe_window_ms = -1; }),
      spec([](CounterSpec& s) { s.dedupe_window_ms = kMaxDedupeWindowMs + 1; }),
      spec([](CounterSpec& s) { s.retention_ms = kDay; }),  // no buckets
      spec([](CounterSpec& s) {
        s.bucket = BucketWidth::kDay;
        s.retention_ms = kMaxRetentionMs + 1;
      }),
      spec([](CounterSpec& s) {  // strict counters are never sharded
        s.bounds = CounterBounds::AtLeast(0);
        s.shards = 4;
      }),
      spec([](CounterSpec& s) { s.bounds = CounterBounds::AtLeast(1); }),
      spec([](CounterSpec& s) { s.bounds = CounterBounds::AtMost(-1); }),
      spec([](CounterSpec& s) {  // sliding needs buckets
        s.bounds = CounterBounds::Between(0, 10);
        s.sliding = true;
      }),
  };
  for (size_t i = 0; i < bad.size(); ++i) {
    EXPECT_TRUE(Fails(db_->CreateCounter("c", bad[i]), Code::kInvalidArgument))
        << "spec " << i;
  }
  EXPECT_TRUE(Got(db_->ListCounters()).empty());
  // The longest name is a name.
  ASSERT_OK(db_->CreateCounter(std::string(kMaxNameBytes, 'n'), CounterSpec{}));
  EXPECT_EQ(Got(db_->ListCounters()).size(), 1u);
}

TEST_P(Counters, ARecreatedNameStartsEmptyWithANewId) {
  ASSERT_OK(db_->CreateCounter("c", CounterSpec{4}));
  const uint64_t old_id = Got(db_->DescribeCounter("c")).id;
  ASSERT_OK(db_->Increment("c", 5));
  ASSERT_OK(db_->IncrementOnce("c", "evt-1", 7));
  ASSERT_OK(db_->DeleteCounter("c"));
  ASSERT_OK(db_->CreateCounter("c", CounterSpec{4}));
  EXPECT_NE(Got(db_->DescribeCounter("c")).id, old_id);
  EXPECT_EQ(Got(db_->ReadExact("c")), 0);
  EXPECT_EQ(Got(db_->CountMarkers("c")), 0u);
  EXPECT_EQ(Got(db_->IncrementOnce("c", "evt-1", 7)).outcome,
            Outcome::kApplied);
  EXPECT_EQ(Got(db_->ReadExact("c")), 7);
}

TEST_P(Counters, KeyedAndNamedCountersRefuseTheOtherKindOfCall) {
  CounterSpec keyed;
  keyed.keyed = true;
  ASSERT_OK(db_->CreateCounter("likes", keyed));
  ASSERT_OK(db_->CreateCounter("orders", CounterSpec{}));
  EXPECT_TRUE(
      Fails(db_->Increment("likes", 1), Code::kInvalidArgument, "likes"));
  EXPECT_TRUE(Fails(db_->Increment({"orders", "k"}, 1), Code::kInvalidArgument,
                    "orders"));
  EXPECT_TRUE(
      Fails(db_->IncrementOnce("likes", "e", 1), Code::kInvalidArgument));
  EXPECT_TRUE(Fails(db_->ReadExact("likes"), Code::kInvalidArgument));
  EXPECT_TRUE(Fails(db_->ReadExact({"orders", "k"}), Code::kInvalidArgument));
  EXPECT_TRUE(Fails(db_->ReadKeys("orders", {"k"}), Code::kInvalidArgument));
  EXPECT_TRUE(Fails(db_->ListKeys("orders", {}), Code::kInvalidArgument));
  EXPECT_TRUE(Fails(db_->TopKeys("orders", 3), Code::kInvalidArgument));
  EXPECT_TRUE(Fails(db_->DeleteKey("orders", "k"), Code::kInvalidArgument));
  // Bad keys: too long, a control character.
  for (const std::string& key :
       {std::string(kMaxKeyBytes + 1, 'k'), std::string("a\nb")}) {
    EXPECT_TRUE(Fails(db_->Increment({"likes", key}, 1), Code::kInvalidArgument,
                      "counter key"));
  }
  ASSERT_OK(db_->Increment({"likes", std::string(kMaxKeyBytes, 'k')}, 1));
  const std::vector<KeyValue> keys = Got(db_->ListKeys("likes", {}));
  ASSERT_EQ(keys.size(), 1u);  // only the longest key was counted
  EXPECT_EQ(keys[0].key, std::string(kMaxKeyBytes, 'k'));
  EXPECT_EQ(Got(db_->ReadExact("orders")), 0);
}

TEST_P(Counters, AReopenKeepsCountersValuesMarkersAndIds) {
  ASSERT_OK(db_->CreateCounter("a", CounterSpec{3}));
  ASSERT_OK(db_->CreateCounter("gone", CounterSpec{}));
  const uint64_t gone_id = Got(db_->DescribeCounter("gone")).id;
  ASSERT_OK(db_->DeleteCounter("gone"));
  for (int i = 0; i < 10; ++i) ASSERT_OK(db_->Increment("a", 2));
  ASSERT_OK(db_->IncrementOnce("a", "e1", 11));
  const CounterInfo before = Got(db_->DescribeCounter("a"));
  Reopen();
  ASSERT_NE(db_, nullptr);
  EXPECT_EQ(Got(db_->ReadExact("a")), 31);
  EXPECT_EQ(Got(db_->CountMarkers("a")), 1u);
  EXPECT_EQ(Got(db_->IncrementOnce("a", "e1", 11)).outcome,
            Outcome::kDuplicate);
  const CounterInfo after = Got(db_->DescribeCounter("a"));
  EXPECT_EQ(after.id, before.id);
  EXPECT_EQ(after.created_at_ms, before.created_at_ms);
  EXPECT_EQ(after.flags, kCounterFlagPlainIncrements);
  EXPECT_TRUE(Fails(db_->DescribeCounter("gone"), Code::kNotFound));
  // Ids are never reused, a deleted counter's neither.
  ASSERT_OK(db_->CreateCounter("new", CounterSpec{}));
  const uint64_t new_id = Got(db_->DescribeCounter("new")).id;
  EXPECT_NE(new_id, gone_id);
  EXPECT_NE(new_id, before.id);
}

TALLY_CONFORMANCE_SUITE(Counters);

}  // namespace
}  // namespace tally::conformance
