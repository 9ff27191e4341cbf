// Once-increments: duplicates, conflicts, retries across reopen, and
// concurrent deliveries of the same events on many threads.
#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <thread>

#include "engine/rules.h"
#include "tally/admin.h"
#include "testutil/db_fixture.h"
#include "testutil/testutil.h"

namespace tally {
namespace {

class Idempotency : public test::DbMatrixTest {};

TEST_P(Idempotency, SequentialDuplicateAndConflict) {
  auto db = Open();
  ASSERT_OK(db->CreateCounter("orders", {10}));
  auto first = db->IncrementOnce("orders", "ORDER_ACCEPTED:ord-1", 3);
  ASSERT_OK(first);
  EXPECT_EQ(first->outcome, Outcome::kApplied);
  // The shard is the stable hash of the event id (docs/format.md).
  EXPECT_EQ(first->shard, engine::StableHash("ORDER_ACCEPTED:ord-1") % 10);

  auto dup = db->IncrementOnce("orders", "ORDER_ACCEPTED:ord-1", 3);
  ASSERT_OK(dup);
  EXPECT_EQ(dup->outcome, Outcome::kDuplicate);
  EXPECT_EQ(dup->shard, first->shard);

  auto conflict = db->IncrementOnce("orders", "ORDER_ACCEPTED:ord-1", 4);
  ASSERT_OK(conflict);
  EXPECT_EQ(conflict->outcome, Outcome::kConflict);

  EXPECT_EQ(test::OkValue(db->ReadExact("orders")), 3)
      << "conflict must change nothing";
  EXPECT_EQ(test::OkValue(db->CountMarkers("orders")), 1u);
  EngineStats st = tally::GetStats(*db);
  EXPECT_EQ(st.applied, 1u);
  EXPECT_EQ(st.duplicates, 1u);
  EXPECT_EQ(st.conflicts, 1u);
}

// Markers are scoped per counter: one event counts once in each counter.
TEST_P(Idempotency, MarkersAreScopedPerCounter) {
  auto db = Open();
  ASSERT_OK(db->CreateCounter("count", {2}));
  ASSERT_OK(db->CreateCounter("amount", {2}));
  EXPECT_EQ(test::OkValue(db->IncrementOnce("count", "ord-9", 1)).outcome,
            Outcome::kApplied);
  EXPECT_EQ(test::OkValue(db->IncrementOnce("amount", "ord-9", 250)).outcome,
            Outcome::kApplied);
  EXPECT_EQ(test::OkValue(db->ReadExact("count")), 1);
  EXPECT_EQ(test::OkValue(db->ReadExact("amount")), 250);
}

TEST_P(Idempotency, RedeliveryAfterReopenIsDuplicate) {
  {
    auto db = Open();
    ASSERT_OK(db->CreateCounter("c", {4}));
    for (int i = 0; i < 50; ++i) {
      ASSERT_OK(db->IncrementOnce("c", "e" + std::to_string(i), 1));
    }
  }
  auto db = Open();
  for (int i = 0; i < 50; ++i) {
    EXPECT_EQ(test::OkValue(db->IncrementOnce("c", "e" + std::to_string(i), 1))
                  .outcome,
              Outcome::kDuplicate);
  }
  EXPECT_EQ(test::OkValue(db->ReadExact("c")), 50);
}

// 8 threads deliver the same 10,000 events 3 times each, in different
// orders, single ops and batches mixed: each event counts exactly once.
TEST_P(Idempotency, EightThreadsThreeDeliveriesCountOnce) {
  auto db = Open();
  ASSERT_OK(db->CreateCounter("orders", {10}));
  constexpr int kEvents = 10000;
  constexpr int kThreads = 8;
  constexpr int kCopies = 3;
  std::atomic<uint64_t> applied{0}, duplicates{0}, other{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      // Each thread delivers a shuffled share of the kCopies * kEvents
      // deliveries; copies of one event land on different threads.
      std::vector<int> mine;
      for (int c = 0; c < kCopies; ++c) {
        for (int e = 0; e < kEvents; ++e) {
          if ((e + c * 3) % kThreads == t) mine.push_back(e);
        }
      }
      std::mt19937 rng(t);
      std::shuffle(mine.begin(), mine.end(), rng);
      Batch batch;
      std::vector<IncrementResult> results;
      auto count = [&](Outcome o) {
        (o == Outcome::kApplied ? applied
         : o == Outcome::kDuplicate ? duplicates : other)
            .fetch_add(1);
      };
      for (size_t i = 0; i < mine.size(); ++i) {
        const std::string id = "ORDER_ACCEPTED:" + std::to_string(mine[i]);
        if (t % 2 == 0) {  // half the threads use single calls
          auto r = db->IncrementOnce("orders", id, 1);
          ASSERT_OK(r);
          count(r->outcome);
          continue;
        }
        batch.AddOnce("orders", id, 1);
        if (batch.size() == 100 || i + 1 == mine.size()) {
          ASSERT_OK(db->Apply(batch, &results));
          for (const auto& r : results) count(r.outcome);
          batch.Clear();
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(applied.load(), static_cast<uint64_t>(kEvents));
  EXPECT_EQ(duplicates.load(), static_cast<uint64_t>(kEvents * (kCopies - 1)));
  EXPECT_EQ(other.load(), 0u);
  EXPECT_EQ(test::OkValue(db->ReadExact("orders")), kEvents);
  EXPECT_EQ(test::OkValue(db->CountMarkers("orders")),
            static_cast<uint64_t>(kEvents));
}

// Concurrent copies of one event with different deltas: exactly one wins,
// the rest are conflicts, and the total is the winner's delta.
TEST_P(Idempotency, ConcurrentConflictingCopiesOneWins) {
  auto db = Open();
  ASSERT_OK(db->CreateCounter("c", {3}));
  int64_t winners = 0;  // the sum of each round's winning delta
  for (int round = 0; round < 50; ++round) {
    const std::string id = "evt-" + std::to_string(round);
    std::atomic<int> applied{0};
    std::atomic<int64_t> winner{0};
    std::vector<std::thread> threads;
    for (int t = 1; t <= 4; ++t) {
      threads.emplace_back([&, t] {
        auto r = db->IncrementOnce("c", id, t);
        ASSERT_OK(r);
        if (r->outcome == Outcome::kApplied) {
          applied.fetch_add(1);
          winner.store(t);
        } else {
          EXPECT_EQ(r->outcome, Outcome::kConflict);
        }
      });
    }
    for (auto& th : threads) th.join();
    ASSERT_EQ(applied.load(), 1);
    winners += winner.load();
    // The marker holds the winner's delta.
    auto m = db->GetMarker("c", id);
    ASSERT_OK(m);
    EXPECT_EQ(m->delta, winner.load());
  }
  auto markers = db->CountMarkers("c");
  ASSERT_OK(markers);
  EXPECT_EQ(*markers, 50u);
  // Only the winners were counted (issue 28, item 15).
  auto total = db->ReadExact("c");
  ASSERT_OK(total);
  EXPECT_EQ(*total, winners);
}

TALLY_WRITE_MODES(Idempotency);

}  // namespace
}  // namespace tally
