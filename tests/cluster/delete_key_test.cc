// DeleteKey on the cluster removes one key's value and markers, and only
// that key's, also when the markers expire at different times (the marker
// index is ordered by expiry, not by name), and a redelivered event of the
// deleted key counts again from 0.
//
// Public API only; without a cluster (TALLY_REDIS_ENV) the tests skip.

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "cluster/cluster_target.h"
#include "tally/tally.h"

namespace tally {
namespace {

TEST(DeleteKey, RemovesOneKeysWindowedMarkersOnly) {
  const std::string target = test::ClusterTarget("delkey");
  if (target.empty()) GTEST_SKIP() << "no cluster: TALLY_REDIS_ENV is unset";
  std::unique_ptr<Db> db;
  ASSERT_TRUE(Db::Open(Options(), target, &db).ok());
  CounterSpec spec{2};
  spec.keyed = true;
  spec.dedupe_window_ms = 3'600'000;
  ASSERT_TRUE(db->CreateCounter("likes", spec).ok());
  const int64_t now = Clock::System()->NowMillis();
  for (int i = 0; i < 30; ++i) {
    OnceOptions at;
    at.event_time_ms = now - i * 1000;  // expiries spread over 30 s
    for (const char* key : {"post-1", "post-10", "post-2"}) {
      ASSERT_TRUE(db->IncrementOnce(CounterRef("likes", key),
                                    "e" + std::to_string(i), 1, at)
                      .ok());
    }
  }
  ASSERT_TRUE(db->DeleteKey("likes", "post-1").ok());
  EXPECT_EQ(db->CountMarkers(CounterRef("likes", "post-1")).value(), 0u);
  EXPECT_EQ(db->CountMarkers(CounterRef("likes", "post-10")).value(), 30u);
  EXPECT_EQ(db->CountMarkers(CounterRef("likes", "post-2")).value(), 30u);
  const std::vector<int64_t> values =
      db->ReadKeys("likes", {"post-1", "post-10", "post-2"}).value();
  EXPECT_EQ(values, (std::vector<int64_t>{0, 30, 30}));
  OnceOptions at;
  at.event_time_ms = now;
  Result<IncrementResult> again =
      db->IncrementOnce(CounterRef("likes", "post-1"), "e0", 1, at);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again.value().outcome, Outcome::kApplied);
  std::vector<KeyValue> keys = db->ListKeys("likes", ListKeysOptions()).value();
  ASSERT_EQ(keys.size(), 3u);
  EXPECT_EQ(keys[0].key, "post-1");
  EXPECT_EQ(keys[0].value, 1);
}

}  // namespace
}  // namespace tally
