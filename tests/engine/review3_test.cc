// The third outside review (issue 28): one test per finding, named after
// its item, each failing on the code the review ran against. Where an
// interleaving matters the test forces it through a hook (no sleeps); the
// clock is a ManualClock.
#include <gtest/gtest.h>
#include <rocksdb/env.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "wal/gate_fs.h"
#include "engine/db_impl.h"
#include "engine/test_hooks.h"
#include "tally/admin.h"
#include "tally/batch.h"
#include "tally/db.h"
#include "tally/limits.h"
#include "testutil/answers.h"
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
  EXPECT_NE(read.status().ToString().find("key 'a'"), std::string::npos)
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
  EXPECT_NE(cached.status().ToString().find("key 'a'"), std::string::npos)
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

// Item 15a: a plain increment of a sharded counter that commits while a
// reset runs is kept on top of the reset's value; one committed before the
// reset's read is replaced. Every increment is a distinct power of two, so
// final - value names exactly the increments that landed on top.
TEST_P(Review3, Item15_ResetKeepsIncrementsCommittedDuringItOnTop) {
  auto db = Open(NoWorker());
  auto* impl = dynamic_cast<engine::DbImpl*>(db.get());
  ASSERT_NE(impl, nullptr);
  ASSERT_OK(db->CreateCounter("hits", {4}));
  ASSERT_OK(db->Increment("hits", 1));
  ASSERT_OK(db->Increment("hits", 2));
  Status during;
  int hook_runs = 0;
  // Between the reset's read (1 + 2) and its commit: 4 and 8 commit.
  impl->SetResetHookForTest([&] {
    ++hook_runs;
    std::thread t([&] {
      during = db->Increment("hits", 4).status();
      if (during.ok()) during = db->Increment("hits", 8).status();
    });
    t.join();
  });
  Result<IncrementResult> r = db->Reset("hits", "r1", 1000);
  impl->SetResetHookForTest(nullptr);
  ASSERT_OK(during);
  ASSERT_OK(r);
  EXPECT_EQ(hook_runs, 1);
  EXPECT_EQ(r->outcome, Outcome::kApplied);
  EXPECT_EQ(r->applied, 1000 - (1 + 2));  // it took effect at its read
  ASSERT_OK(db->Increment("hits", 16));
  ASSERT_OK_AND_ASSIGN(int64_t value, db->ReadExact("hits"));
  EXPECT_EQ(value - 1000, 4 + 8 + 16) << "the increments on top, as bits";
  // A redelivery changes nothing and answers as the first.
  ASSERT_OK_AND_ASSIGN(IncrementResult again, db->Reset("hits", "r1", 1000));
  EXPECT_EQ(again.outcome, Outcome::kDuplicate);
  EXPECT_EQ(again.applied, r->applied);
  EXPECT_EQ(test::OkValue(db->ReadExact("hits")), value);
  VerifyReport report;
  ASSERT_OK(Verify(*db, &report));
  EXPECT_TRUE(report.problems.empty()) << report.problems.front();
}

