// The once-increment path's order (issue 12, items 8, 13, 14): under the
// event-lock stripe the marker is looked up first; a found marker answers
// duplicate/conflict with the marker's own shard, whatever time the call
// claims; only a new event reads the clock (after the lookup) and is judged
// against the dedupe window and the bucket retention. Time comes from a
// ManualClock; a thread is paused inside its clock reading, not by sleeps.

#include <gtest/gtest.h>

#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/rules.h"
#include "tally/admin.h"
#include "tally/batch.h"
#include "tally/db.h"
#include "testutil/db_fixture.h"
#include "testutil/testutil.h"

namespace tally {
namespace {

constexpr int64_t kStart = 1'800'000'000'000;  // a fixed "now", ms
constexpr int64_t kHour = 3'600'000;

// A clock over a ManualClock that pauses one armed thread inside its first
// reading (after taking the value) until the test releases it. The writer
// arms itself and reports when its call returned, so the test can wait for
// "paused or finished" without guessing how far the writer got.
class PausingClock : public Clock {
 public:
  explicit PausingClock(test::ManualClock* base) : base_(base) {}

  int64_t NowMillis() const override {
    const int64_t t = base_->NowMillis();
    std::unique_lock<std::mutex> lock(mu_);
    if (armed_ && std::this_thread::get_id() == thread_) {
      armed_ = false;
      paused_ = true;
      cv_.notify_all();
      cv_.wait(lock, [this] { return released_; });
    }
    return t;
  }

  // Called by the thread to pause, before its call into the Db.
  void ArmThisThread() {
    std::lock_guard<std::mutex> lock(mu_);
    thread_ = std::this_thread::get_id();
    armed_ = true;
  }
  // Called by that thread once its call returned.
  void Finished() {
    std::lock_guard<std::mutex> lock(mu_);
    finished_ = true;
    cv_.notify_all();
  }
  // Waits until the armed thread is paused in a reading (true) or finished
  // without reading the clock (false).
  bool WaitPausedOrFinished() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return paused_ || finished_; });
    return paused_;
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mu_);
    released_ = true;
    cv_.notify_all();
  }

 private:
  test::ManualClock* const base_;
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  mutable bool armed_ = false;
  mutable bool paused_ = false;
  bool finished_ = false;
  bool released_ = false;
  std::thread::id thread_;
};

class OnceOrder : public test::DbTest {
 protected:
  OnceOrder() : manual_(kStart), clock_(&manual_) {}

  std::unique_ptr<Db> Open(uint32_t stripes = 1024) {
    Options o;
    o.clock = &clock_;
    o.rollup_interval_ms = 0;
    o.event_lock_stripes = stripes;
    return DbTest::Open(o);
  }
  static CounterSpec Windowed(int64_t window_ms) {
    CounterSpec spec;
    spec.shards = 1;
    spec.dedupe_window_ms = window_ms;
    return spec;
  }
  static CounterSpec Hourly(int64_t retention_ms) {
    CounterSpec spec;
    spec.shards = 4;
    spec.bucket = BucketWidth::kHour;
    spec.retention_ms = retention_ms;
    return spec;
  }
  // An affinity key whose shard differs from the one `event_id` hashes to.
  static std::string KeyOffHashShard(std::string_view event_id,
                                     uint32_t shards) {
    const uint32_t hashed =
        engine::ShardOfHash(engine::StableHash(event_id), shards);
    for (int i = 0;; ++i) {
      std::string key = "edge-" + std::to_string(i);
      if (engine::ShardOfKey(key, shards) != hashed) return key;
    }
  }

  // Runs `call` on a thread that pauses in its first clock reading, if it
  // makes one; meanwhile (or once it finished without one) the markers
  // written at kStart expire and are compacted away. True if it paused.
  bool CompactWhileCallPausedAtItsClock(Db* db,
                                        const std::function<void()>& call) {
    std::thread writer([&] {
      clock_.ArmThisThread();
      call();
      clock_.Finished();
    });
    const bool paused = clock_.WaitPausedOrFinished();
    manual_.Advance(2 * kHour);
    EXPECT_OK(tally::Compact(*db));
    clock_.Release();
    writer.join();
    return paused;
  }

  test::ManualClock manual_;
  PausingClock clock_;
};

