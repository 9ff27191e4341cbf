// Keyed counters (CounterSpec::keyed): keys that come into being with their
// first increment, markers per (counter, key, event), reads of one key,
// many keys, key ranges and the top keys, and deletes of one key.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "tally/admin.h"
#include "tally/db.h"
#include "tally/limits.h"
#include "testutil/db_fixture.h"
#include "testutil/testutil.h"

namespace tally {
namespace {

class Keyed : public test::DbTest {
 protected:
  Keyed() : DbTest(1'700'000'000'000) {}
  CounterSpec Spec(uint32_t shards = 1) {
    CounterSpec spec;
    spec.shards = shards;
    spec.keyed = true;
    return spec;
  }
};

TEST_F(Keyed, KeysComeIntoBeingWithTheirFirstIncrement) {
  auto db = Open();
  ASSERT_OK(db->CreateCounter("likes", Spec(4)));
  auto info = db->DescribeCounter("likes");
  ASSERT_OK(info);
  EXPECT_TRUE(info->keyed);
  ASSERT_OK(db->Increment({"likes", "post-1"}, 3));
  ASSERT_OK(db->Increment({"likes", "post-2"}, 5));
  ASSERT_OK(db->Increment({"likes", "post-1"}, 4));
  EXPECT_EQ(test::OkValue(db->ReadExact({"likes", "post-1"})), 7);
  EXPECT_EQ(test::OkValue(db->ReadExact({"likes", "post-2"})), 5);
  EXPECT_EQ(test::OkValue(db->ReadExact({"likes", "post-3"})),
            0);  // never incremented
  auto shards = db->ShardCounts({"likes", "post-1"});
  ASSERT_OK(shards);
  ASSERT_EQ(shards->size(), 4u);
  int64_t sum = 0;
  for (int64_t v : *shards) sum += v;
  EXPECT_EQ(sum, 7);
  // Still one catalog entry.
  EXPECT_EQ(test::OkValue(db->ListCounters()).size(), 1u);
}

TEST_F(Keyed, KeyedAndNamedRefuseTheWrongKindOfCall) {
  auto db = Open();
  ASSERT_OK(db->CreateCounter("likes", Spec()));
  ASSERT_OK(db->CreateCounter("orders", {1}));
  Status s = db->Increment("likes", 1).status();
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find("'likes' is keyed"), std::string::npos)
      << s.ToString();
  s = db->Increment({"orders", "k"}, 1).status();
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find("not keyed"), std::string::npos) << s.ToString();
  EXPECT_TRUE(db->ReadExact("likes").status().IsInvalidArgument());
  EXPECT_TRUE(db->ReadExact({"orders", "k"}).status().IsInvalidArgument());
  EXPECT_TRUE(db->ReadKeys("orders", {"k"}).status().IsInvalidArgument());
  EXPECT_TRUE(db->ListKeys("orders", {}).status().IsInvalidArgument());
  EXPECT_TRUE(db->TopKeys("orders", 3).status().IsInvalidArgument());
  EXPECT_TRUE(db->DeleteKey("orders", "k").IsInvalidArgument());
  // Bad keys, named in the message.
  s = db->Increment({"likes", std::string(kMaxKeyBytes + 1, 'k')}, 1).status();
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find("counter key"), std::string::npos);
  s = db->Increment({"likes", std::string("a\0b", 3)}, 1).status();
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  s = db->Increment({"likes", "tab\there"}, 1).status();
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  ASSERT_OK(db->Increment({"likes", std::string(kMaxKeyBytes, 'k')}, 1));
  // Nothing but the longest key was counted.
  auto keys = db->ListKeys("likes", {});
  ASSERT_OK(keys);
  ASSERT_EQ(keys->size(), 1u);
  EXPECT_EQ((*keys)[0].key, std::string(kMaxKeyBytes, 'k'));
}