// Item 15a, free-running: two threads add distinct powers of two while a
// reset runs. An increment that returned before Reset was called must be
// replaced by it, one called after Reset returned must be on top, and the
// rest each wholly one or the other: final - value is a sum of a subset of
// the deltas (bits 0..39; the value sits at bit 50).
TEST_P(Review3, Item15_ResetRacingIncrementsKeepsEachWhollyBeforeOrAfter) {
  const int kRounds = test::kSanitized ? 5 : 20;
  constexpr int kThreads = 2;
  constexpr int kEach = 20;
  constexpr int64_t kValue = int64_t{1} << 50;
  auto db = Open(NoWorker());
  int wrong = 0;
  for (int round = 0; round < kRounds; ++round) {
    const std::string name = "h" + std::to_string(round);
    ASSERT_OK(db->CreateCounter(name, {4}));
    // Event order: every call start and return takes the next number.
    std::atomic<int> clock{0};
    std::vector<int> started(kThreads * kEach), returned(kThreads * kEach);
    std::atomic<int> done{0}, failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < kEach; ++i) {
          const int bit = t * kEach + i;
          started[bit] = clock.fetch_add(1);
          if (!db->Increment(name, int64_t{1} << bit).ok()) ++failures;
          returned[bit] = clock.fetch_add(1);
          done.fetch_add(1);
        }
      });
    }
    // Resets once some increments are in (progress, not time).
    while (done.load() < kEach / 2) std::this_thread::yield();
    const int reset_started = clock.fetch_add(1);
    Result<IncrementResult> r = db->Reset(name, "r", kValue);
    const int reset_returned = clock.fetch_add(1);
    for (std::thread& t : threads) t.join();
    ASSERT_EQ(failures.load(), 0);
    ASSERT_OK(r);
    ASSERT_EQ(r->outcome, Outcome::kApplied);
    ASSERT_OK_AND_ASSIGN(int64_t value, db->ReadExact(name));
    const int64_t on_top = value - kValue;
    if (on_top < 0 || on_top >= (int64_t{1} << (kThreads * kEach))) {
      ADD_FAILURE() << "round " << round << ": " << value
                    << " is not the reset's value plus whole increments";
      ++wrong;
      continue;
    }
    for (int bit = 0; bit < kThreads * kEach; ++bit) {
      const bool kept = (on_top >> bit) & 1;
      if (returned[bit] < reset_started && kept) {
        ADD_FAILURE() << "round " << round << ": increment 2^" << bit
                      << " returned before the reset and survived it";
        ++wrong;
      }
      if (started[bit] > reset_returned && !kept) {
        ADD_FAILURE() << "round " << round << ": increment 2^" << bit
                      << " made after the reset was lost";
        ++wrong;
      }
    }
    // What the reset took is what it read: kValue - applied is the sum of
    // the increments it replaced, the complement of those on top.
    const int64_t all = (int64_t{1} << (kThreads * kEach)) - 1;
    EXPECT_EQ(kValue - r->applied, all - on_top) << "round " << round;
  }
  EXPECT_EQ(wrong, 0);
}

// Item 15c: batches that move k from one shard (one key) to another keep
// each counter's total; a roll-up (ReadCached after RollupNow, TopKeys'
// total) never shows a batch half applied.
TEST_P(Review3, Item15_RollupsNeverShowATornBatch) {
  const int kBatches = test::kSanitized ? 300 : 1'000;
  auto db = Open(NoWorker());
  ASSERT_OK(db->CreateCounter("c", {4}));
  CounterSpec keyed{4};
  keyed.keyed = true;
  ASSERT_OK(db->CreateCounter("kc", keyed));
  // Two affinity keys of different shards of "c".
  IncrementOptions a, b;
  a.affinity_key = "a";
  ASSERT_OK_AND_ASSIGN(IncrementResult first, db->Increment("c", 1000, a));
  std::vector<std::string> candidates;
  for (int i = 0; i < 64; ++i) candidates.push_back("b" + std::to_string(i));
  for (const std::string& cand : candidates) {
    IncrementOptions o;
    o.affinity_key = cand;
    ASSERT_OK_AND_ASSIGN(IncrementResult r, db->Increment("c", 1, o));
    if (r.shard != first.shard) {
      b.affinity_key = cand;
      break;
    }
  }
  ASSERT_FALSE(b.affinity_key.empty()) << "no key of another shard";
  ASSERT_OK(db->Increment({"kc", "x"}, 500, a));
  ASSERT_OK(db->Increment({"kc", "y"}, 500, b));
  ASSERT_OK_AND_ASSIGN(const int64_t total, db->ReadExact("c"));
  ASSERT_OK_AND_ASSIGN(const std::vector<int64_t> before, db->ShardCounts("c"));
  constexpr int64_t kKeyedTotal = 1000;
  std::atomic<bool> writing{true};
  Status wrote;
  std::thread writer([&] {
    for (int i = 1; i <= kBatches && wrote.ok(); ++i) {
      Batch batch;
      batch.Add("c", i, a);
      batch.Add("c", -i, b);
      batch.Add({"kc", "x"}, -i, a);
      batch.Add({"kc", "y"}, i, b);
      std::vector<IncrementResult> results;
      wrote = db->Apply(batch, &results);
    }
    writing = false;
  });
  int torn = 0, rollups = 0;
  for (bool last = false; !last;) {
    last = !writing.load();
    ASSERT_OK(db->RollupNow("c"));
    ASSERT_OK_AND_ASSIGN(CachedValue cached, db->ReadCached("c"));
    if (cached.value != total) ++torn;
    ASSERT_OK(db->RollupNow("kc"));
    ASSERT_OK_AND_ASSIGN(CachedValue kcached, db->ReadCached("kc"));
    if (kcached.value != kKeyedTotal) ++torn;
    ASSERT_OK_AND_ASSIGN(TopKeysResult top, db->TopKeys("kc", 2));
    if (top.total != kKeyedTotal) ++torn;
    int64_t listed = 0;
    for (const KeyValue& kv : top.keys) listed += kv.value;
    if (listed != kKeyedTotal) ++torn;
    ++rollups;
  }
  writer.join();
  ASSERT_OK(wrote);
  EXPECT_EQ(torn, 0) << "of " << rollups << " roll-ups";
  // The shards moved: the batches were applied.
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> shards, db->ShardCounts("c"));
  EXPECT_EQ(shards[first.shard] - before[first.shard],
            int64_t{kBatches} * (kBatches + 1) / 2);
  EXPECT_EQ(test::OkValue(db->ReadExact("c")), total);
}

