// Import of keyed counters: a keyed counter's spec, each key's shard values
// and its markers (with their key) come back exactly in a fresh database,
// a redelivered event is still a duplicate there, and what does not fit a
// keyed (or named) counter is refused, writing nothing.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tally/admin.h"
#include "tally/import.h"
#include "tally/limits.h"
#include "tally/outbox.h"
#include "testutil/db_fixture.h"
#include "testutil/exported.h"
#include "testutil/testutil.h"

namespace tally {
namespace {

using test::Dump;

constexpr int64_t kStart = 1'750'000'000'000;

CounterSpec KeyedSpec(uint32_t shards) {
  CounterSpec spec;
  spec.shards = shards;
  spec.keyed = true;
  return spec;
}

// Every key of `counter`, read in pages of 3 (paging is part of the test).
std::vector<KeyValue> AllKeys(Db* db, const std::string& counter) {
  std::vector<KeyValue> all;
  ListKeysOptions page;
  page.limit = 3;
  for (;;) {
    auto keys = db->ListKeys(counter, page);
    EXPECT_OK(keys);
    if (!keys.ok()) return all;
    all.insert(all.end(), keys->begin(), keys->end());
    if (keys->size() < page.limit) return all;
    page.start_after = keys->back().key;
  }
}

class KeyedImport : public test::DbTest {
 protected:
  KeyedImport() : DbTest(kStart) {}

  // "likes": 4 shards, 7 posts liked by a few users each (one user likes
  // several posts: one event id in several keys), and post "zero" whose two
  // likes, pinned to one shard, sum to 0. "orders": a named counter beside.
  void Populate(Db* db) {
    ASSERT_OK(db->CreateCounter("likes", KeyedSpec(4)));
    ASSERT_OK(db->CreateCounter("orders", {2}));
    for (int post = 0; post < 7; ++post) {
      for (int user = 0; user <= post; ++user) {
        ASSERT_OK(db->IncrementOnce({"likes", "post-" + std::to_string(post)},
                                    "user-" + std::to_string(user), user + 1));
        clock_.Advance(3);
      }
    }
    const OnceOptions pinned{kEventTimeNow, "pin"};
    ASSERT_OK(db->IncrementOnce({"likes", "zero"}, "u-a", 5, pinned));
    ASSERT_OK(db->IncrementOnce({"likes", "zero"}, "u-b", -5, pinned));
    ASSERT_OK(db->IncrementOnce("orders", "o-1", 9));
  }