TEST_F(Keyed, OneEventCountsOncePerKey) {
  auto db = Open();
  ASSERT_OK(db->CreateCounter("likes", Spec(2)));
  // The same user liking two posts: two events of one id, in two keys.
  auto a = db->IncrementOnce({"likes", "post-1"}, "user-9", 1);
  auto b = db->IncrementOnce({"likes", "post-2"}, "user-9", 1);
  ASSERT_OK(a);
  ASSERT_OK(b);
  EXPECT_EQ(a->outcome, Outcome::kApplied);
  EXPECT_EQ(b->outcome, Outcome::kApplied);
  auto again = db->IncrementOnce({"likes", "post-1"}, "user-9", 1);
  ASSERT_OK(again);
  EXPECT_EQ(again->outcome, Outcome::kDuplicate);
  EXPECT_EQ(again->shard, a->shard);
  auto conflict = db->IncrementOnce({"likes", "post-2"}, "user-9", 2);
  ASSERT_OK(conflict);
  EXPECT_EQ(conflict->outcome, Outcome::kConflict);
  EXPECT_EQ(test::OkValue(db->ReadExact({"likes", "post-1"})), 1);
  EXPECT_EQ(test::OkValue(db->ReadExact({"likes", "post-2"})), 1);
  auto m = db->GetMarker({"likes", "post-2"}, "user-9");
  ASSERT_OK(m);
  EXPECT_EQ(m->key, "post-2");
  EXPECT_EQ(m->delta, 1);
  EXPECT_TRUE(db->GetMarker({"likes", "post-3"}, "user-9").status().IsNotFound());
  EXPECT_EQ(test::OkValue(db->CountMarkers({"likes", "post-1"})), 1u);
  EXPECT_EQ(test::OkValue(db->CountMarkers("likes")), 2u);  // every key
  ListMarkersOptions lo;
  auto listed = db->ListMarkers({"likes", "post-1"}, lo);
  ASSERT_OK(listed);
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].event_id, "user-9");
  EXPECT_EQ((*listed)[0].key, "post-1");
  VerifyReport report;
  ASSERT_OK(Verify(*db, &report));
  EXPECT_TRUE(report.ok()) << report.problems.front();
}

TEST_F(Keyed, ABatchTouchesManyKeysOfManyCountersAtomically) {
  auto db = Open();
  ASSERT_OK(db->CreateCounter("likes", Spec(3)));
  ASSERT_OK(db->CreateCounter("views", Spec(1)));
  ASSERT_OK(db->CreateCounter("total", {1}));
  Batch batch;
  batch.AddOnce({"likes", "p1"}, "u1", 1);
  batch.AddOnce({"likes", "p2"}, "u1", 1);
  batch.AddOnce({"likes", "p1"}, "u1", 1);  // a copy in the batch
  batch.Add({"views", "p1"}, 10);
  batch.Add({"views", "p2"}, 20);
  batch.Add({"views", "p1"}, 5);
  batch.Add("total", 2);
  std::vector<IncrementResult> results;
  ASSERT_OK(db->Apply(batch, &results));
  ASSERT_EQ(results.size(), 7u);
  EXPECT_EQ(results[2].outcome, Outcome::kDuplicate);
  EXPECT_EQ(test::OkValue(db->ReadExact({"likes", "p1"})), 1);
  EXPECT_EQ(test::OkValue(db->ReadExact({"likes", "p2"})), 1);
  EXPECT_EQ(test::OkValue(db->ReadExact({"views", "p1"})), 15);
  EXPECT_EQ(test::OkValue(db->ReadExact({"views", "p2"})), 20);
  EXPECT_EQ(test::OkValue(db->ReadExact("total")), 2);
  // One bad op refuses the batch, naming its index; nothing is written.
  Batch bad;
  bad.Add({"views", "p1"}, 1);
  bad.Add("views", 1);  // keyed counter without a key
  Status s = db->Apply(bad, &results);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find("batch op 1"), std::string::npos) << s.ToString();
  EXPECT_EQ(test::OkValue(db->ReadExact({"views", "p1"})), 15);
  VerifyReport report;
  ASSERT_OK(Verify(*db, &report));
  EXPECT_TRUE(report.ok()) << report.problems.front();
}