// Item 15d: a marker found past its expiry (not yet dropped by compaction)
// still answers: a redelivery with another delta is kConflict and one with
// the same delta kDuplicate, both with its shard, whatever time they claim;
// nothing changes. Once compaction dropped it, a redelivery is outside the
// window.
TEST_P(Review3, Item15_AnExpiredMarkerStillAnswersConflict) {
  auto db = Open(ClockOptions());
  CounterSpec spec{4};
  spec.dedupe_window_ms = kHour;
  ASSERT_OK(db->CreateCounter("w", spec));
  OnceOptions at;
  at.event_time_ms = clock_.NowMillis();
  ASSERT_OK_AND_ASSIGN(IncrementResult first,
                       db->IncrementOnce("w", "e1", 5, at));
  ASSERT_EQ(first.outcome, Outcome::kApplied);
  clock_.Advance(2 * kHour);  // past the marker's expiry; not compacted
  ASSERT_OK_AND_ASSIGN(uint64_t live, db->CountMarkers("w"));
  EXPECT_EQ(live, 0u) << "the marker has expired";
  ASSERT_OK_AND_ASSIGN(IncrementResult other,
                       db->IncrementOnce("w", "e1", 6, at));
  EXPECT_EQ(other.outcome, Outcome::kConflict);
  EXPECT_EQ(other.shard, first.shard);
  EXPECT_EQ(other.applied, 0);
  OnceOptions now;
  now.event_time_ms = clock_.NowMillis();  // a copy claiming a new time
  ASSERT_OK_AND_ASSIGN(IncrementResult late,
                       db->IncrementOnce("w", "e1", 6, now));
  EXPECT_EQ(late.outcome, Outcome::kConflict);
  ASSERT_OK_AND_ASSIGN(IncrementResult same,
                       db->IncrementOnce("w", "e1", 5, at));
  EXPECT_EQ(same.outcome, Outcome::kDuplicate);
  EXPECT_EQ(same.shard, first.shard);
  EXPECT_EQ(same.applied, 5);
  EXPECT_EQ(test::OkValue(db->ReadExact("w")), 5);
  // Gone after compaction: the redelivery is late, not counted.
  ASSERT_OK(tally::Compact(*db));
  ASSERT_OK_AND_ASSIGN(IncrementResult gone,
                       db->IncrementOnce("w", "e1", 6, at));
  EXPECT_EQ(gone.outcome, Outcome::kOutsideWindow);
  EXPECT_EQ(test::OkValue(db->ReadExact("w")), 5);
}

TALLY_WRITE_MODES(Review3);

using test::Answers;

// The hang detector's bound: far beyond any run.
constexpr std::chrono::seconds kHangBound{300};

// Asynchronous calls are only asynchronous with Options::sync (else they
// run inline): these run durable, over a GateFs that holds a WAL sync so a
// commit stays queued (or in its write) until the test releases it.
class Review3Gated : public test::DbTest {
 protected:
  Review3Gated()
      : DbTest(kStart),
        fs_(std::make_shared<test::GateFs>()),
        env_(rocksdb::NewCompositeEnv(fs_)) {}
  Options Gated() const {
    Options o = ClockOptions();
    o.sync = true;
    o.rollup_interval_ms = 0;
    // The ids' stripes: distinct, so a hook's call never waits for a
    // stripe its reset holds.
    o.event_lock_stripes = uint32_t{1} << 16;
    return o;
  }
  // Holds the next WAL sync with a commit of "blocker" (created on first
  // use): everything committed after it queues until fs_->Release().
  void HoldWithBlocker(Db* db, Answers* answers, int tag) {
    if (db->DescribeCounter("blocker").status().IsNotFound()) {
      ASSERT_OK(db->CreateCounter("blocker", {1}));
    }
    fs_->HoldNextSync();
    db->IncrementAsync("blocker", 1, answers->Make(tag));
    fs_->WaitUntilHeld();
  }
  // Waits (yielding) until `n` commits are queued, the held one included.
  static void AwaitQueued(Db* db, uint64_t n) {
    while (engine::CommitQueueForTest(db).queued < n) {
      std::this_thread::yield();
    }
  }

