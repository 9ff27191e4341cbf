// The third outside review (issue 28): one test per finding, named after
// its item, each failing on the code the review ran against. Where an
// interleaving matters the test forces it through a hook (no sleeps); the
// clock is a ManualClock.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "engine/db_impl.h"
#include "tally/admin.h"
#include "tally/batch.h"
#include "tally/db.h"
#include "tally/limits.h"
#include "testutil/db_fixture.h"
#include "testutil/sanitized.h"
#include "testutil/testutil.h"

namespace tally {
namespace {

constexpr int64_t kHour = 3'600'000;
constexpr int64_t kStart = 1'700'000'000'000;

class Review3 : public test::DbMatrixTest {
 protected:
  Review3() : DbMatrixTest(kStart) {}
  Options NoWorker() const {
    Options o = ClockOptions();
    o.rollup_interval_ms = 0;  // roll-ups only when a test asks
    return o;
  }
};

// Item 1: a reset carries its event time on a counter with a dedupe
// window; a redelivery once its marker has expired is outside the window
// and changes nothing (it was `applied` again, and the counts since it
// were gone).
TEST_P(Review3, Item01_RedeliveredResetAfterItsMarkerExpiredIsOutsideTheWindow) {
  auto db = Open(ClockOptions());
  CounterSpec spec{4};
  spec.dedupe_window_ms = kHour;
  ASSERT_OK(db->CreateCounter("w", spec));
  ASSERT_OK(db->Increment("w", 7));
  // Without its event time a reset is refused, as a once-increment is.
  auto r = db->Reset("w", "r1", 0);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsInvalidArgument()) << r.status().ToString();
  ResetOptions at;
  at.event_time_ms = clock_.NowMillis();
  r = db->Reset("w", "r1", 0, at);
  ASSERT_OK(r);
  EXPECT_EQ(r->outcome, Outcome::kApplied);
  for (int i = 0; i < 50; ++i) {
    OnceOptions t;
    t.event_time_ms = clock_.NowMillis();
    ASSERT_OK(db->IncrementOnce("w", "e" + std::to_string(i), 1, t));
  }
  // Inside the window the redelivery is a duplicate.
  r = db->Reset("w", "r1", 0, at);
  ASSERT_OK(r);
  EXPECT_EQ(r->outcome, Outcome::kDuplicate);
  // Two hours later the marker is compacted away; the redelivery is late.
  clock_.Advance(2 * kHour);
  ASSERT_OK(tally::Compact(*db));
  auto markers = db->CountMarkers("w");
  ASSERT_OK(markers);
  EXPECT_EQ(*markers, 0u);
  r = db->Reset("w", "r1", 0, at);
  ASSERT_OK(r);
  EXPECT_EQ(r->outcome, Outcome::kOutsideWindow);
  auto value = db->ReadExact("w");
  ASSERT_OK(value);
  EXPECT_EQ(*value, 50);
}

// Item 2: a reset reads the key's value and commits target - read; a
// DeleteKey between the two left target - read on an emptied key (-10
// where either order gives 0). Both now hold the key's stripe.
TEST_P(Review3, Item02_ResetRacingDeleteKeyLandsWhollyBeforeOrAfter) {
  const int kRounds = test::kSanitized ? 100 : 400;
  auto db = Open();
  CounterSpec spec{4};
  spec.keyed = true;
  ASSERT_OK(db->CreateCounter("likes", spec));
  int wrong = 0;
  for (int i = 0; i < kRounds; ++i) {
    const std::string key = "k" + std::to_string(i);
    ASSERT_OK(db->Increment({"likes", key}, 10));
    std::atomic<int> ready{0};
    Status deleted;
    std::thread deleter([&] {
      ready.fetch_add(1);
      while (ready.load() < 2) {
      }
      deleted = db->DeleteKey("likes", key);
    });
    ready.fetch_add(1);
    while (ready.load() < 2) {
    }
    auto r = db->Reset({"likes", key}, "r" + std::to_string(i), 0);
    deleter.join();
    ASSERT_OK(r);
    ASSERT_OK(deleted);
    auto v = db->ReadExact({"likes", key});
    ASSERT_OK(v);
    if (*v != 0) ++wrong;
  }
  EXPECT_EQ(wrong, 0) << "of " << kRounds << " rounds";
}

// Item 3: a key holding only refused once-increments exists where keys are
// listed (ListKeys, which export walks), so its markers are not left
// behind by an export.
TEST_P(Review3, Item03_AKeyHoldingOnlyRefusalsIsListed) {
  auto db = Open();
  CounterSpec spec;
  spec.keyed = true;
  spec.bounds = CounterBounds::AtLeast(0);
  ASSERT_OK(db->CreateCounter("stock", spec));
  auto take = db->IncrementOnce({"stock", "sku-1"}, "order-1", -1);
  ASSERT_OK(take);
  EXPECT_EQ(take->outcome, Outcome::kRefused);
  auto keys = db->ListKeys("stock", {});
  ASSERT_OK(keys);
  ASSERT_EQ(keys->size(), 1u);
  EXPECT_EQ((*keys)[0].key, "sku-1");
  EXPECT_EQ((*keys)[0].value, 0);
  auto markers = db->ListMarkers({"stock", "sku-1"}, {});
  ASSERT_OK(markers);
  ASSERT_EQ(markers->size(), 1u);
  EXPECT_TRUE((*markers)[0].refused);
  VerifyReport report;
  ASSERT_OK(Verify(*db, &report));
  EXPECT_TRUE(report.problems.empty()) << report.problems.front();
}

// Item 4: a roll-up that read its snapshot before the last increments but
// writes after a newer roll-up must not replace the newer total.
void HoldFirstRollupWhileAnotherRuns(Db* db, const std::string& counter,
                                     CounterRef ref) {
  auto* impl = dynamic_cast<engine::DbImpl*>(db);
  ASSERT_NE(impl, nullptr);
  ASSERT_OK(db->Increment(ref, 1));
  std::atomic<bool> first{true};
  Status newer;
  impl->SetRollupHookForTest([&] {
    if (!first.exchange(false)) return;  // the newer roll-up passes
    // Held after its read: 10 more, then a full roll-up in another thread.
    newer = db->Increment(ref, 10).status();
    std::thread other([&] {
      if (newer.ok()) newer = db->RollupNow(counter);
    });
    other.join();
  });
  ASSERT_OK(db->RollupNow(counter));
  impl->SetRollupHookForTest(nullptr);
  ASSERT_OK(newer);
  auto cached = db->ReadCached(counter);
  ASSERT_OK(cached);
  EXPECT_EQ(cached->value, 11);
}

TEST_P(Review3, Item04_ACachedTotalNeverGoesBackwards) {
  auto db = Open(NoWorker());
  ASSERT_OK(db->CreateCounter("views", {4}));
  HoldFirstRollupWhileAnotherRuns(db.get(), "views", "views");
}

TEST_P(Review3, Item04_AKeyedCachedTotalNeverGoesBackwards) {
  auto db = Open(NoWorker());
  CounterSpec spec{4};
  spec.keyed = true;
  ASSERT_OK(db->CreateCounter("likes", spec));
  HoldFirstRollupWhileAnotherRuns(db.get(), "likes", {"likes", "p1"});
}

// Item 5: a key whose value passed beyond int64 is that key's state: its
// listing marks it, the top lists (stored and exact) count it apart and
// name it, the cached total refuses naming it, and every other key reads
// as before. Before the fix every one of these calls failed with
// OutOfRange for the whole counter.
void ExpectTopWithoutA(const Result<TopKeysResult>& top) {
  ASSERT_OK(top);
  EXPECT_EQ(top->key_count, 3u);
  EXPECT_EQ(top->out_of_range_keys, 1u);
  EXPECT_EQ(top->first_out_of_range_key, "a");
  EXPECT_EQ(top->total, 8);
  ASSERT_EQ(top->keys.size(), 2u);
  EXPECT_EQ(top->keys[0].key, "b");
  EXPECT_EQ(top->keys[0].value, 5);
  EXPECT_EQ(top->keys[1].key, "c");
  EXPECT_FALSE(top->keys[0].out_of_range);
}

void ExpectListMarksA(Db* db) {
  auto keys = db->ListKeys("kv", {});
  ASSERT_OK(keys);
  ASSERT_EQ(keys->size(), 3u);
  EXPECT_EQ((*keys)[0].key, "a");
  EXPECT_TRUE((*keys)[0].out_of_range);
  EXPECT_EQ((*keys)[0].value, 0);
  EXPECT_EQ((*keys)[1].key, "b");
  EXPECT_FALSE((*keys)[1].out_of_range);
  EXPECT_EQ((*keys)[1].value, 5);
  EXPECT_EQ((*keys)[2].value, 3);
}

TEST_P(Review3, Item05_AnOutOfRangeKeyIsThatKeysStateOnly) {
  auto db = Open(NoWorker());
  CounterSpec spec{2};
  spec.keyed = true;
  ASSERT_OK(db->CreateCounter("kv", spec));
  ASSERT_OK(db->Increment({"kv", "a"}, kMaxDelta));
  ASSERT_OK(db->Increment({"kv", "a"}, 1));
  ASSERT_OK(db->Increment({"kv", "b"}, 5));
  ASSERT_OK(db->Increment({"kv", "c"}, 3));
  auto read = db->ReadKeys("kv", {"b", "a"});
  ASSERT_FALSE(read.ok());
  EXPECT_TRUE(read.status().IsOutOfRange()) << read.status().ToString();
  EXPECT_NE(read.status().ToString().find("key \"a\""), std::string::npos)
      << read.status().ToString();
  ExpectListMarksA(db.get());
  TopKeysOptions exact;
  exact.exact = true;
  ExpectTopWithoutA(db->TopKeys("kv", 10, exact));
  ASSERT_OK(db->RollupNow("kv"));
  ExpectTopWithoutA(db->TopKeys("kv", 10));
  auto cached = db->ReadCached("kv");
  ASSERT_FALSE(cached.ok());
  EXPECT_TRUE(cached.status().IsOutOfRange()) << cached.status().ToString();
  EXPECT_NE(cached.status().ToString().find("key \"a\""), std::string::npos)
      << cached.status().ToString();
  // A Reset cannot read the value it would add to: refused, key unchanged.
  auto reset = db->Reset({"kv", "a"}, "r1", 0);
  ASSERT_FALSE(reset.ok());
  EXPECT_TRUE(reset.status().IsOutOfRange()) << reset.status().ToString();
  // The same from table files, where the wide sum was folded.
  ASSERT_OK(tally::Compact(*db));
  ExpectListMarksA(db.get());
  ExpectTopWithoutA(db->TopKeys("kv", 10, exact));
  // Deleting the key is the remedy: everything reads again.
  ASSERT_OK(db->DeleteKey("kv", "a"));
  ASSERT_OK(db->RollupNow("kv"));
  cached = db->ReadCached("kv");
  ASSERT_OK(cached);
  EXPECT_EQ(cached->value, 8);
  auto top = db->TopKeys("kv", 10);
  ASSERT_OK(top);
  EXPECT_EQ(top->out_of_range_keys, 0u);
  EXPECT_EQ(top->first_out_of_range_key, "");
  EXPECT_EQ(top->key_count, 2u);
}

// Item 6: one range for a value, kMinDelta..kMaxDelta, in every path:
// INT64_MIN reached by a plain increment reads OutOfRange, never as a
// value export would write and import refuse.
TEST_P(Review3, Item06_Int64MinIsNeverAValue) {
  auto db = Open();
  ASSERT_OK(db->CreateCounter("one", {1}));
  auto r = db->Reset("one", "low", kMinDelta);
  ASSERT_OK(r);
  EXPECT_EQ(r->value, kMinDelta);
  ASSERT_OK(db->Increment("one", -1));
  auto v = db->ReadExact("one");
  ASSERT_FALSE(v.ok());
  EXPECT_TRUE(v.status().IsOutOfRange()) << v.status().ToString();
  // Back inside the range, it reads again.
  ASSERT_OK(db->Increment("one", 1));
  v = db->ReadExact("one");
  ASSERT_OK(v);
  EXPECT_EQ(*v, kMinDelta);
}

// Item 7: a clock reading outside the event-time range is refused at open,
// and ignored later (the engine's time stays at its last good reading), so
// no deadline overflows: a hold stays held, a lease stays positive.
TEST_P(Review3, Item07_AClockFarInTheFutureIsRefused) {
  {
    test::ManualClock far(std::numeric_limits<int64_t>::max());
    Options o = BaseOptions();
    o.clock = &far;
    std::unique_ptr<Db> db;
    Status s = Db::Open(o, path(), &db);
    EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
    EXPECT_EQ(db, nullptr);
  }
  auto db = Open(ClockOptions());
  CounterSpec spec;
  spec.bounds = CounterBounds::AtLeast(0);
  ASSERT_OK(db->CreateCounter("stock", spec));
  ASSERT_OK(db->Increment("stock", 5));
  const int64_t before = clock_.NowMillis();
  clock_.Advance(std::numeric_limits<int64_t>::max() - before);
  auto h = db->Reserve("stock", "cart-1", 5, kHour);
  ASSERT_OK(h);
  EXPECT_EQ(h->state, HoldState::kHeld);
  // The 5 units are held: a take of one is refused now.
  auto take = db->Increment("stock", -1);
  ASSERT_OK(take);
  EXPECT_EQ(take->outcome, Outcome::kRefused);
  auto c = db->Claim("job-1", "worker-a", kHour);
  ASSERT_OK(c);
  EXPECT_EQ(c->answer, ClaimAnswer::kAcquired);
  EXPECT_GT(c->claim.lease_until_ms, before);
  auto again = db->Claim("job-1", "worker-b", kHour);
  ASSERT_OK(again);
  EXPECT_EQ(again->answer, ClaimAnswer::kBusy);
}

// Item 8: held + units is bounded: a Reserve that would hold more than
// int64 is refused, and the key stays readable.
TEST_P(Review3, Item08_HeldUnitsNeverOverflow) {
  auto db = Open();
  CounterSpec spec;
  spec.bounds = CounterBounds::AtLeast(kMinDelta);
  ASSERT_OK(db->CreateCounter("deep", spec));
  auto first = db->Reserve("deep", "a", kMaxDelta, kHour);
  ASSERT_OK(first);
  EXPECT_EQ(first->state, HoldState::kHeld);
  auto second = db->Reserve("deep", "b", kMaxDelta, kHour);
  ASSERT_FALSE(second.ok());
  EXPECT_TRUE(second.status().IsOutOfRange()) << second.status().ToString();
  auto held = db->ReadHeld("deep");
  ASSERT_OK(held);
  EXPECT_EQ(held->held, kMaxDelta);
  auto take = db->Increment("deep", -1);
  ASSERT_OK(take);
}

// Item 9: a redelivery is answered as the first delivery was, remaining
// included (it was recomputed from the bounds and the asked value).
TEST_P(Review3, Item09_ARedeliveryIsAnsweredAsTheFirst) {
  auto db = Open();
  CounterSpec stock;
  stock.bounds = CounterBounds::AtLeast(0);
  ASSERT_OK(db->CreateCounter("stock", stock));
  ASSERT_OK(db->Increment("stock", 12));
  CounterSpec seats;
  seats.bounds = CounterBounds::Between(0, 100);
  ASSERT_OK(db->CreateCounter("seats", seats));
  ASSERT_OK(db->Increment("seats", 50));
  CounterSpec held;
  held.bounds = CounterBounds::AtLeast(0);
  ASSERT_OK(db->CreateCounter("held", held));
  ASSERT_OK(db->Increment("held", 10));
  auto hold = db->Reserve("held", "cart", 3, kHour);
  ASSERT_OK(hold);
  struct Call {
    const char* what;
    std::function<Result<IncrementResult>()> call;
  };
  const Call calls[] = {
      {"reset 12 -> 10 on AtLeast(0)",
       [&] { return db->Reset("stock", "r1", 10); }},
      {"reset 50 -> 10 on Between(0,100)",
       [&] { return db->Reset("seats", "r2", 10); }},
      {"once-take of 1 from 10 with 3 held",
       [&] { return db->IncrementOnce("held", "t1", -1); }},
  };
  for (const Call& c : calls) {
    auto first = c.call();
    ASSERT_OK(first);
    EXPECT_EQ(first->outcome, Outcome::kApplied) << c.what;
    auto again = c.call();
    ASSERT_OK(again);
    EXPECT_EQ(again->outcome, Outcome::kDuplicate) << c.what;
    EXPECT_EQ(again->remaining, first->remaining) << c.what;
    EXPECT_EQ(again->value, first->value) << c.what;
    // Across a reopen too (the answer is on disk, not in memory).
    Reopen(&db);
    auto later = c.call();
    ASSERT_OK(later);
    EXPECT_EQ(later->remaining, first->remaining) << c.what;
  }
}

// Item 10: C1 controls (U+0080..U+009F: the terminal's escape introducer
// U+009B, the line break U+0085) are control characters too.
TEST_P(Review3, Item10_C1ControlCharactersAreRefused) {
  auto db = Open();
  CounterSpec spec{2};
  spec.keyed = true;
  ASSERT_OK(db->CreateCounter("kv", spec));
  for (const std::string bad : {"a\xc2\x9b[2J", "line\xc2\x85two", "\xc2\x80"}) {
    Status s = db->Increment({"kv", bad}, 1).status();
    EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
    s = db->IncrementOnce({"kv", "k"}, bad, 1).status();
    EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
    s = db->CreateCounter(bad, {1});
    EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  }
  // A printable character past them (U+00A0, U+00E9) is text.
  ASSERT_OK(db->Increment({"kv", "caf\xc3\xa9\xc2\xa0"}, 1));
  auto keys = db->ListKeys("kv", {});
  ASSERT_OK(keys);
  EXPECT_EQ(keys->size(), 1u);
}

// Item 15: Apply leaves a pre-filled `results` exactly as it was on error
// (its contents, not only its size).
TEST_P(Review3, Item15_ApplyLeavesPrefilledResultsUnchangedOnError) {
  auto db = Open();
  ASSERT_OK(db->CreateCounter("c", {2}));
  std::vector<IncrementResult> results(2);
  results[0].outcome = Outcome::kConflict;
  results[0].applied = 17;
  results[0].shard = 1;
  results[1].outcome = Outcome::kRefused;
  results[1].value = -4;
  const std::vector<IncrementResult> before = results;
  Batch b;
  b.Add("c", 1);
  b.AddOnce("c", "e1", 2);
  b.Add("missing", 3);
  Status s = db->Apply(b, &results);
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();
  ASSERT_EQ(results.size(), before.size());
  for (size_t i = 0; i < results.size(); ++i) {
    EXPECT_EQ(results[i].outcome, before[i].outcome) << i;
    EXPECT_EQ(results[i].applied, before[i].applied) << i;
    EXPECT_EQ(results[i].shard, before[i].shard) << i;
    EXPECT_EQ(results[i].value, before[i].value) << i;
  }
  auto v = db->ReadExact("c");
  ASSERT_OK(v);
  EXPECT_EQ(*v, 0);
}

TALLY_WRITE_MODES(Review3);

}  // namespace
}  // namespace tally
