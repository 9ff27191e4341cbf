// Dedupe windows: a counter's markers expire after its window. Events older
// than the window are refused as outside_window and never counted; expired
// markers are invisible to reads and dropped by compaction; counts never
// change. Time comes from a ManualClock: no sleeps.

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "engine/coding.h"
#include "engine/rocksdb_options.h"
#include "tally/admin.h"
#include "tally/db.h"
#include "tally/limits.h"
#include "testutil/db_fixture.h"
#include "testutil/raw_db.h"
#include "testutil/testutil.h"

namespace tally {
namespace {

constexpr int64_t kStart = 1'800'000'000'000;  // a fixed "now", ms
constexpr int64_t kHour = 3'600'000;

class DedupeWindow : public test::DbMatrixTest {
 protected:
  DedupeWindow() : DbMatrixTest(kStart) {}

  std::unique_ptr<Db> Open() {
    Options o = ClockOptions();
    o.rollup_interval_ms = 0;
    return DbMatrixTest::Open(o);
  }
  static CounterSpec Windowed(uint32_t shards, int64_t window_ms) {
    CounterSpec spec;
    spec.shards = shards;
    spec.dedupe_window_ms = window_ms;
    return spec;
  }
  static OnceOptions At(int64_t t) { return OnceOptions{t, {}}; }

  // Markers physically stored for any counter (raw RocksDB, after close).
  uint64_t StoredMarkers() {
    test::RawDb raw(path());
    uint64_t n = 0;
    for (auto it = raw.Scan(engine::kEvents); it->Valid(); it->Next()) ++n;
    return n;
  }
};

TEST_P(DedupeWindow, OldEventsAreOutsideAndNotCounted) {
  auto db = Open();
  ASSERT_OK(db->CreateCounter("c", Windowed(4, kHour)));
  auto r = db->IncrementOnce("c", "old", 5, At(kStart - kHour - 1));
  ASSERT_OK(r);
  EXPECT_EQ(r->outcome, Outcome::kOutsideWindow);
  EXPECT_EQ(test::OkValue(db->ReadExact("c")), 0);
  EXPECT_TRUE(db->GetMarker("c", "old").status().IsNotFound());
  EXPECT_EQ(tally::GetStats(*db).outside_window, 1u);

  // The window's edge is inside: now - window is accepted.
  r = db->IncrementOnce("c", "edge", 7, At(kStart - kHour));
  ASSERT_OK(r);
  EXPECT_EQ(r->outcome, Outcome::kApplied);
  EXPECT_EQ(test::OkValue(db->ReadExact("c")), 7);
  auto marker = db->GetMarker("c", "edge");
  ASSERT_OK(marker);
  // The later of event time and now, plus the window.
  EXPECT_EQ(marker->expires_at_ms, kStart + kHour);
}

TEST_P(DedupeWindow, EventTimeIsRequired) {
  auto db = Open();
  ASSERT_OK(db->CreateCounter("c", Windowed(1, kHour)));
  auto r = db->IncrementOnce("c", "e", 1);
  EXPECT_TRUE(r.status().IsInvalidArgument());
  EXPECT_NE(r.status().message().find("needs its event time"),
            std::string::npos)
      << r.status().ToString();
  Batch b;
  b.AddOnce("c", "e", 1);
  std::vector<IncrementResult> results;
  Status s = db->Apply(b, &results);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.message().find("batch op 0"), std::string::npos) << s.ToString();
  EXPECT_EQ(test::OkValue(db->ReadExact("c")), 0);