  std::shared_ptr<test::GateFs> fs_;
  std::unique_ptr<rocksdb::Env> env_;  // outlives every Db of the test
};

// Verify finds no problem in `db`.
void ExpectVerified(Db* db) {
  VerifyReport report;
  ASSERT_OK(Verify(*db, &report));
  EXPECT_TRUE(report.problems.empty()) << test::Dump(report);
}

// A keyed counter of 4 shards named `name`.
void CreateKeyed(Db* db, const std::string& name) {
  CounterSpec spec{4};
  spec.keyed = true;
  ASSERT_OK(db->CreateCounter(name, spec));
}

// Counts the callbacks it makes that ran, and those that got an error.
struct Calls {
  std::atomic<int> called{0}, failed{0};
  IncrementCallback Count() {
    return [this](const Result<IncrementResult>& r) {
      if (!r.ok()) ++failed;
      ++called;
    };
  }
};

// Asynchronous commits in flight at once with Options::sync (the group
// commit's max_async_in_flight).
constexpr int kAsyncLimit = 65536;

// Puts kAsyncLimit increments of 1 of `counter` in flight: the first
// (calling back `first`) held in its WAL sync, the rest (`rest`) queued
// behind it, until fs->Release().
void FillToTheLimit(Db* db, test::GateFs* fs, const std::string& counter,
                    IncrementCallback first, const IncrementCallback& rest) {
  fs->HoldNextSync();
  db->IncrementAsync(counter, 1, std::move(first));
  fs->WaitUntilHeld();
  for (int i = 1; i < kAsyncLimit; ++i) db->IncrementAsync(counter, 1, rest);
}

// Item 15b: with the in-flight limit reached, IncrementAsync waits for
// room (it neither queues nor calls back) until callbacks return some.
TEST_F(Review3Gated, Item15_IncrementAsyncWaitsForRoomAtTheLimit) {
  auto db = Open(Gated(), env_.get());
  ASSERT_OK(db->CreateCounter("c", {8}));
  Calls calls;
  FillToTheLimit(db.get(), fs_.get(), "c", calls.Count(), calls.Count());
  ASSERT_EQ(engine::CommitQueueForTest(db.get()).queued,
            uint64_t{kAsyncLimit});
  std::atomic<bool> returned{false};
  int called_when_returned = -1;
  test::FinishesOrDie("IncrementAsync past the limit", kHangBound, [&] {
    std::thread over([&] {
      db->IncrementAsync("c", 1, calls.Count());
      called_when_returned = calls.called.load();
      returned = true;
    });
    while (engine::CommitQueueForTest(db.get()).room_waiters < 1) {
      std::this_thread::yield();
    }
    // It waits: not queued, not returned, nothing called back.
    EXPECT_FALSE(returned.load());
    EXPECT_EQ(engine::CommitQueueForTest(db.get()).queued,
              uint64_t{kAsyncLimit});
    EXPECT_EQ(calls.called.load(), 0);
    fs_->Release();
    over.join();
    while (calls.called.load() < kAsyncLimit + 1) std::this_thread::yield();
  });
  // Room came back from callbacks that had run.
  EXPECT_GT(called_when_returned, 0);
  EXPECT_EQ(calls.failed.load(), 0);
  EXPECT_EQ(test::OkValue(db->ReadExact("c")), kAsyncLimit + 1);
}

