// The outbox and SyncOutbox: entries in commit order for every applied
// increment of an outbox counter, acknowledged up to a cursor, never reused
// after reopen, bounded by a cap; concurrent writers never make a reader
// skip an entry; syncing edges into a hub is exact, repeatable and keeps
// per-edge attribution.

#include "tally/outbox.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <thread>
#include <vector>

#include "engine/rules.h"
#include "tally/admin.h"
#include "tally/db.h"
#include "tally/sync.h"
#include "testutil/db_fixture.h"
#include "testutil/testutil.h"

namespace tally {
namespace {

constexpr int64_t kStart = 1'800'000'000'000;

class Outbox : public test::DbMatrixTest {
 protected:
  Outbox() : DbMatrixTest(kStart) {}

  std::unique_ptr<Db> Open(const std::string& name, uint64_t cap = 1000000) {
    Options o = ClockOptions();
    o.rollup_interval_ms = 0;
    o.outbox_max_entries = cap;
    return OpenAt(name, o);
  }
};

TEST_P(Outbox, EveryAppliedIncrementInOrderThenAcknowledged) {
  auto db = Open("edge");
  ASSERT_OK(db->CreateCounter("orders", test::OutboxSpec(4)));
  ASSERT_OK(db->CreateCounter("quiet", {4}));  // no outbox
  ASSERT_OK(db->Increment("orders", 3));
  ASSERT_OK(db->Increment("quiet", 100));
  ASSERT_OK(db->IncrementOnce("orders", "o-1", 5));
  ASSERT_EQ(test::OkValue(db->IncrementOnce("orders", "o-1", 5)).outcome,
            Outcome::kDuplicate);  // no second entry
  Batch b;
  b.AddOnce("orders", "o-2", 7, OnceOptions{kStart - 1000, {}});
  b.AddOnce("orders", "o-1", 5);  // duplicate: no entry
  b.Add("orders", 1);
  b.Add("quiet", 1);
  std::vector<IncrementResult> results;
  ASSERT_OK(db->Apply(b, &results));

  auto entries = tally::ReadOutbox(*db, 0, 100);
  ASSERT_OK(entries);
  ASSERT_EQ(entries->size(), 4u);
  const int64_t deltas[] = {3, 5, 7, 1};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ((*entries)[i].seq, i + 1);
    EXPECT_EQ((*entries)[i].counter, "orders");
    EXPECT_EQ((*entries)[i].delta, deltas[i]);
  }
  EXPECT_EQ((*entries)[0].event_id, "");
  EXPECT_EQ((*entries)[1].event_id, "o-1");
  EXPECT_EQ((*entries)[2].time_ms, kStart - 1000);  // the event's time
  EXPECT_EQ((*entries)[3].time_ms, kStart);

  ASSERT_OK(tally::AckOutbox(*db, 2));
  ASSERT_OK(tally::AckOutbox(*db, 1));  // behind the cursor: nothing to do
  EXPECT_TRUE(tally::AckOutbox(*db, 5).IsInvalidArgument());
  entries = tally::ReadOutbox(*db, 0, 100);
  ASSERT_OK(entries);
  ASSERT_EQ(entries->size(), 2u);
  EXPECT_EQ(entries->front().seq, 3u);
  auto st = tally::GetOutboxStatus(*db);
  ASSERT_OK(st);
  EXPECT_EQ(st->entries, 2u);
  EXPECT_EQ(st->acked_through, 2u);
  EXPECT_EQ(st->last_seq, 4u);
  clock_.Advance(5000);
  EXPECT_EQ(test::OkValue(tally::GetOutboxStatus(*db)).age_ms,
            6000);  // oldest: kStart - 1000