// Item 8: the writer used to read the clock, judge the window, and only
// then take the stripe and look the marker up. Paused after that reading,
// with the marker expired and compacted away meanwhile, its redelivery was
// counted a second time. Now the lookup comes first: the redelivery finds
// the marker (duplicate), or, had the marker gone before the lookup, reads
// the clock after it and is outside the window.
TEST_F(OnceOrder, Item08_RedeliveryPausedAtItsClockReadIsNotCountedTwice) {
  auto db = Open();
  ASSERT_OK(db->CreateCounter("c", Windowed(kHour)));
  auto first = db->IncrementOnce("c", "e", 5, OnceOptions{kStart, {}});
  ASSERT_OK(first);
  ASSERT_EQ(first->outcome, Outcome::kApplied);

  Result<IncrementResult> redelivery = Status::NotFound("not run yet");
  const bool paused = CompactWhileCallPausedAtItsClock(db.get(), [&] {
    redelivery = db->IncrementOnce("c", "e", 5, OnceOptions{kStart, {}});
  });

  ASSERT_OK(redelivery);
  EXPECT_NE(redelivery->outcome, Outcome::kApplied) << "paused: " << paused;
  EXPECT_EQ(test::OkValue(db->ReadExact("c")), 5);
  EXPECT_EQ(tally::GetStats(*db).applied, 1u);
}

// Item 8 in Apply: the batch read the clock before its MultiGet. Now it
// reads it after: the marker the MultiGet found answers, even if it is
// compacted away while the batch is paused in that reading.
TEST_F(OnceOrder, Item08_ApplyRedeliveryPausedAtItsClockReadIsNotCountedTwice) {
  auto db = Open();
  ASSERT_OK(db->CreateCounter("c", Windowed(kHour)));
  Batch batch;
  batch.AddOnce("c", "e", 5, OnceOptions{kStart, {}});
  std::vector<IncrementResult> results;
  ASSERT_OK(db->Apply(batch, &results));
  ASSERT_EQ(results[0].outcome, Outcome::kApplied);

  Status applied;
  const bool paused = CompactWhileCallPausedAtItsClock(
      db.get(), [&] { applied = db->Apply(batch, &results); });

  ASSERT_OK(applied);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_NE(results[0].outcome, Outcome::kApplied) << "paused: " << paused;
  EXPECT_EQ(test::OkValue(db->ReadExact("c")), 5);
}

// Item 8, the stripe wait: a redelivery queued behind another event's
// once-increment on the same stripe (one stripe for all) while its marker
// expires and is compacted away judges the window by a clock read after its
// lookup, so it is outside the window, not counted again.
TEST_F(OnceOrder, Item08_RedeliveryWaitingOnTheStripeIsJudgedAfterItsLookup) {
  auto db = Open(/*stripes=*/1);
  ASSERT_OK(db->CreateCounter("c", Windowed(kHour)));
  ASSERT_OK(db->IncrementOnce("c", "e", 5, OnceOptions{kStart, {}}));

  // The holder pauses in its clock reading: after its lookup, so holding
  // the only stripe.
  Result<IncrementResult> held = Status::NotFound("not run yet");
  std::thread holder([&] {
    clock_.ArmThisThread();
    held = db->IncrementOnce("c", "other", 1, OnceOptions{kStart, {}});
    clock_.Finished();
  });
  ASSERT_TRUE(clock_.WaitPausedOrFinished());
  Result<IncrementResult> redelivery = Status::NotFound("not run yet");
  std::thread writer([&] {
    redelivery = db->IncrementOnce("c", "e", 5, OnceOptions{kStart, {}});
  });
  manual_.Advance(2 * kHour);
  ASSERT_OK(tally::Compact(*db));
  clock_.Release();
  holder.join();
  writer.join();

  ASSERT_OK(held);
  ASSERT_OK(redelivery);
  EXPECT_EQ(redelivery->outcome, Outcome::kOutsideWindow);
  // The holder's reading ends no earlier than the compaction's time (the
  // engine's time never steps back), so "other" is outside the window too.
  EXPECT_EQ(held->outcome, Outcome::kOutsideWindow);
  EXPECT_EQ(test::OkValue(db->ReadExact("c")), 5);
}

// Item 13: a redelivery into a bucket past retention is a duplicate (the
// marker answers), not InvalidArgument; a new event there is still refused.
TEST_F(OnceOrder, Item13_RedeliveryIntoAnExpiredBucketIsADuplicate) {
  auto db = Open();
  ASSERT_OK(db->CreateCounter("h", Hourly(kHour)));
  ASSERT_OK(db->IncrementOnce("h", "e", 3, OnceOptions{kStart, {}}));
  manual_.Advance(3 * kHour);  // the bucket of kStart is past retention

  auto again = db->IncrementOnce("h", "e", 3, OnceOptions{kStart, {}});
  ASSERT_OK(again);
  EXPECT_EQ(again->outcome, Outcome::kDuplicate);
  auto other = db->IncrementOnce("h", "e", 4, OnceOptions{kStart, {}});
  ASSERT_OK(other);
  EXPECT_EQ(other->outcome, Outcome::kConflict);
  EXPECT_EQ(tally::GetStats(*db).rejected, 0u);

  auto fresh = db->IncrementOnce("h", "new", 1, OnceOptions{kStart, {}});
  EXPECT_TRUE(fresh.status().IsInvalidArgument()) << fresh.status().ToString();
}

