// Conformance: plain increments (shards, affinity keys, sums beyond int64)
// and once-increments (kApplied, kDuplicate, kConflict, the answer's
// shard, markers per counter and per key), synchronous and asynchronous.
#include <gtest/gtest.h>

#include <cstdint>
#include <future>
#include <limits>
#include <string>
#include <vector>

#include "conformance/conformance.h"
#include "tally/limits.h"

namespace tally::conformance {
namespace {

class Increments : public ConformanceTest {};

int64_t Sum(const std::vector<int64_t>& v) {
  int64_t sum = 0;
  for (int64_t x : v) sum += x;
  return sum;
}

TEST_P(Increments, PlainIncrementsSumOverTheShards) {
  ASSERT_OK(db_->CreateCounter("views", CounterSpec{8}));
  EXPECT_EQ(Got(db_->DescribeCounter("views")).flags, 0u);
  int64_t want = 0;
  for (int i = 1; i <= 40; ++i) {
    const IncrementResult r = Got(db_->Increment("views", i));
    EXPECT_EQ(r.outcome, Outcome::kApplied);
    EXPECT_LT(r.shard, 8u);
    EXPECT_EQ(r.value, 0);  // not a strict counter
    want += i;
  }
  ASSERT_OK(db_->Increment("views", -5));
  want -= 5;
  EXPECT_EQ(Got(db_->ReadExact("views")), want);
  const std::vector<int64_t> shards = Got(db_->ShardCounts("views"));
  ASSERT_EQ(shards.size(), 8u);
  EXPECT_EQ(Sum(shards), want);
  // The first plain increment marks the counter for good.
  EXPECT_EQ(Got(db_->DescribeCounter("views")).flags,
            kCounterFlagPlainIncrements);
}

TEST_P(Increments, AnAffinityKeyPinsItsShard) {
  CounterSpec spec{16, ShardPolicy::kAffinity};
  ASSERT_OK(db_->CreateCounter("per-device", spec));
  IncrementOptions dev;
  dev.affinity_key = "device-42";
  const uint32_t shard = Got(db_->Increment("per-device", 3, dev)).shard;
  EXPECT_LT(shard, 16u);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(Got(db_->Increment("per-device", 1, dev)).shard, shard);
  }
  const std::vector<int64_t> shards = Got(db_->ShardCounts("per-device"));
  ASSERT_EQ(shards.size(), 16u);
  EXPECT_EQ(shards[shard], 8);
  EXPECT_EQ(Sum(shards), 8);
  // The affinity policy refuses an increment without a key.
  EXPECT_TRUE(Fails(db_->Increment("per-device", 1), Code::kInvalidArgument));
  dev.affinity_key = "bad\nkey";
  EXPECT_TRUE(
      Fails(db_->Increment("per-device", 1, dev), Code::kInvalidArgument));
  EXPECT_EQ(Got(db_->ReadExact("per-device")), 8);
}

TEST_P(Increments, ASumBeyondInt64IsOutOfRangeUntilItComesBack) {
  ASSERT_OK(db_->CreateCounter("c", CounterSpec{2}));
  // Two affinity keys on different shards, found by increments of 0.
  std::string keys[2];
  int found = 0;
  for (int i = 0; found < 2 && i < 64; ++i) {
    const std::string key = "k" + std::to_string(i);
    IncrementOptions o;
    o.affinity_key = key;
    const uint32_t shard = Got(db_->Increment("c", 0, o)).shard;
    if (shard == static_cast<uint32_t>(found)) keys[found++] = key;
  }
  ASSERT_EQ(found, 2) << "no affinity key found for each shard";
  IncrementOptions a, b;
  a.affinity_key = keys[0];
  b.affinity_key = keys[1];
  ASSERT_OK(db_->Increment("c", std::numeric_limits<int64_t>::max(), a));
  ASSERT_OK(db_->Increment("c", 1, b));
  EXPECT_TRUE(Fails(db_->ReadExact("c"), Code::kOutOfRange));
  ASSERT_OK(db_->Increment("c", -1, b));
  EXPECT_EQ(Got(db_->ReadExact("c")), std::numeric_limits<int64_t>::max());
  // The smallest int64 is no delta.
  EXPECT_TRUE(Fails(db_->Increment("c", std::numeric_limits<int64_t>::min()),
                    Code::kInvalidArgument));
  ASSERT_OK(db_->Increment("c", kMinDelta, a));
  EXPECT_EQ(Got(db_->ReadExact("c")), 0);
}

TEST_P(Increments, AnEventCountsOnceAndAnotherDeltaIsAConflict) {
  ASSERT_OK(db_->CreateCounter("orders", CounterSpec{10}));
  const IncrementResult first = Got(db_->IncrementOnce("orders", "ord-1", 3));
  EXPECT_EQ(first.outcome, Outcome::kApplied);
  EXPECT_EQ(first.applied, 3);
  EXPECT_LT(first.shard, 10u);
  const IncrementResult dup = Got(db_->IncrementOnce("orders", "ord-1", 3));
  EXPECT_EQ(dup.outcome, Outcome::kDuplicate);
  EXPECT_EQ(dup.shard, first.shard);
  EXPECT_EQ(dup.applied, 3);  // the first delivery's
  const IncrementResult conflict =
      Got(db_->IncrementOnce("orders", "ord-1", 4));
  EXPECT_EQ(conflict.outcome, Outcome::kConflict);
  EXPECT_EQ(conflict.applied, 0);
  EXPECT_EQ(Got(db_->ReadExact("orders")), 3) << "a conflict changes nothing";
  // The event went where the answer says.
  const std::vector<int64_t> shards = Got(db_->ShardCounts("orders"));
  ASSERT_EQ(shards.size(), 10u);
  EXPECT_EQ(shards[first.shard], 3);
  EXPECT_EQ(Got(db_->CountMarkers("orders")), 1u);
  // Only once-increments so far: the counter has no plain flag.
  EXPECT_EQ(Got(db_->DescribeCounter("orders")).flags, 0u);
  // Markers belong to their counter: the same id counts in another one.
  ASSERT_OK(db_->CreateCounter("revenue", CounterSpec{10}));
  EXPECT_EQ(Got(db_->IncrementOnce("revenue", "ord-1", 250)).outcome,
            Outcome::kApplied);
  EXPECT_EQ(Got(db_->ReadExact("revenue")), 250);
  EXPECT_EQ(Got(db_->ReadExact("orders")), 3);
}

TEST_P(Increments, AOnceIncrementsShardComesFromItsIdOrItsAffinityKey) {
  ASSERT_OK(db_->CreateCounter("c", CounterSpec{16}));
  // By the event id: every copy lands where the first did, here and in a
  // second counter of the same shard count.
  ASSERT_OK(db_->CreateCounter("d", CounterSpec{16}));
  const uint32_t by_id = Got(db_->IncrementOnce("c", "evt-7", 1)).shard;
  EXPECT_EQ(Got(db_->IncrementOnce("d", "evt-7", 1)).shard, by_id);
  const MarkerInfo m = Got(db_->GetMarker("c", "evt-7"));
  EXPECT_EQ(m.shard, by_id);
  EXPECT_FALSE(m.pinned);
  // By an affinity key: the shard a plain increment with that key takes.
  IncrementOptions plain;
  plain.affinity_key = "edge-3";
  const uint32_t by_key = Got(db_->Increment("d", 0, plain)).shard;
  OnceOptions pinned;
  pinned.affinity_key = "edge-3";
  const IncrementResult r = Got(db_->IncrementOnce("c", "evt-8", 5, pinned));
  EXPECT_EQ(r.shard, by_key);
  EXPECT_TRUE(Got(db_->GetMarker("c", "evt-8")).pinned);
  // A redelivery without the key answers with the marker's shard.
  const IncrementResult copy = Got(db_->IncrementOnce("c", "evt-8", 5));
  EXPECT_EQ(copy.outcome, Outcome::kDuplicate);
  EXPECT_EQ(copy.shard, by_key);
  const std::vector<int64_t> shards = Got(db_->ShardCounts("c"));
  ASSERT_EQ(shards.size(), 16u);
  EXPECT_EQ(shards[by_key], by_key == by_id ? 6 : 5);
  EXPECT_EQ(shards[by_id], by_key == by_id ? 6 : 1);
}

TEST_P(Increments, KeyedCountersCountAnEventOncePerKey) {
  CounterSpec spec{2};
  spec.keyed = true;
  ASSERT_OK(db_->CreateCounter("likes", spec));
  EXPECT_EQ(Got(db_->IncrementOnce({"likes", "post-1"}, "user-9", 1)).outcome,
            Outcome::kApplied);
  EXPECT_EQ(Got(db_->IncrementOnce({"likes", "post-2"}, "user-9", 1)).outcome,
            Outcome::kApplied);
  EXPECT_EQ(Got(db_->IncrementOnce({"likes", "post-1"}, "user-9", 1)).outcome,
            Outcome::kDuplicate);
  EXPECT_EQ(Got(db_->IncrementOnce({"likes", "post-2"}, "user-9", 2)).outcome,
            Outcome::kConflict);
  ASSERT_OK(db_->Increment({"likes", "post-1"}, 10));
  EXPECT_EQ(Got(db_->ReadExact({"likes", "post-1"})), 11);
  EXPECT_EQ(Got(db_->ReadExact({"likes", "post-2"})), 1);
  EXPECT_EQ(Got(db_->ReadExact({"likes", "post-3"})), 0);  // never counted
  EXPECT_EQ(Got(db_->ListCounters()).size(), 1u);  // keys are no counters
}

TEST_P(Increments, BadEventIdsAreRefusedAndWriteNothing) {
  ASSERT_OK(db_->CreateCounter("c", CounterSpec{4}));
  for (const std::string& id :
       {std::string(), std::string(kMaxEventIdBytes + 1, 'e'),
        std::string("a\x7f"), std::string("\xc3")}) {
    EXPECT_TRUE(Fails(db_->IncrementOnce("c", id, 1), Code::kInvalidArgument))
        << "id of " << id.size() << " bytes";
  }
  EXPECT_TRUE(Fails(db_->IncrementOnce("c", "e", 1, OnceOptions{-1, {}}),
                    Code::kInvalidArgument));
  EXPECT_TRUE(
      Fails(db_->Increment("c", 1, IncrementOptions{{}, kMaxEventTimeMs + 1}),
            Code::kInvalidArgument));
  EXPECT_EQ(Got(db_->ReadExact("c")), 0);
  EXPECT_EQ(Got(db_->CountMarkers("c")), 0u);
  ASSERT_OK(db_->IncrementOnce("c", std::string(kMaxEventIdBytes, 'e'), 1));
  EXPECT_EQ(Got(db_->CountMarkers("c")), 1u);
}

TEST_P(Increments, AsyncCallsAnswerOnceEachAsTheSyncOnesWould) {
  ASSERT_OK(db_->CreateCounter("c", CounterSpec{4}));
  constexpr int kCalls = 20;
  std::vector<std::promise<Result<IncrementResult>>> answers(3 * kCalls);
  std::vector<std::future<Result<IncrementResult>>> futures;
  for (auto& p : answers) futures.push_back(p.get_future());
  auto done = [&answers](size_t i) {
    return [&answers, i](const Result<IncrementResult>& r) {
      answers[i].set_value(r);  // a second call would throw: exactly once
    };
  };
  for (int i = 0; i < kCalls; ++i) {
    db_->IncrementAsync("c", 1, done(i));
    // Two copies of each event, submitted back to back.
    const std::string id = "e" + std::to_string(i);
    db_->IncrementOnceAsync("c", id, 2, done(kCalls + 2 * i));
    db_->IncrementOnceAsync("c", id, 2, done(kCalls + 2 * i + 1));
  }
  int applied = 0, duplicates = 0;
  for (size_t i = 0; i < futures.size(); ++i) {
    Result<IncrementResult> r = futures[i].get();
    ASSERT_OK(r);
    applied += r->outcome == Outcome::kApplied;
    duplicates += r->outcome == Outcome::kDuplicate;
    // The delta counted, as the sync calls answer it: the plain call's, and
    // the event's for its applied copy and its duplicate alike.
    EXPECT_EQ(r->applied, i < size_t{kCalls} ? 1 : 2) << "call " << i;
  }
  EXPECT_EQ(applied, 2 * kCalls);  // every plain one, one copy of each event
  EXPECT_EQ(duplicates, kCalls);
  // Each callback ran after its increment became readable.
  EXPECT_EQ(Got(db_->ReadExact("c")), kCalls + 2 * kCalls);
  EXPECT_EQ(Got(db_->CountMarkers("c")), static_cast<uint64_t>(kCalls));
  // A refusal is answered through the callback too.
  std::promise<Status> refused;
  db_->IncrementAsync("nope", 1, [&refused](const Result<IncrementResult>& r) {
    refused.set_value(r.status());
  });
  EXPECT_TRUE(Fails(refused.get_future().get(), Code::kNotFound));
}

// IncrementOnceAsync refuses strict counters and counters with an outbox
// (NotSupported, inline), as CounterSpec::bounds and Db::IncrementOnceAsync
// say, with or without Options::sync. (Until issue 29 the engine refused
// only with sync: without it the call went to IncrementOnce, which counted
// the event.)
TEST_P(Increments, OnceAsyncRefusesStrictAndOutboxCounters) {
  CounterSpec stock;
  stock.bounds = CounterBounds::AtLeast(0);
  ASSERT_OK(db_->CreateCounter("stock", stock));
  CounterSpec feed;
  feed.outbox = true;
  ASSERT_OK(db_->CreateCounter("feed", feed));
  for (const char* name : {"stock", "feed"}) {
    Status s = Status::OK();
    bool called = false;
    db_->IncrementOnceAsync(name, "e", 1,
                            [&](const Result<IncrementResult>& r) {
                              s = r.status();
                              called = true;
                            });
    EXPECT_TRUE(called) << name;
    EXPECT_TRUE(Fails(s, Code::kNotSupported, name));
    EXPECT_EQ(Got(db_->ReadExact(name)), 0) << name;
    EXPECT_TRUE(Fails(db_->GetMarker(name, "e"), Code::kNotFound)) << name;
  }
}

TALLY_CONFORMANCE_SUITE(Increments);

}  // namespace
}  // namespace tally::conformance