// Item 15b: an IncrementAsync from a `done` callback never waits for room,
// even with the limit reached (the room it would wait for comes back only
// when callbacks, its own included, return: waiting would hang).
TEST_F(Review3Gated, Item15_IncrementAsyncFromDoneNeverWaitsForRoom) {
  constexpr int kFromDone = 3;
  auto db = Open(Gated(), env_.get());
  ASSERT_OK(db->CreateCounter("c", {8}));
  Calls calls;
  IncrementCallback first = [&](const Result<IncrementResult>& r) {
    if (!r.ok()) ++calls.failed;
    // All kAsyncLimit in flight, this one's room not yet back.
    for (int i = 0; i < kFromDone; ++i) {
      db->IncrementAsync("c", 10, calls.Count());
    }
    ++calls.called;
  };
  FillToTheLimit(db.get(), fs_.get(), "c", first, calls.Count());
  test::FinishesOrDie("IncrementAsync from done at the limit", kHangBound,
                      [&] {
                        fs_->Release();
                        while (calls.called.load() < kAsyncLimit + kFromDone) {
                          std::this_thread::yield();
                        }
                      });
  EXPECT_EQ(calls.failed.load(), 0);
  EXPECT_EQ(test::OkValue(db->ReadExact("c")), kAsyncLimit + 10 * kFromDone);
}

// Item 13: IncrementOnceAsync and Reset of one key of a sharded keyed
// counter: the reset takes effect at its read, so a once-increment
// committed after that read (queued before the reset's commit, or
// committed while the reset is held after its read) lands wholly on top;
// its answer (kApplied) matches the final state (value and marker), and
// a redelivery answers kDuplicate with its shard. A reset whose id a
// queued once-increment carries is a conflict and changes nothing.
TEST_F(Review3Gated, Item13_OnceAsyncAndResetOfOneKeyLandWhollyBeforeOrAfter) {
  auto db = Open(Gated(), env_.get());
  auto* impl = dynamic_cast<engine::DbImpl*>(db.get());
  ASSERT_NE(impl, nullptr);
  CreateKeyed(db.get(), "likes");
  const CounterRef p("likes", "p");
  ASSERT_OK(db->Increment(p, 10));
  // The first reset of a database raises its format, a synced write of
  // its own: done here, so none queues behind the held write below.
  ASSERT_OK(db->Reset({"likes", "other"}, "warm-up", 0));
  Answers answers;
  HoldWithBlocker(db.get(), &answers, 0);
  // 1. The once-increment queued first; the reset reads (10) and commits
  // behind it.
  db->IncrementOnceAsync(p, "e1", 5, answers.Make(1));
  AwaitQueued(db.get(), 2);
  EXPECT_EQ(answers.count(), 0u);
  Result<IncrementResult> reset1 = Status::Busy("not run");
  test::FinishesOrDie("reset behind a queued once-increment", kHangBound,
                      [&] {
                        std::thread t([&] { reset1 = db->Reset(p, "r1", 100); });
                        AwaitQueued(db.get(), 3);  // read, decided, queued
                        fs_->Release();
                        t.join();
                        answers.Wait(2);
                      });
  ASSERT_OK_AND_ASSIGN(IncrementResult e1, answers.Of(1));
  EXPECT_EQ(e1.outcome, Outcome::kApplied);
  ASSERT_OK(reset1);
  EXPECT_EQ(reset1->outcome, Outcome::kApplied);
  EXPECT_EQ(reset1->applied, 100 - 10);
  EXPECT_EQ(test::OkValue(db->ReadExact(p)), 100 + 5);
  ASSERT_OK_AND_ASSIGN(MarkerInfo m1, db->GetMarker(p, "e1"));
  EXPECT_EQ(m1.delta, 5);
  EXPECT_EQ(m1.shard, e1.shard);

  // 2. The reset held between its read (105) and its commit; the
  // once-increment commits meanwhile.
  impl->SetResetHookForTest([&] {
    std::thread t([&] {
      db->IncrementOnceAsync(p, "e2", 7, answers.Make(2));
      answers.Wait(3);
    });
    t.join();
  });
  Result<IncrementResult> reset2 = Status::Busy("not run");
  test::FinishesOrDie("once-increment during a reset", kHangBound,
                      [&] { reset2 = db->Reset(p, "r2", 200); });
  impl->SetResetHookForTest(nullptr);
  ASSERT_OK_AND_ASSIGN(IncrementResult e2, answers.Of(2));
  EXPECT_EQ(e2.outcome, Outcome::kApplied);
  ASSERT_OK(reset2);
  EXPECT_EQ(reset2->applied, 200 - 105);
  EXPECT_EQ(test::OkValue(db->ReadExact(p)), 200 + 7);
  ASSERT_OK_AND_ASSIGN(MarkerInfo m2, db->GetMarker(p, "e2"));
  EXPECT_EQ(m2.delta, 7);

  // Redeliveries answer as the first deliveries did, changing nothing.
  db->IncrementOnceAsync(p, "e1", 5, answers.Make(3));
  db->IncrementOnceAsync(p, "e2", 7, answers.Make(4));
  answers.Wait(5);
  for (const auto& [tag, first] : {std::pair{3, e1}, std::pair{4, e2}}) {
    ASSERT_OK_AND_ASSIGN(IncrementResult again, answers.Of(tag));
    EXPECT_EQ(again.outcome, Outcome::kDuplicate) << tag;
    EXPECT_EQ(again.shard, first.shard) << tag;
  }
  for (const auto& [id, first] :
       {std::pair{"r1", *reset1}, std::pair{"r2", *reset2}}) {
    const int64_t target = std::string(id) == "r1" ? 100 : 200;
    ASSERT_OK_AND_ASSIGN(IncrementResult again, db->Reset(p, id, target));
    EXPECT_EQ(again.outcome, Outcome::kDuplicate) << id;
    EXPECT_EQ(again.applied, first.applied) << id;
  }
  EXPECT_EQ(test::OkValue(db->ReadExact(p)), 207);

  // 3. A reset with the id of a queued once-increment: one id is one
  // increment or one reset, so the reset is a conflict.
  HoldWithBlocker(db.get(), &answers, 5);
  db->IncrementOnceAsync(p, "x", 3, answers.Make(6));
  Result<IncrementResult> reset3 = Status::Busy("not run");
  test::FinishesOrDie("reset of a queued id", kHangBound, [&] {
    std::thread t([&] { reset3 = db->Reset(p, "x", 0); });
    fs_->Release();
    t.join();
    answers.Wait(7);
  });
  ASSERT_OK_AND_ASSIGN(IncrementResult x, answers.Of(6));
  EXPECT_EQ(x.outcome, Outcome::kApplied);
  ASSERT_OK(reset3);
  EXPECT_EQ(reset3->outcome, Outcome::kConflict);
  EXPECT_EQ(test::OkValue(db->ReadExact(p)), 207 + 3);
  ExpectVerified(db.get());
}