// Item 13 in Apply: the redelivery used to refuse the whole batch.
TEST_F(OnceOrder,
       Item13_ApplyRedeliveryIntoAnExpiredBucketDoesNotRefuseTheBatch) {
  auto db = Open();
  ASSERT_OK(db->CreateCounter("h", Hourly(kHour)));
  ASSERT_OK(db->IncrementOnce("h", "e", 3, OnceOptions{kStart, {}}));
  manual_.Advance(3 * kHour);

  Batch batch;
  batch.AddOnce("h", "e", 3, OnceOptions{kStart, {}});  // the redelivery
  batch.AddOnce("h", "f", 2);          // a new event, now
  batch.AddOnce("h", "f", 2,
                OnceOptions{kStart, {}});  // its copy in the batch, old time
  std::vector<IncrementResult> results;
  ASSERT_OK(db->Apply(batch, &results));
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0].outcome, Outcome::kDuplicate);
  EXPECT_EQ(results[1].outcome, Outcome::kApplied);
  EXPECT_EQ(results[2].outcome, Outcome::kDuplicate);
  EXPECT_EQ(test::OkValue(db->ReadExact("h")),
            2);  // kStart's bucket reads as expired

  // A new event into the expired bucket still refuses the batch.
  Batch bad;
  bad.AddOnce("h", "g", 1, OnceOptions{kStart, {}});
  EXPECT_TRUE(db->Apply(bad, &results).IsInvalidArgument());
}

// Item 14: a pinned event redelivered without its affinity key reports the
// shard its marker holds, not the one its event id hashes to.
TEST_F(OnceOrder, Item14_PinnedRedeliveryWithoutItsKeyReportsTheMarkersShard) {
  auto db = Open();
  CounterSpec spec;
  spec.shards = 16;
  ASSERT_OK(db->CreateCounter("c", spec));
  const std::string key = KeyOffHashShard("e", 16);
  auto first = db->IncrementOnce("c", "e", 1, OnceOptions{kEventTimeNow, key});
  ASSERT_OK(first);
  ASSERT_EQ(first->shard, engine::ShardOfKey(key, 16));

  auto dup = db->IncrementOnce("c", "e", 1);
  ASSERT_OK(dup);
  EXPECT_EQ(dup->outcome, Outcome::kDuplicate);
  EXPECT_EQ(dup->shard, first->shard);
  auto conflict = db->IncrementOnce("c", "e", 2);
  ASSERT_OK(conflict);
  EXPECT_EQ(conflict->outcome, Outcome::kConflict);
  EXPECT_EQ(conflict->shard, first->shard);
  // The call's own arguments are still checked.
  EXPECT_TRUE(db->IncrementOnce("c", "e", 1, OnceOptions{kEventTimeNow, "\n"})
                  .status()
                  .IsInvalidArgument());
}

// Item 14 in Apply: against a stored marker, and against the copy that
// wins inside the batch.
TEST_F(OnceOrder, Item14_ApplyReportsTheShardOfTheMarkerOrOfTheBatchWinner) {
  auto db = Open();
  CounterSpec spec;
  spec.shards = 16;
  ASSERT_OK(db->CreateCounter("c", spec));
  const std::string key = KeyOffHashShard("e", 16);
  const std::string key2 = KeyOffHashShard("e2", 16);
  const uint32_t pinned = engine::ShardOfKey(key, 16);
  ASSERT_OK(db->IncrementOnce("c", "e", 1, OnceOptions{kEventTimeNow, key}));

  Batch batch;
  batch.AddOnce("c", "e", 1);                        // stored, pinned
  batch.AddOnce("c", "e2", 1, OnceOptions{kEventTimeNow, key2});  // new, pinned
  batch.AddOnce("c", "e2", 2);                       // its copy, no key
  std::vector<IncrementResult> results;
  ASSERT_OK(db->Apply(batch, &results));
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0].outcome, Outcome::kDuplicate);
  EXPECT_EQ(results[0].shard, pinned);
  EXPECT_EQ(results[1].outcome, Outcome::kApplied);
  EXPECT_EQ(results[1].shard, engine::ShardOfKey(key2, 16));
  EXPECT_EQ(results[2].outcome, Outcome::kConflict);
  EXPECT_EQ(results[2].shard, results[1].shard);
  EXPECT_EQ(test::OkValue(db->ReadExact("c")), 2);
}

}  // namespace
}  // namespace tally