TEST_F(Keyed, ReadKeysReadsManyKeysInTheOrderGiven) {
  auto db = Open();
  ASSERT_OK(db->CreateCounter("likes", Spec(8)));
  for (int i = 0; i < 60; ++i) {
    ASSERT_OK(db->Increment({"likes", "p" + std::to_string(i)}, i));
  }
  std::vector<std::string> names;
  for (int i = 59; i >= 0; i -= 3) names.push_back("p" + std::to_string(i));
  names.push_back("missing");
  names.push_back("p59");  // a repeat
  std::vector<std::string_view> keys(names.begin(), names.end());
  auto values = db->ReadKeys("likes", keys);
  ASSERT_OK(values);
  ASSERT_EQ(values->size(), keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    EXPECT_EQ((*values)[i], test::OkValue(db->ReadExact({"likes", keys[i]})))
        << keys[i];
  }
  EXPECT_EQ(values->back(), 59);
  EXPECT_EQ((*values)[keys.size() - 2], 0);
  // Limits, named.
  EXPECT_TRUE(db->ReadKeys("likes", {}).status().IsInvalidArgument());
  std::vector<std::string_view> too_many(kMaxReadKeys + 1, "p1");
  Status s = db->ReadKeys("likes", too_many).status();
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.message().find("kMaxReadKeys"), std::string::npos);
  s = db->ReadKeys("likes", {"p1", ""}).status();
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.ToString().find("key 1"), std::string::npos) << s.ToString();
}

TEST_F(Keyed, ListKeysPagesInKeyOrderFromAPrefix) {
  auto db = Open();
  ASSERT_OK(db->CreateCounter("views", Spec(2)));
  std::map<std::string, int64_t> want;
  for (int i = 0; i < 30; ++i) {
    const std::string key =
        (i % 3 == 0 ? "a/" : i % 3 == 1 ? "ab/" : "b/") + std::to_string(i);
    ASSERT_OK(db->Increment({"views", key}, i + 1));
    ASSERT_OK(db->Increment({"views", key}, 1));
    want[key] = i + 2;
  }
  // "a" and "a/x" order as bytes: the 0x00 after a key keeps "a" first.
  ASSERT_OK(db->Increment({"views", "a"}, 7));
  want["a"] = 7;
  // Every key, in pages of 4.
  std::vector<KeyValue> all;
  ListKeysOptions o;
  o.limit = 4;
  for (;;) {
    auto page = db->ListKeys("views", o);
    ASSERT_OK(page);
    if (page->empty()) break;
    ASSERT_LE(page->size(), 4u);
    all.insert(all.end(), page->begin(), page->end());
    o.start_after = page->back().key;
  }
  ASSERT_EQ(all.size(), want.size());
  auto w = want.begin();
  for (const KeyValue& kv : all) {
    EXPECT_EQ(kv.key, w->first);
    EXPECT_EQ(kv.value, w->second) << kv.key;
    ++w;
  }
  // A prefix: "a" matches "a", "a/..." and "ab/..."; "a/" only "a/...".
  ListKeysOptions p;
  p.limit = kMaxListKeys;
  p.prefix = "a/";
  auto a = db->ListKeys("views", p);
  ASSERT_OK(a);
  EXPECT_EQ(a->size(), 10u);
  for (const KeyValue& kv : *a) EXPECT_EQ(kv.key.rfind("a/", 0), 0u) << kv.key;
  p.prefix = "a";
  EXPECT_EQ(test::OkValue(db->ListKeys("views", p)).size(), 21u);
  p.start_after = "a/3";
  auto after = db->ListKeys("views", p);
  ASSERT_OK(after);
  ASSERT_FALSE(after->empty());
  EXPECT_GT(after->front().key, "a/3");
  p.limit = 0;
  EXPECT_TRUE(db->ListKeys("views", p).status().IsInvalidArgument());
  p.limit = kMaxListKeys + 1;
  EXPECT_TRUE(db->ListKeys("views", p).status().IsInvalidArgument());
}