  // Imports every counter of `from` into `to` as an export holds it
  // (markers and keys read in pages of 2).
  void CopyAll(Db* from, Db* to) {
    for (const CounterInfo& c : test::OkValue(from->ListCounters())) {
      CounterImport im;
      ASSERT_OK(test::ReadExported(from, c, 2, &im));
      ASSERT_OK(tally::ImportCounter(*to, im));
    }
  }
};

TEST_F(KeyedImport, RoundTripKeepsEveryKeyItsMarkersAndVerify) {
  auto a = OpenAt("a", ClockOptions());
  Populate(a.get());
  auto b = OpenAt("b", ClockOptions());
  CopyAll(a.get(), b.get());

  auto info = b->DescribeCounter("likes");
  ASSERT_OK(info);
  EXPECT_TRUE(info->keyed);
  EXPECT_EQ(info->shards, 4u);
  EXPECT_EQ(info->created_at_ms,
            test::OkValue(a->DescribeCounter("likes")).created_at_ms);
  EXPECT_EQ(info->flags, 0u);

  const std::vector<KeyValue> keys = AllKeys(a.get(), "likes");
  ASSERT_EQ(keys.size(), 8u);  // post-0..post-6 and zero
  const std::vector<KeyValue> copied = AllKeys(b.get(), "likes");
  ASSERT_EQ(copied.size(), keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    const std::string& key = keys[i].key;
    EXPECT_EQ(copied[i].key, key);
    EXPECT_EQ(copied[i].value, keys[i].value) << key;
    EXPECT_EQ(test::OkValue(b->ReadExact({"likes", key})),
              test::OkValue(a->ReadExact({"likes", key})));
    EXPECT_EQ(test::OkValue(b->ShardCounts({"likes", key})),
              test::OkValue(a->ShardCounts({"likes", key})))
        << key;
    EXPECT_EQ(test::OkValue(b->CountMarkers({"likes", key})),
              test::OkValue(a->CountMarkers({"likes", key})))
        << key;
  }
  EXPECT_EQ(copied.back().key, "zero");
  EXPECT_EQ(copied.back().value, 0);  // listed, as in the original
  EXPECT_EQ(test::OkValue(b->CountMarkers({"likes"})), 28u + 2);
  auto ma = a->GetMarker({"likes", "post-5"}, "user-3");
  auto mb = b->GetMarker({"likes", "post-5"}, "user-3");
  ASSERT_OK(ma);
  ASSERT_OK(mb);
  EXPECT_EQ(mb->key, "post-5");
  EXPECT_EQ(mb->delta, ma->delta);
  EXPECT_EQ(mb->shard, ma->shard);
  EXPECT_EQ(mb->created_at_ms, ma->created_at_ms);
  EXPECT_EQ(test::OkValue(b->ReadExact("orders")), 9);

  VerifyReport r;
  ASSERT_OK(tally::Verify(*b, &r));
  EXPECT_TRUE(r.ok()) << Dump(r);
  EXPECT_EQ(r.keys_compared, 8u);
  EXPECT_EQ(r.sums_compared, 2u);

  // Exactly-once survives the move, per key: a redelivered like is a
  // duplicate; the same user's first like of a post it had not liked
  // counts.
  EXPECT_EQ(
      test::OkValue(b->IncrementOnce({"likes", "post-5"}, "user-3", 4)).outcome,
      Outcome::kDuplicate);
  EXPECT_EQ(
      test::OkValue(b->IncrementOnce({"likes", "post-2"}, "user-3", 4)).outcome,
      Outcome::kApplied);
}

TEST_F(KeyedImport, RefusesWhatDoesNotFitTheCounterWritingNothing) {
  auto a = OpenAt("a", ClockOptions());
  Populate(a.get());
  CounterImport likes, orders;
  ASSERT_OK(test::ReadExported(
      a.get(), test::OkValue(a->DescribeCounter("likes")), 100, &likes));
  ASSERT_OK(test::ReadExported(
      a.get(), test::OkValue(a->DescribeCounter("orders")), 100, &orders));
  ASSERT_FALSE(likes.keys.empty());
  ASSERT_FALSE(likes.markers.empty());
  auto b = OpenAt("b", ClockOptions());

  struct Case {
    const char* what;
    CounterImport im;
    const char* needle;
  };
  std::vector<Case> cases;
  {
    CounterImport im = likes;
    im.shard_values = {1, 0, 0, 0};
    cases.push_back({"keyed with shard_values", im, "is keyed"});
  }
  {
    CounterImport im = orders;
    im.keys = {{"k", {}}};
    cases.push_back({"named with keys", im, "is not keyed"});
  }
  {
    CounterImport im = likes;
    im.markers[0].key.clear();
    cases.push_back({"keyed marker without key", im, "marker 0"});
  }
  {
    CounterImport im = orders;
    im.markers[0].key = "k";
    cases.push_back({"named marker with key", im, "is not keyed: key 'k'"});
  }
  {
    CounterImport im = likes;
    im.keys.push_back(im.keys[1]);
    cases.push_back({"key twice", im, "appears twice"});
  }
  {
    CounterImport im = likes;
    im.markers.push_back(im.markers[0]);
    cases.push_back({"(key, event) twice", im, "appears twice"});
  }
  {
    CounterImport im = likes;
    im.keys[0].key = std::string("bad\x01key");
    cases.push_back({"control character in a key", im, "key 0"});
  }
  {
    CounterImport im = likes;
    im.keys[0].shard_values = {1, 2};
    cases.push_back({"wrong number of values", im, "2 shard values"});
  }
  for (const Case& c : cases) {
    Status s = tally::ImportCounter(*b, c.im);
    EXPECT_TRUE(s.IsInvalidArgument()) << c.what << ": " << s.ToString();
    EXPECT_NE(s.ToString().find(c.needle), std::string::npos)
        << c.what << ": " << s.ToString();
    EXPECT_TRUE(test::OkValue(b->ListCounters()).empty()) << c.what;
  }
  // One event id in two keys is two events, not a repeat.
  CounterImport two = likes;
  ASSERT_OK(tally::ImportCounter(*b, two));
  EXPECT_EQ(test::OkValue(b->ReadExact({"likes", "post-6"})), 28);
}

TEST_F(KeyedImport, OutboxEntriesOfAKeyedCounterKeepTheirKey) {
  auto a = OpenAt("a", ClockOptions());
  CounterSpec spec = test::OutboxSpec(2);
  spec.keyed = true;
  ASSERT_OK(a->CreateCounter("likes", spec));
  ASSERT_OK(a->CreateCounter("orders", test::OutboxSpec(2)));
  ASSERT_OK(a->IncrementOnce({"likes", "post-1"}, "u-1", 1));
  ASSERT_OK(a->IncrementOnce({"likes", "post-2"}, "u-1", 1));
  ASSERT_OK(a->Increment("orders", 3));
  auto entries = tally::ReadOutbox(*a, 0, 100);
  ASSERT_OK(entries);
  ASSERT_EQ(entries->size(), 3u);
  EXPECT_EQ((*entries)[0].key, "post-1");
  EXPECT_EQ((*entries)[1].key, "post-2");

  auto b = OpenAt("b", ClockOptions());
  for (const CounterInfo& c : test::OkValue(a->ListCounters())) {
    CounterImport im;
    ASSERT_OK(test::ReadExported(a.get(), c, 10, &im));
    ASSERT_OK(tally::ImportCounter(*b, im));
  }
  std::vector<OutboxEntry> missing_key = {(*entries)[0]};
  missing_key[0].key.clear();
  Status s = tally::ImportOutbox(*b, missing_key);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find("'likes' is keyed"), std::string::npos)
      << s.ToString();
  std::vector<OutboxEntry> stray_key = {(*entries)[2]};
  stray_key[0].key = "post-1";
  s = tally::ImportOutbox(*b, stray_key);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find("'orders' is not keyed"), std::string::npos)
      << s.ToString();
  EXPECT_EQ(test::OkValue(tally::GetOutboxStatus(*b)).last_seq,
            0u);  // nothing written

  ASSERT_OK(tally::ImportOutbox(*b, *entries));
  auto copied = tally::ReadOutbox(*b, 0, 100);
  ASSERT_OK(copied);
  ASSERT_EQ(copied->size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ((*copied)[i].key, (*entries)[i].key);
    EXPECT_EQ((*copied)[i].origin, (*entries)[i].origin);
    EXPECT_EQ((*copied)[i].origin_seq, (*entries)[i].origin_seq);
  }
}

}  // namespace
}  // namespace tally
