// Conformance: the idempotency markers of once-increments (CountMarkers,
// ListMarkers, GetMarker): what each holds, paging, and a keyed counter's
// markers per key.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "conformance/conformance.h"
#include "tally/limits.h"

namespace tally::conformance {
namespace {

class Markers : public ConformanceTest {};

TEST_P(Markers, EachCountedEventHasAMarker) {
  ASSERT_OK(db_->CreateCounter("c", CounterSpec{4}));
  for (int i = 0; i < 10; ++i) {
    const IncrementResult r =
        Got(db_->IncrementOnce("c", "e" + std::to_string(i), i + 1));
    const MarkerInfo m = Got(db_->GetMarker("c", "e" + std::to_string(i)));
    EXPECT_EQ(m.event_id, "e" + std::to_string(i));
    EXPECT_EQ(m.shard, r.shard);
    EXPECT_EQ(m.delta, i + 1);
    EXPECT_EQ(m.created_at_ms, Now());
    EXPECT_EQ(m.expires_at_ms, 0);  // no dedupe window: kept forever
    EXPECT_TRUE(m.key.empty());
    EXPECT_FALSE(m.strict);
    EXPECT_FALSE(m.reset);
    clock_.Advance(100);  // e<i> created at kStart + 100 * i
  }
  ASSERT_OK(db_->Increment("c", 100));  // plain increments leave no marker
  ASSERT_OK(db_->IncrementOnce("c", "e3", 4));  // a duplicate neither
  ASSERT_OK(db_->IncrementOnce("c", "e3", 5));  // a conflict neither
  EXPECT_EQ(Got(db_->CountMarkers("c")), 10u);
  EXPECT_EQ(Got(db_->GetMarker("c", "e3")).delta, 4);
  EXPECT_TRUE(Fails(db_->GetMarker("c", "nope"), Code::kNotFound));
  EXPECT_TRUE(Fails(db_->GetMarker("c", ""), Code::kInvalidArgument));
}

TEST_P(Markers, ListMarkersPagesInIdOrderAndFiltersByTime) {
  ASSERT_OK(db_->CreateCounter("c", CounterSpec{4}));
  // Written out of order; listed in event-id byte order.
  for (int i : {7, 2, 9, 0, 5, 1, 8, 3, 6, 4}) {
    clock_.Advance(100);
    ASSERT_OK(db_->IncrementOnce("c", "e" + std::to_string(i), 1));
  }
  const std::vector<MarkerInfo> all = Got(db_->ListMarkers("c", {}));
  ASSERT_EQ(all.size(), 10u);
  for (size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(all[i].event_id, "e" + std::to_string(i));
  }
  ListMarkersOptions paged;
  paged.limit = 4;
  std::vector<std::string> seen;
  for (int pages = 0; pages < 10; ++pages) {
    const std::vector<MarkerInfo> p = Got(db_->ListMarkers("c", paged));
    ASSERT_LE(p.size(), 4u);
    for (const MarkerInfo& m : p) seen.push_back(m.event_id);
    if (p.size() < paged.limit) break;
    paged.start_after = p.back().event_id;
  }
  ASSERT_EQ(seen.size(), 10u) << "paging must neither skip nor repeat";
  for (size_t i = 0; i < seen.size(); ++i) {
    EXPECT_EQ(seen[i], "e" + std::to_string(i));
  }
  // Created at or after: the last three written (e3, e6, e4).
  ListMarkersOptions since;
  since.since_ms = kStart + 800;
  const std::vector<MarkerInfo> recent = Got(db_->ListMarkers("c", since));
  ASSERT_EQ(recent.size(), 3u);
  EXPECT_EQ(recent[0].event_id, "e3");
  EXPECT_EQ(recent[1].event_id, "e4");
  EXPECT_EQ(recent[2].event_id, "e6");
  ListMarkersOptions bad;
  bad.limit = 0;
  EXPECT_TRUE(Fails(db_->ListMarkers("c", bad), Code::kInvalidArgument));
  bad.limit = kMaxListMarkers + 1;
  EXPECT_TRUE(Fails(db_->ListMarkers("c", bad), Code::kInvalidArgument));
}

TEST_P(Markers, AKeyedCountersMarkersArePerKey) {
  CounterSpec spec{2};
  spec.keyed = true;
  ASSERT_OK(db_->CreateCounter("likes", spec));
  ASSERT_OK(db_->IncrementOnce({"likes", "post-1"}, "user-1", 1));
  ASSERT_OK(db_->IncrementOnce({"likes", "post-1"}, "user-2", 1));
  ASSERT_OK(db_->IncrementOnce({"likes", "post-2"}, "user-1", 1));
  EXPECT_EQ(Got(db_->CountMarkers({"likes", "post-1"})), 2u);
  EXPECT_EQ(Got(db_->CountMarkers({"likes", "post-2"})), 1u);
  EXPECT_EQ(Got(db_->CountMarkers("likes")), 3u);  // every key
  const std::vector<MarkerInfo> listed =
      Got(db_->ListMarkers({"likes", "post-1"}, {}));
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0].event_id, "user-1");
  EXPECT_EQ(listed[0].key, "post-1");
  EXPECT_EQ(listed[1].event_id, "user-2");
  EXPECT_EQ(Got(db_->GetMarker({"likes", "post-2"}, "user-1")).key, "post-2");
  EXPECT_TRUE(
      Fails(db_->GetMarker({"likes", "post-2"}, "user-2"), Code::kNotFound));
  // Listing needs the key.
  EXPECT_TRUE(Fails(db_->ListMarkers("likes", {}), Code::kInvalidArgument));
}

TALLY_CONFORMANCE_SUITE(Markers);

}  // namespace
}  // namespace tally::conformance