  // A counter without a window takes an event time and ignores it, after
  // checking its range.
  ASSERT_OK(db->CreateCounter("plain", {1}));
  r = db->IncrementOnce("plain", "e", 1, At(0));
  ASSERT_OK(r);
  EXPECT_EQ(r->outcome, Outcome::kApplied);
  r = db->IncrementOnce("plain", "f", 1, At(-1));
  EXPECT_TRUE(r.status().IsInvalidArgument());
  EXPECT_NE(r.status().message().find("event time -1 ms"), std::string::npos)
      << r.status().ToString();
}

TEST_P(DedupeWindow, RedeliveryInsideTheWindowIsADuplicate) {
  auto db = Open();
  ASSERT_OK(db->CreateCounter("c", Windowed(4, kHour)));
  const int64_t t = kStart - 10 * 60'000;
  ASSERT_EQ(test::OkValue(db->IncrementOnce("c", "e", 3, At(t))).outcome,
            Outcome::kApplied);
  clock_.Advance(kHour - 10 * 60'000);  // now = t + window: still inside
  EXPECT_EQ(test::OkValue(db->IncrementOnce("c", "e", 3, At(t))).outcome,
            Outcome::kDuplicate);
  EXPECT_EQ(test::OkValue(db->IncrementOnce("c", "e", 4, At(t))).outcome,
            Outcome::kConflict);
  // Now past t + window: the copy's time is outside the window, but its
  // marker (written at kStart, expiring at kStart + window) is found first
  // and answers.
  clock_.Advance(1);
  EXPECT_EQ(test::OkValue(db->IncrementOnce("c", "e", 3, At(t))).outcome,
            Outcome::kDuplicate);
  // Once compaction has dropped the expired marker, the copy is outside.
  clock_.Advance(10 * 60'000);
  ASSERT_OK(tally::Compact(*db));
  EXPECT_EQ(test::OkValue(db->IncrementOnce("c", "e", 3, At(t))).outcome,
            Outcome::kOutsideWindow);
  EXPECT_EQ(test::OkValue(db->ReadExact("c")), 3);
}

TEST_P(DedupeWindow, ExpiredMarkersAreGoneForReadsThenForCompaction) {
  {
    auto db = Open();
    ASSERT_OK(db->CreateCounter("c", Windowed(2, kHour)));
    ASSERT_OK(db->CreateCounter("forever", {2}));
    for (int i = 0; i < 10; ++i) {
      const std::string id = "e" + std::to_string(i);
      ASSERT_EQ(
          test::OkValue(db->IncrementOnce("c", id, 1, At(kStart))).outcome,
          Outcome::kApplied);
      ASSERT_EQ(test::OkValue(db->IncrementOnce("forever", id, 1)).outcome,
                Outcome::kApplied);
    }
    ASSERT_OK(tally::Compact(*db));
    EXPECT_EQ(test::OkValue(db->CountMarkers("c")), 10u);

    clock_.Advance(kHour + 1);  // every marker of "c" has expired
    EXPECT_EQ(test::OkValue(db->CountMarkers("c")), 0u);
    EXPECT_TRUE(test::OkValue(db->ListMarkers("c", {})).empty());
    auto gone = db->GetMarker("c", "e3");
    EXPECT_TRUE(gone.status().IsNotFound());
    EXPECT_NE(gone.status().message().find("expired"), std::string::npos);
    // An expired marker still in the files still answers a redelivery
    // that claims a newer time: never counted twice when it can be known.
    EXPECT_EQ(test::OkValue(db->IncrementOnce("c", "e3", 1, At(kStart + kHour)))
                  .outcome,
              Outcome::kDuplicate);
    EXPECT_EQ(test::OkValue(db->CountMarkers("forever")), 10u);
  }
  EXPECT_EQ(StoredMarkers(), 20u);
  {
    auto db = Open();
    ASSERT_OK(tally::Compact(*db));
    EXPECT_EQ(test::OkValue(db->ReadExact("c")), 10);
    EXPECT_EQ(test::OkValue(db->ReadExact("forever")), 10);
    VerifyReport report;
    ASSERT_OK(tally::Verify(*db, &report));
    EXPECT_TRUE(report.ok()) << report.problems.front();
    EXPECT_EQ(report.sums_compared, 1u);  // "forever" only
  }
  EXPECT_EQ(StoredMarkers(), 10u);  // only "forever"'s
}

TEST_P(DedupeWindow, BatchesMixOutcomes) {
  auto db = Open();
  ASSERT_OK(db->CreateCounter("c", Windowed(4, kHour)));
  ASSERT_OK(db->IncrementOnce("c", "seen", 2, At(kStart)));
  Batch b;
  b.AddOnce("c", "old", 10, OnceOptions{kStart - 2 * kHour, {}});
  b.AddOnce("c", "new", 20, OnceOptions{kStart - 1, {}});
  b.AddOnce("c", "seen", 2, OnceOptions{kStart, {}});
  b.AddOnce("c", "new", 20, OnceOptions{kStart - 1, {}});
  // A copy claiming an old time: the batch's first copy of "new" already
  // counted it, and answers, as its marker would have one call later.
  b.AddOnce("c", "new", 20, OnceOptions{kStart - 2 * kHour, {}});
  std::vector<IncrementResult> results;
  ASSERT_OK(db->Apply(b, &results));
  ASSERT_EQ(results.size(), 5u);
  EXPECT_EQ(results[0].outcome, Outcome::kOutsideWindow);
  EXPECT_EQ(results[1].outcome, Outcome::kApplied);
  EXPECT_EQ(results[2].outcome, Outcome::kDuplicate);
  EXPECT_EQ(results[3].outcome, Outcome::kDuplicate);
  EXPECT_EQ(results[4].outcome, Outcome::kDuplicate);
  EXPECT_EQ(test::OkValue(db->ReadExact("c")), 22);
  EXPECT_EQ(tally::GetStats(*db).outside_window, 1u);
}

TEST_P(DedupeWindow, SpecIsCheckedAndKeptAcrossReopen) {
  {
    auto db = Open();
    Status s = db->CreateCounter("bad", Windowed(1, -1));
    EXPECT_TRUE(s.IsInvalidArgument());
    EXPECT_NE(s.message().find("dedupe window -1 ms"), std::string::npos)
        << s.ToString();
    s = db->CreateCounter("bad", Windowed(1, kMaxDedupeWindowMs + 1));
    EXPECT_TRUE(s.IsInvalidArgument());
    ASSERT_OK(db->CreateCounter("c", Windowed(3, 7 * 24 * kHour)));
    ASSERT_OK(db->IncrementOnce("c", "e", 1, At(kStart)));
  }
  auto db = Open();
  auto info = db->DescribeCounter("c");
  ASSERT_OK(info);
  EXPECT_EQ(info->dedupe_window_ms, 7 * 24 * kHour);
  EXPECT_EQ(test::OkValue(db->GetMarker("c", "e")).expires_at_ms,
            kStart + 7 * 24 * kHour);
  EXPECT_EQ(test::OkValue(db->IncrementOnce("c", "e", 1, At(kStart))).outcome,
            Outcome::kDuplicate);
}

// The Done-means at a test's scale: N unique events with a 1-hour
// window, the clock moved 2 hours ahead, one compaction: no marker left, the
// events family shrinks, counts unchanged. TALLY_DEDUPE_EVENTS sets N
// (default 20,000; the closing note's figure used 1,000,000).
TEST_P(DedupeWindow, CompactionDropsExpiredMarkersAndSpace) {
  size_t events = 20000;
  if (const char* env = std::getenv("TALLY_DEDUPE_EVENTS")) {
    events = std::strtoull(env, nullptr, 10);
  }
  constexpr size_t kPerBatch = 10000;
  uint64_t bytes_before = 0, bytes_after = 0;
  {
    auto db = Open();
    ASSERT_OK(db->CreateCounter("views", Windowed(16, kHour)));
    Batch b;
    std::vector<IncrementResult> results;
    for (size_t i = 0; i < events; ++i) {
      b.AddOnce("views", "view-" + std::to_string(i), 1,
                OnceOptions{kStart, {}});
      if (b.size() == kPerBatch || i + 1 == events) {
        ASSERT_OK(db->Apply(b, &results));
        b.Clear();
      }
    }
    ASSERT_OK(tally::Compact(*db));
    bytes_before =
        test::OkValue(tally::GetDbStats(*db)).Family("events")->sst_bytes;
    EXPECT_EQ(test::OkValue(db->CountMarkers("views")), events);

    clock_.Advance(2 * kHour);
    ASSERT_OK(tally::Compact(*db));
    bytes_after =
        test::OkValue(tally::GetDbStats(*db)).Family("events")->sst_bytes;
    EXPECT_EQ(test::OkValue(db->CountMarkers("views")), 0u);
    EXPECT_EQ(test::OkValue(db->ReadExact("views")),
              static_cast<int64_t>(events));
    VerifyReport report;
    ASSERT_OK(tally::Verify(*db, &report));
    EXPECT_TRUE(report.ok()) << report.problems.front();
    EXPECT_EQ(report.markers, 0u);
  }
  EXPECT_EQ(StoredMarkers(), 0u);
  EXPECT_GT(bytes_before, 0u);
  EXPECT_LT(bytes_after, bytes_before / 10);
  std::printf("dedupe window: %zu markers, events family %llu bytes before, "
              "%llu after compaction\n",
              events, static_cast<unsigned long long>(bytes_before),
              static_cast<unsigned long long>(bytes_after));
}

TALLY_WRITE_MODES(DedupeWindow);

}  // namespace
}  // namespace tally
