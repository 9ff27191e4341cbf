// GetDbStats' keys per keyed counter (DbStats::keyed_counters): the key
// count of the counter's last roll-up, its age, and the changes since that
// bound how far it can be off.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "tally/admin.h"
#include "tally/db.h"
#include "testutil/db_fixture.h"
#include "testutil/testutil.h"

namespace tally {
namespace {

constexpr int64_t kStart = 1'700'000'000'000;

class KeyedStats : public test::DbTest {
 protected:
  KeyedStats() : DbTest(kStart) {}
  // No roll-up worker: the test decides when a roll-up happens.
  Options Opts() const {
    Options o = ClockOptions();
    o.rollup_interval_ms = 0;
    return o;
  }
  static CounterSpec Keyed() {
    CounterSpec spec;
    spec.keyed = true;
    spec.shards = 2;
    return spec;
  }
  static KeyedCounterStats Only(Db& db) {
    Result<DbStats> st = GetDbStats(db);
    EXPECT_OK(st);
    if (!st.ok()) return {};
    EXPECT_EQ(st->keyed_counters.size(), 1u);
    if (st->keyed_counters.size() != 1) return {};
    return st->keyed_counters[0];
  }
};

TEST_F(KeyedStats, KeysComeFromTheLastRollupWithItsAgeAndChangesSince) {
  auto db = Open(Opts());
  ASSERT_NE(db, nullptr);
  ASSERT_OK(db->CreateCounter("likes", Keyed()));
  ASSERT_OK(db->CreateCounter("orders", CounterSpec{}));  // named: not listed
  KeyedCounterStats k = Only(*db);
  EXPECT_EQ(k.name, "likes");
  EXPECT_FALSE(k.rolled_up);  // never rolled up: nothing claimed
  EXPECT_EQ(k.keys, 0u);

  ASSERT_OK(db->Increment({"likes", "a"}, 1));
  ASSERT_OK(db->Increment({"likes", "b"}, 1));
  ASSERT_OK(db->IncrementOnce({"likes", "c"}, "u1", 1));
  ASSERT_OK(db->Increment({"likes", "a"}, 1));
  ASSERT_OK(db->Increment("orders", 5));
  ASSERT_OK(db->RollupNow("likes"));
  clock_.Advance(5'000);
  k = Only(*db);
  EXPECT_TRUE(k.rolled_up);
  EXPECT_EQ(k.keys, 3u);
  EXPECT_EQ(k.as_of_ms, kStart);
  EXPECT_EQ(k.lag_ms, 5'000);
  EXPECT_TRUE(k.changes_since_known);
  EXPECT_EQ(k.changes_since, 0u);

  // A new key, an old key again and a deleted key: the estimate stays the
  // roll-up's (3, exact now by chance: +1 -1), and three changes bound it.
  ASSERT_OK(db->Increment({"likes", "d"}, 1));
  ASSERT_OK(db->Increment({"likes", "a"}, 1));
  ASSERT_OK(db->DeleteKey("likes", "b"));
  k = Only(*db);
  EXPECT_EQ(k.keys, 3u);
  EXPECT_EQ(k.changes_since, 3u);
  // Two more new keys: the estimate is off by 2, within the 5 changes.
  ASSERT_OK(db->Increment({"likes", "e"}, 1));
  ASSERT_OK(db->Increment({"likes", "f"}, 1));
  k = Only(*db);
  EXPECT_EQ(k.keys, 3u);
  EXPECT_EQ(k.changes_since, 5u);
  auto all = db->ListKeys("likes", ListKeysOptions{});
  ASSERT_OK(all);
  EXPECT_EQ(all->size(), 5u);  // a c d e f

  ASSERT_OK(db->RollupNow("likes"));
  k = Only(*db);
  EXPECT_EQ(k.keys, 5u);
  EXPECT_EQ(k.as_of_ms, kStart + 5'000);
  EXPECT_EQ(k.lag_ms, 0);
  EXPECT_EQ(k.changes_since, 0u);
}

TEST_F(KeyedStats, AnotherProcessesRollupHasUnknownChangesSince) {
  {
    auto db = Open(Opts());
    ASSERT_NE(db, nullptr);
    ASSERT_OK(db->CreateCounter("likes", Keyed()));
    ASSERT_OK(db->Increment({"likes", "a"}, 1));
    ASSERT_OK(db->Increment({"likes", "b"}, 1));
    ASSERT_OK(db->RollupNow("likes"));
  }
  clock_.Advance(1'000);
  {
    // A writer that has not rolled the counter up itself: the stored
    // roll-up's count, changes since unknown (an earlier process may have
    // written after it).
    auto db = Open(Opts());
    ASSERT_NE(db, nullptr);
    ASSERT_OK(db->Increment({"likes", "c"}, 1));
    KeyedCounterStats k = Only(*db);
    EXPECT_TRUE(k.rolled_up);
    EXPECT_EQ(k.keys, 2u);
    EXPECT_EQ(k.lag_ms, 1'000);
    EXPECT_FALSE(k.changes_since_known);
  }
  // A read-only open reads the same record.
  Options ro = Opts();
  ro.read_only = true;
  auto db = Open(ro);
  ASSERT_NE(db, nullptr);
  KeyedCounterStats k = Only(*db);
  EXPECT_TRUE(k.rolled_up);
  EXPECT_EQ(k.keys, 2u);
  EXPECT_EQ(k.as_of_ms, kStart);
  EXPECT_FALSE(k.changes_since_known);
}

TEST_F(KeyedStats, EveryKeyedCounterInNameOrder) {
  auto db = Open(Opts());
  ASSERT_NE(db, nullptr);
  for (const char* name : {"views", "likes", "favs"}) {
    ASSERT_OK(db->CreateCounter(name, Keyed()));
  }
  ASSERT_OK(db->Increment({"likes", "x"}, 1));
  ASSERT_OK(db->RollupNow("likes"));
  Result<DbStats> st = GetDbStats(*db);
  ASSERT_OK(st);
  ASSERT_EQ(st->keyed_counters.size(), 3u);
  EXPECT_EQ(st->keyed_counters[0].name, "favs");
  EXPECT_EQ(st->keyed_counters[1].name, "likes");
  EXPECT_EQ(st->keyed_counters[2].name, "views");
  EXPECT_FALSE(st->keyed_counters[0].rolled_up);
  EXPECT_TRUE(st->keyed_counters[1].rolled_up);
  EXPECT_EQ(st->keyed_counters[1].keys, 1u);
}

}  // namespace
}  // namespace tally