  // Acknowledge everything, reopen: seqs continue, never reused.
  ASSERT_OK(tally::AckOutbox(*db, 4));
  db.reset();
  db = Open("edge");
  ASSERT_OK(db->Increment("orders", 1));
  entries = tally::ReadOutbox(*db, 0, 100);
  ASSERT_OK(entries);
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_EQ(entries->front().seq, 5u);
  VerifyReport report;
  ASSERT_OK(tally::Verify(*db, &report));
  EXPECT_TRUE(report.ok()) << report.problems.front();
}

TEST_P(Outbox, CapRefusesAndWritesNothing) {
  auto db = Open("edge", /*cap=*/3);
  ASSERT_OK(db->CreateCounter("c", test::OutboxSpec(1)));
  for (int i = 0; i < 3; ++i) ASSERT_OK(db->Increment("c", 1));
  auto r = db->Increment("c", 1);
  EXPECT_TRUE(r.status().IsBusy());
  EXPECT_NE(r.status().message().find("cap of 3"), std::string::npos)
      << r.status().ToString();
  Batch b;
  b.AddOnce("c", "e", 1);
  std::vector<IncrementResult> results;
  EXPECT_TRUE(db->Apply(b, &results).IsBusy());
  EXPECT_EQ(test::OkValue(db->ReadExact("c")), 3);
  EXPECT_TRUE(db->GetMarker("c", "e").status().IsNotFound());
  ASSERT_OK(tally::AckOutbox(*db, 2));
  ASSERT_OK(db->Apply(b, &results));
  EXPECT_EQ(test::OkValue(db->ReadExact("c")), 4);

  Options bad;
  bad.outbox_max_entries = 0;
  std::unique_ptr<Db> none;
  Status s = Db::Open(bad, Sub("bad"), &none);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.message().find("outbox_max_entries 0"), std::string::npos);
}

// Writers on 4 threads, a reader acknowledging as it goes: the reader sees
// every seq exactly once, in order, and the deltas add up.
TEST_P(Outbox, ConcurrentWritersNeverMakeTheReaderSkip) {
  auto db = Open("edge");
  ASSERT_OK(db->CreateCounter("c", test::OutboxSpec(8)));
  constexpr int kThreads = 4, kPerThread = 2000;
  std::atomic<int> done{0};
  std::vector<std::thread> writers;
  for (int t = 0; t < kThreads; ++t) {
    writers.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        if (i % 3 == 0) {
          Batch b;
          b.Add("c", 1);
          b.AddOnce("c", std::to_string(t) + ":" + std::to_string(i), 1);
          std::vector<IncrementResult> results;
          ASSERT_OK(db->Apply(b, &results));
          ++i;
        } else {
          ASSERT_OK(db->Increment("c", 1));
        }
      }
      done.fetch_add(1);
    });
  }
  uint64_t cursor = 0, sum = 0;
  for (;;) {
    const bool writers_done = done.load() == kThreads;
    auto entries = tally::ReadOutbox(*db, cursor, 500);
    ASSERT_OK(entries);
    for (const OutboxEntry& e : *entries) {
      ASSERT_EQ(e.seq, cursor + 1) << "skipped or repeated a seq";
      cursor = e.seq;
      sum += static_cast<uint64_t>(e.delta);
    }
    if (!entries->empty()) {
      ASSERT_OK(tally::AckOutbox(*db, cursor));
    }
    if (writers_done && entries->empty()) break;
  }
  for (auto& w : writers) w.join();
  EXPECT_EQ(sum, uint64_t{kThreads} * kPerThread);
  EXPECT_EQ(static_cast<uint64_t>(test::OkValue(db->ReadExact("c"))), sum);
  EXPECT_EQ(test::OkValue(tally::GetOutboxStatus(*db)).entries, 0u);
}