// Item 13: IncrementOnceAsync and DeleteKey of one key. A once-increment
// queued before the delete is deleted with the key (value 0, no marker:
// it landed wholly before), and its redelivery counts again, as after any
// delete. One decided while the delete's commit is in its write lands
// wholly after it (value and marker kept); a copy of an event the key
// held before the delete is answered kDuplicate from its marker, and the
// delete then removes that marker with the count, consistently.
TEST_F(Review3Gated, Item13_OnceAsyncAndDeleteKeyOfOneKeyLandWhollyBeforeOrAfter) {
  auto db = Open(Gated(), env_.get());
  CreateKeyed(db.get(), "likes");
  const CounterRef p("likes", "p");
  const CounterRef q("likes", "q");
  ASSERT_OK(db->Increment(p, 10));
  ASSERT_OK_AND_ASSIGN(IncrementResult f, db->IncrementOnce(q, "f", 10));
  ASSERT_EQ(f.outcome, Outcome::kApplied);
  Answers answers;
  HoldWithBlocker(db.get(), &answers, 0);
  // 1. Queued first, then the delete.
  db->IncrementOnceAsync(p, "e", 5, answers.Make(1));
  AwaitQueued(db.get(), 2);
  Status deleted;
  test::FinishesOrDie("delete behind a queued once-increment", kHangBound,
                      [&] {
                        std::thread t([&] { deleted = db->DeleteKey("likes", "p"); });
                        AwaitQueued(db.get(), 3);
                        fs_->Release();
                        t.join();
                        answers.Wait(2);
                      });
  ASSERT_OK(deleted);
  ASSERT_OK_AND_ASSIGN(IncrementResult e, answers.Of(1));
  EXPECT_EQ(e.outcome, Outcome::kApplied);
  EXPECT_EQ(test::OkValue(db->ReadExact(p)), 0);
  EXPECT_TRUE(db->GetMarker(p, "e").status().IsNotFound());
  // Counted again after the delete, with the same answer.
  db->IncrementOnceAsync(p, "e", 5, answers.Make(2));
  answers.Wait(3);
  ASSERT_OK_AND_ASSIGN(IncrementResult e_again, answers.Of(2));
  EXPECT_EQ(e_again.outcome, Outcome::kApplied);
  EXPECT_EQ(test::OkValue(db->ReadExact(p)), 5);

  // 2. The delete of q held in its write; then a copy of q's old event
  // and a new event.
  fs_->HoldNextSync();
  Status deleted_q;
  test::FinishesOrDie("once-increments during a delete", kHangBound, [&] {
    std::thread t([&] { deleted_q = db->DeleteKey("likes", "q"); });
    fs_->WaitUntilHeld();
    db->IncrementOnceAsync(q, "f", 10, answers.Make(3));  // marker: inline
    EXPECT_EQ(answers.count(), 4u);
    db->IncrementOnceAsync(q, "g", 6, answers.Make(4));
    fs_->Release();
    t.join();
    answers.Wait(5);
  });
  ASSERT_OK(deleted_q);
  ASSERT_OK_AND_ASSIGN(IncrementResult f_copy, answers.Of(3));
  EXPECT_EQ(f_copy.outcome, Outcome::kDuplicate);
  EXPECT_EQ(f_copy.shard, f.shard);
  ASSERT_OK_AND_ASSIGN(IncrementResult g, answers.Of(4));
  EXPECT_EQ(g.outcome, Outcome::kApplied);
  EXPECT_EQ(test::OkValue(db->ReadExact(q)), 6);
  EXPECT_TRUE(db->GetMarker(q, "f").status().IsNotFound());
  ASSERT_OK_AND_ASSIGN(MarkerInfo gm, db->GetMarker(q, "g"));
  EXPECT_EQ(gm.delta, 6);
  // Redeliveries: g is a duplicate; f, deleted with its key, counts again.
  db->IncrementOnceAsync(q, "g", 6, answers.Make(5));
  answers.Wait(6);
  ASSERT_OK_AND_ASSIGN(IncrementResult g_again, answers.Of(5));
  EXPECT_EQ(g_again.outcome, Outcome::kDuplicate);
  EXPECT_EQ(g_again.shard, g.shard);
  EXPECT_EQ(test::OkValue(db->ReadExact(q)), 6);
  ExpectVerified(db.get());
}

