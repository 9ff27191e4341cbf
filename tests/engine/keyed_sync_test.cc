// SyncOutbox of keyed counters: an edge's outbox entry carries its key, and
// the hub counts it on its keyed counter of the same name and key, once per
// entry identity (a redelivered page is counted once per key). An entry
// whose key does not fit the hub's counter stops the sync naming it, with
// nothing of its batch applied or acknowledged.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tally/admin.h"
#include "tally/db.h"
#include "tally/outbox.h"
#include "tally/sync.h"
#include "testutil/db_fixture.h"
#include "testutil/testutil.h"

namespace tally {
namespace {

using test::Dump;

constexpr int64_t kStart = 1'800'000'000'000;

CounterSpec Keyed(CounterSpec spec) {
  spec.keyed = true;
  return spec;
}

class KeyedSync : public test::DbMatrixTest {
 protected:
  KeyedSync() : DbMatrixTest(kStart) {}

  std::unique_ptr<Db> Open(const std::string& name) {
    Options o = ClockOptions();
    o.rollup_interval_ms = 0;
    return OpenAt(name, o);
  }
};

TEST_P(KeyedSync, HubCountsEachKeyOncePerEntry) {
  auto edge = Open("edge");
  auto hub = Open("hub");
  ASSERT_OK(edge->CreateCounter("likes", Keyed(test::OutboxSpec(2))));
  ASSERT_OK(hub->CreateCounter("likes", Keyed({8})));
  // 3 posts; user u-1 likes all three (one event id, three keys: three
  // entries); a redelivery on the edge is a duplicate there (no entry).
  const std::vector<std::string> posts = {"post-a", "post-b", "post-c"};
  int64_t expected[3] = {0, 0, 0};
  for (int user = 0; user < 10; ++user) {
    for (size_t p = 0; p <= static_cast<size_t>(user) % 3; ++p) {
      const std::string event = "u-" + std::to_string(user);
      ASSERT_EQ(
          test::OkValue(edge->IncrementOnce({"likes", posts[p]}, event, 1))
              .outcome,
          Outcome::kApplied);
      ASSERT_EQ(
          test::OkValue(edge->IncrementOnce({"likes", posts[p]}, event, 1))
              .outcome,
          Outcome::kDuplicate);
      ++expected[p];
    }
  }
  ASSERT_OK(edge->Increment({"likes", "post-c"}, 5));  // a plain one too
  expected[2] += 5;
  auto entries = tally::ReadOutbox(*edge, 0, 100);
  ASSERT_OK(entries);
  ASSERT_EQ(entries->size(), 20u);

  // A redelivered page: the hub already holds the first 7 entries (a sync
  // that committed on the hub and was cut before the edge's ack).
  Batch pre;
  const std::string edge_id = test::OkValue(tally::DatabaseId(*edge));
  for (size_t i = 0; i < 7; ++i) {
    const OutboxEntry& e = (*entries)[i];
    ASSERT_FALSE(e.key.empty());
    pre.AddOnce({e.counter, e.key},
                e.origin + "/" + std::to_string(e.origin_seq), e.delta,
                OnceOptions{e.time_ms, edge_id});
  }
  std::vector<IncrementResult> results;
  ASSERT_OK(hub->Apply(pre, &results));

  SyncOptions options;
  options.batch_entries = 4;
  SyncReport report;
  ASSERT_OK(SyncOutbox(edge.get(), hub.get(), options, &report));
  EXPECT_EQ(report.entries, 20u);
  EXPECT_EQ(report.duplicates, 7u);
  EXPECT_EQ(report.applied, 13u);
  EXPECT_EQ(report.acked_through, 20u);
  // Once more: nothing left, nothing counted twice.
  ASSERT_OK(SyncOutbox(edge.get(), hub.get(), options, &report));
  EXPECT_EQ(report.entries, 0u);

  std::vector<std::string_view> keys(posts.begin(), posts.end());
  auto hub_values = hub->ReadKeys("likes", keys);
  auto edge_values = edge->ReadKeys("likes", keys);
  ASSERT_OK(hub_values);
  ASSERT_OK(edge_values);
  for (size_t p = 0; p < posts.size(); ++p) {
    EXPECT_EQ((*hub_values)[p], expected[p]) << posts[p];
    EXPECT_EQ((*edge_values)[p], expected[p]) << posts[p];
  }
  // One hub marker per entry, in its key.
  EXPECT_EQ(test::OkValue(hub->CountMarkers({"likes", "post-a"})), 10u);
  EXPECT_EQ(test::OkValue(hub->CountMarkers({"likes"})), 20u);
  VerifyReport v;
  ASSERT_OK(tally::Verify(*hub, &v));
  EXPECT_TRUE(v.ok()) << Dump(v);
  EXPECT_EQ(v.keys_compared, 3u);
}

TEST_P(KeyedSync, KeyedEntryForANamedHubCounterStopsNamingIt) {
  auto edge = Open("edge");
  auto hub = Open("hub");
  ASSERT_OK(edge->CreateCounter("likes", Keyed(test::OutboxSpec(2))));
  ASSERT_OK(edge->CreateCounter("views", Keyed(test::OutboxSpec(2))));
  ASSERT_OK(hub->CreateCounter("likes", Keyed({2})));
  ASSERT_OK(hub->CreateCounter("views", {2}));  // named on the hub
  for (int i = 0; i < 5; ++i) {
    ASSERT_OK(edge->IncrementOnce({"likes", "p"}, "e" + std::to_string(i), 1));
  }
  ASSERT_OK(edge->IncrementOnce({"likes", "p"}, "e5", 1));
  ASSERT_OK(edge->IncrementOnce({"views", "page-1"}, "v1", 1));  // seq 7
  SyncOptions options;
  options.batch_entries = 5;
  SyncReport report;
  Status s = SyncOutbox(edge.get(), hub.get(), options, &report);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find("outbox entry 7 ("), std::string::npos)
      << s.ToString();
  EXPECT_NE(s.message().find("of counter 'views' key 'page-1': the hub's "
                             "counter is not keyed"),
            std::string::npos)
      << s.ToString();
  EXPECT_NE(s.message().find("none of the 2 entries of its batch (seqs 6..7)"),
            std::string::npos)
      << s.ToString();
  // The first page went through; the refused one is neither applied nor
  // acknowledged (seq 6, which fits, included).
  EXPECT_EQ(report.acked_through, 5u);
  EXPECT_EQ(test::OkValue(tally::GetOutboxStatus(*edge)).acked_through, 5u);
  EXPECT_EQ(test::OkValue(hub->ReadExact({"likes", "p"})), 5);
  EXPECT_EQ(test::OkValue(hub->ReadExact("views")), 0);
}

TEST_P(KeyedSync, NamedEntryForAKeyedHubCounterStopsNamingIt) {
  auto edge = Open("edge");
  auto hub = Open("hub");
  ASSERT_OK(edge->CreateCounter("orders", test::OutboxSpec(2)));
  ASSERT_OK(hub->CreateCounter("orders", Keyed({2})));
  ASSERT_OK(edge->Increment("orders", 4));
  SyncReport report;
  Status s = SyncOutbox(edge.get(), hub.get(), SyncOptions(), &report);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find("outbox entry 1 ("), std::string::npos)
      << s.ToString();
  EXPECT_NE(s.message().find("of counter 'orders' has no key, but the hub's "
                             "counter is keyed"),
            std::string::npos)
      << s.ToString();
  EXPECT_EQ(test::OkValue(tally::GetOutboxStatus(*edge)).acked_through, 0u);
  EXPECT_EQ(test::OkValue(hub->CountMarkers({"orders"})), 0u);
}

TALLY_WRITE_MODES(KeyedSync);

}  // namespace
}  // namespace tally