TEST_P(Outbox, SyncTwoEdgesIntoOneHubExactlyWithAttribution) {
  auto hub = Open("hub");
  ASSERT_OK(hub->CreateCounter("orders", {64}));
  auto a = Open("edge-a");
  auto b = Open("edge-b");
  for (Db* edge : {a.get(), b.get()}) {
    ASSERT_OK(edge->CreateCounter("orders", test::OutboxSpec(2)));
  }
  for (int i = 0; i < 300; ++i) ASSERT_OK(a->Increment("orders", 2));
  for (int i = 0; i < 120; ++i) {
    ASSERT_OK(b->IncrementOnce("orders", "b-" + std::to_string(i), 1));
  }
  SyncOptions options;
  options.batch_entries = 64;
  SyncReport report;
  ASSERT_OK(SyncOutbox(a.get(), hub.get(), options, &report));
  EXPECT_EQ(report.entries, 300u);
  EXPECT_EQ(report.applied, 300u);
  EXPECT_EQ(report.batches, 5u);
  ASSERT_OK(SyncOutbox(b.get(), hub.get(), options, &report));
  EXPECT_EQ(report.applied, 120u);
  ASSERT_OK(SyncOutbox(a.get(), hub.get(), options, &report));  // nothing new
  EXPECT_EQ(report.entries, 0u);
  EXPECT_EQ(test::OkValue(hub->ReadExact("orders")), 720);

  // Each edge's increments sit in the shard its database id hashes to.
  auto shards = hub->ShardCounts("orders");
  ASSERT_OK(shards);
  const uint32_t sa =
      engine::ShardOfKey(test::OkValue(tally::DatabaseId(*a)), 64);
  const uint32_t sb =
      engine::ShardOfKey(test::OkValue(tally::DatabaseId(*b)), 64);
  if (sa != sb) {
    EXPECT_EQ((*shards)[sa], 600);
    EXPECT_EQ((*shards)[sb], 120);
  } else {
    EXPECT_EQ((*shards)[sa], 720);
  }
  VerifyReport v;
  ASSERT_OK(tally::Verify(*hub, &v));
  EXPECT_TRUE(v.ok()) << v.problems.front();
}

TEST_P(Outbox, CutSyncIsRepairedByTheNextWithoutDoubling) {
  auto hub = Open("hub");
  auto edge = Open("edge");
  ASSERT_OK(hub->CreateCounter("c", {4}));
  ASSERT_OK(edge->CreateCounter("c", test::OutboxSpec(4)));
  for (int i = 1; i <= 50; ++i) ASSERT_OK(edge->Increment("c", i));
  // The hub took two batches but the edge never heard: stop after the
  // first acknowledgement by failing on the hub (counter deleted midway).
  SyncOptions options;
  options.batch_entries = 10;
  int batches = 0;
  options.on_batch = [&](const SyncReport&) {
    if (++batches == 2) {
      ASSERT_OK(hub->DeleteCounter("c"));
    }
  };
  SyncReport report;
  Status s = SyncOutbox(edge.get(), hub.get(), options, &report);
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();
  EXPECT_NE(s.message().find("stopped at outbox seq 21"), std::string::npos)
      << s.ToString();
  EXPECT_EQ(test::OkValue(tally::GetOutboxStatus(*edge)).acked_through, 20u);

  // A hub that applied entries the edge did not get to acknowledge: the
  // next sync finds them as duplicates.
  ASSERT_OK(hub->CreateCounter("c", {4}));
  Batch pre;
  auto entries = tally::ReadOutbox(*edge, 20, 15);
  ASSERT_OK(entries);
  const std::string id = test::OkValue(tally::DatabaseId(*edge));
  for (const OutboxEntry& e : *entries) {
    pre.AddOnce("c", e.origin + "/" + std::to_string(e.origin_seq), e.delta,
                OnceOptions{e.time_ms, id});
  }
  std::vector<IncrementResult> results;
  ASSERT_OK(hub->Apply(pre, &results));
  options.on_batch = nullptr;
  ASSERT_OK(SyncOutbox(edge.get(), hub.get(), options, &report));
  EXPECT_EQ(report.duplicates, 15u);
  EXPECT_EQ(report.applied, 15u);
  int64_t expected = 0;
  for (int i = 21; i <= 50; ++i) expected += i;
  EXPECT_EQ(test::OkValue(hub->ReadExact("c")), expected);
}

TALLY_WRITE_MODES(Outbox);

}  // namespace
}  // namespace tally