// Item 13: Reserve takes only strict counters, and IncrementOnceAsync
// refuses them (NotSupported, inline): on a key with reservations, also
// while a Reserve of it is in its write, the once-increment changes
// nothing (no value, no marker, the holds as they were), and a
// redelivery is refused the same way.
TEST_F(Review3Gated, Item13_OnceAsyncOfAKeyWithReservationsIsRefusedWhole) {
  auto db = Open(Gated(), env_.get());
  CounterSpec spec{1};
  spec.keyed = true;
  spec.bounds = CounterBounds::AtLeast(0);
  ASSERT_OK(db->CreateCounter("stock", spec));
  const CounterRef k("stock", "sku");
  ASSERT_OK(db->Increment(k, 10));
  ASSERT_OK_AND_ASSIGN(ReservationResult held, db->Reserve(k, "cart-1", 4, kHour));
  ASSERT_EQ(held.state, HoldState::kHeld);
  Answers answers;
  db->IncrementOnceAsync(k, "e", -1, answers.Make(1));
  EXPECT_EQ(answers.count(), 1u);  // inline
  fs_->HoldNextSync();
  Result<ReservationResult> second = Status::Busy("not run");
  test::FinishesOrDie("once-increment during a reserve", kHangBound, [&] {
    std::thread t([&] { second = db->Reserve(k, "cart-2", 3, kHour); });
    fs_->WaitUntilHeld();
    db->IncrementOnceAsync(k, "e", -1, answers.Make(2));
    EXPECT_EQ(answers.count(), 2u);  // inline, not behind the reserve
    fs_->Release();
    t.join();
  });
  ASSERT_OK(second);
  EXPECT_EQ(second->state, HoldState::kHeld);
  for (int tag : {1, 2}) {
    Result<IncrementResult> r = answers.Of(tag);
    EXPECT_TRUE(r.status().IsNotSupported()) << r.status().ToString();
  }
  ASSERT_OK_AND_ASSIGN(HeldValue now, db->ReadHeld(k));
  EXPECT_EQ(now.value, 10);
  EXPECT_EQ(now.held, 7);
  EXPECT_TRUE(db->GetMarker(k, "e").status().IsNotFound());
}

}  // namespace
}  // namespace tally