TEST_F(Keyed, TopKeysFromTheRollUpEqualAnExactScanOnceRolledUp) {
  Options options = ClockOptions();
  options.rollup_interval_ms = 0;  // no worker: roll-ups only when asked
  auto db = Open(options);
  ASSERT_OK(db->CreateCounter("likes", Spec(2)));
  int64_t total = 0;
  for (int i = 0; i < 200; ++i) {
    const int64_t v = (i * 37) % 101;  // ties included
    ASSERT_OK(db->Increment({"likes", "p" + std::to_string(i)}, v));
    total += v;
  }
  auto exact = db->TopKeys("likes", 10, TopKeysOptions{true});
  ASSERT_OK(exact);
  EXPECT_TRUE(exact->exact);
  EXPECT_EQ(exact->key_count, 200u);
  EXPECT_EQ(exact->total, total);
  ASSERT_EQ(exact->keys.size(), 10u);
  for (size_t i = 1; i < exact->keys.size(); ++i) {
    const KeyValue& a = exact->keys[i - 1];
    const KeyValue& b = exact->keys[i];
    EXPECT_TRUE(a.value > b.value || (a.value == b.value && a.key < b.key));
  }
  // Never rolled up: the first read rolls it up.
  auto cached = db->TopKeys("likes", 10);
  ASSERT_OK(cached);
  EXPECT_FALSE(cached->exact);
  ASSERT_EQ(cached->keys.size(), 10u);
  for (size_t i = 0; i < 10; ++i) {
    EXPECT_EQ(cached->keys[i].key, exact->keys[i].key);
    EXPECT_EQ(cached->keys[i].value, exact->keys[i].value);
  }
  auto sum = db->ReadCached("likes");
  ASSERT_OK(sum);
  EXPECT_EQ(sum->value, total);
  // Later increments wait for the next roll-up.
  ASSERT_OK(db->Increment({"likes", "new-celebrity"}, 1000));
  clock_.Advance(5000);
  auto stale = db->TopKeys("likes", 1);
  ASSERT_OK(stale);
  EXPECT_NE(stale->keys[0].key, "new-celebrity");
  EXPECT_EQ(stale->lag_ms, 5000);
  ASSERT_OK(db->RollupNow("likes"));
  auto fresh = db->TopKeys("likes", 1);
  ASSERT_OK(fresh);
  EXPECT_EQ(fresh->keys[0].key, "new-celebrity");
  EXPECT_EQ(fresh->total, total + 1000);
  EXPECT_EQ(test::OkValue(db->ReadCached("likes")).value, total + 1000);
  EXPECT_TRUE(db->TopKeys("likes", 0).status().IsInvalidArgument());
  EXPECT_TRUE(db->TopKeys("likes", kMaxTopKeys + 1).status().IsInvalidArgument());
  // The roll-up survives a reopen.
  Reopen(&db);
  auto back = db->TopKeys("likes", 1);
  ASSERT_OK(back);
  EXPECT_EQ(back->keys[0].key, "new-celebrity");
}

TEST_F(Keyed, DeleteKeyRemovesItsShardsAndMarkersOnly) {
  auto db = Open();
  ASSERT_OK(db->CreateCounter("likes", Spec(2)));
  ASSERT_OK(db->IncrementOnce({"likes", "p1"}, "u1", 1));
  ASSERT_OK(db->IncrementOnce({"likes", "p1"}, "u2", 1));
  ASSERT_OK(db->IncrementOnce({"likes", "p10"}, "u1", 1));  // p1's neighbour
  ASSERT_OK(db->IncrementOnce({"likes", "p2"}, "u1", 1));
  ASSERT_OK(db->DeleteKey("likes", "p1"));
  EXPECT_EQ(test::OkValue(db->ReadExact({"likes", "p1"})), 0);
  EXPECT_EQ(test::OkValue(db->ReadExact({"likes", "p10"})), 1);
  EXPECT_EQ(test::OkValue(db->ReadExact({"likes", "p2"})), 1);
  EXPECT_EQ(test::OkValue(db->CountMarkers({"likes", "p1"})), 0u);
  EXPECT_EQ(test::OkValue(db->CountMarkers("likes")), 2u);
  // A redelivery after the delete counts again (its marker went too).
  auto again = db->IncrementOnce({"likes", "p1"}, "u1", 1);
  ASSERT_OK(again);
  EXPECT_EQ(again->outcome, Outcome::kApplied);
  EXPECT_EQ(test::OkValue(db->ReadExact({"likes", "p1"})), 1);
  ASSERT_OK(db->DeleteKey("likes", "never-seen"));
  VerifyReport report;
  ASSERT_OK(Verify(*db, &report));
  EXPECT_TRUE(report.ok()) << report.problems.front();
  // The whole counter goes with DeleteCounter.
  ASSERT_OK(db->DeleteCounter("likes"));
  ASSERT_OK(db->CreateCounter("likes", Spec(2)));
  EXPECT_EQ(test::OkValue(db->ReadExact({"likes", "p2"})), 0);
  EXPECT_TRUE(test::OkValue(db->ListKeys("likes", {})).empty());
}

TEST_F(Keyed, BucketsDedupeWindowsAndRetentionWorkPerKey) {
  Options options = ClockOptions();
  auto db = Open(options);
  CounterSpec spec = Spec(2);
  spec.bucket = BucketWidth::kHour;
  spec.retention_ms = 2 * 3'600'000;
  spec.dedupe_window_ms = 3'600'000;
  ASSERT_OK(db->CreateCounter("calls", spec));
  const int64_t t0 = clock_.NowMillis();
  OnceOptions at;
  at.event_time_ms = t0;
  ASSERT_OK(db->IncrementOnce({"calls", "key-a"}, "e1", 2, at));
  ASSERT_OK(db->IncrementOnce({"calls", "key-b"}, "e1", 3, at));
  clock_.Advance(3'600'000);
  at.event_time_ms = clock_.NowMillis();
  ASSERT_OK(db->IncrementOnce({"calls", "key-a"}, "e2", 5, at));
  EXPECT_EQ(test::OkValue(db->ReadExact({"calls", "key-a"})), 7);
  EXPECT_EQ(test::OkValue(db->ReadRange({"calls", "key-a"}, at.event_time_ms,
                                        at.event_time_ms + 1)),
            5);
  auto both = db->ReadKeys("calls", {"key-a", "key-b"});
  ASSERT_OK(both);
  EXPECT_EQ((*both)[0], 7);
  EXPECT_EQ((*both)[1], 3);
  // An event older than the window is outside it, in any key.
  clock_.Advance(1'800'000);
  OnceOptions old;
  old.event_time_ms = t0;
  auto late = db->IncrementOnce({"calls", "key-c"}, "e9", 1, old);
  ASSERT_OK(late);
  EXPECT_EQ(late->outcome, Outcome::kOutsideWindow);
  // Past retention, the first hour's bucket reads as empty, per key.
  clock_.Advance(3 * 3'600'000);
  EXPECT_EQ(test::OkValue(db->ReadExact({"calls", "key-a"})), 0);
  EXPECT_EQ(test::OkValue(db->ReadExact({"calls", "key-b"})), 0);
  EXPECT_EQ(test::OkValue(db->ReadExact({"calls", "key-c"})), 0);
}

TEST_F(Keyed, KeysSurviveReopenAndReadOnlyReadersSeeThem) {
  auto db = Open();
  ASSERT_OK(db->CreateCounter("likes", Spec(2)));
  ASSERT_OK(db->IncrementOnce({"likes", "p1"}, "u1", 1));
  ASSERT_OK(db->Increment({"likes", "p2"}, 4));
  Reopen(&db);
  EXPECT_EQ(test::OkValue(db->ReadExact({"likes", "p1"})), 1);
  EXPECT_EQ(test::OkValue(db->IncrementOnce({"likes", "p1"}, "u1", 1)).outcome,
            Outcome::kDuplicate);
  Options ro;
  ro.read_only = true;
  std::unique_ptr<Db> reader;
  ASSERT_OK(Db::Open(ro, path(), &reader));
  auto values = reader->ReadKeys("likes", {"p1", "p2"});
  ASSERT_OK(values);
  EXPECT_EQ((*values)[0], 1);
  EXPECT_EQ((*values)[1], 4);
  EXPECT_EQ(test::OkValue(reader->ListKeys("likes", {})).size(), 2u);
  // An exact top list on a read-only (secondary) instance: no snapshot.
  auto top = reader->TopKeys("likes", 1, TopKeysOptions{true});
  ASSERT_OK(top);
  ASSERT_EQ(top->keys.size(), 1u);
  EXPECT_EQ(top->keys[0].key, "p2");
  EXPECT_EQ(top->total, 5);
  EXPECT_TRUE(reader->DeleteKey("likes", "p1").IsNotSupported());
}

}  // namespace
}  // namespace tally
