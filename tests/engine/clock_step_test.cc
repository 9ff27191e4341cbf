// A clock stepping backwards (issue 12, item 7): NTP corrects a box that
// ran ahead. The engine's time is Options::clock made monotone by a
// high-water mark persisted in meta (engine/engine_clock.h), so what
// compaction dropped while the clock was ahead stays judged expired after
// the step back: a redelivery of a dropped marker's event is outside the
// window, a dropped bucket stays past retention (reads as expired, writes
// into it are refused), across reopens and in read-only instances too.

#include <gtest/gtest.h>

#include <string>

#include "engine/rules.h"
#include "tally/admin.h"
#include "tally/db.h"
#include "testutil/db_fixture.h"
#include "testutil/testutil.h"

namespace tally {
namespace {

constexpr int64_t kStart = 1'800'000'000'000;  // a fixed "now", ms
constexpr int64_t kHour = 3'600'000;
constexpr int64_t kMinute = 60'000;

class ClockStep : public test::DbTest {
 protected:
  ClockStep() : DbTest(kStart) {}

  Options Opts(bool read_only = false) {
    Options o;
    o.clock = &clock_;
    o.rollup_interval_ms = 0;
    o.read_only = read_only;
    return o;
  }
  std::unique_ptr<Db> Open() { return DbTest::Open(Opts()); }
  std::unique_ptr<Db> OpenReadOnly() {
    std::unique_ptr<Db> db;
    Status s = Db::Open(Opts(/*read_only=*/true), path(), &db);
    EXPECT_OK(s);
    return db;
  }
  // "w": markers kept one hour; "h": hourly buckets kept one hour.
  static void CreateCounters(Db* db) {
    CounterSpec w;
    w.shards = 1;
    w.dedupe_window_ms = kHour;
    ASSERT_OK(db->CreateCounter("w", w));
    CounterSpec h;
    h.shards = 2;
    h.bucket = BucketWidth::kHour;
    h.retention_ms = kHour;
    ASSERT_OK(db->CreateCounter("h", h));
  }
  // The counts at kStart: event "e" in "w" and 3 in "h"'s bucket of kStart.
  static void CountAtStart(Db* db) {
    auto r = db->IncrementOnce("w", "e", 1, OnceOptions{kStart, {}});
    ASSERT_OK(r);
    ASSERT_EQ(r->outcome, Outcome::kApplied);
    IncrementOptions at;
    at.event_time_ms = kStart;
    ASSERT_OK(db->Increment("h", 3, at));
  }
  // The scenario: counts at kStart, the clock runs 3 hours ahead and
  // compaction drops "e"'s marker and the bucket, then NTP steps the clock
  // back to 10 minutes after kStart, where "e" is inside its true window
  // and the bucket inside its true retention. With `reopen`, the database
  // is closed before the step back and opened again after it.
  std::unique_ptr<Db> DropWhileAheadThenStepBack(bool reopen) {
    auto db = Open();
    CreateCounters(db.get());
    CountAtStart(db.get());
    clock_.Advance(3 * kHour);
    EXPECT_OK(tally::Compact(*db));
    EXPECT_EQ(test::OkValue(db->ReadExact("h")), 0);
    if (reopen) db.reset();
    clock_.Advance(-3 * kHour + 10 * kMinute);
    return reopen ? Open() : std::move(db);
  }
  // What holds after the step back: "e" is outside, its count not doubled;
  // the bucket stays past retention: reads 0, refuses an increment.
  static void ExpectNothingComesBack(Db* db) {
    auto again = db->IncrementOnce("w", "e", 1, OnceOptions{kStart, {}});
    ASSERT_OK(again);
    EXPECT_EQ(again->outcome, Outcome::kOutsideWindow);
    EXPECT_EQ(test::OkValue(db->ReadExact("w")), 1);
    EXPECT_EQ(test::OkValue(db->ReadExact("h")), 0);
    EXPECT_EQ(
        test::OkValue(db->ReadRange("h", StartBucket(), StartBucket() + kHour)),
        0);
    IncrementOptions at;
    at.event_time_ms = kStart;
    auto into = db->Increment("h", 1, at);
    EXPECT_TRUE(into.status().IsInvalidArgument()) << into.status().ToString();
    EXPECT_EQ(test::OkValue(db->ReadExact("h")), 0);
  }
  static int64_t StartBucket() {
    return engine::BucketStart(kStart, BucketWidthMs(BucketWidth::kHour));
  }
};

// A redelivery of "e" inside its true window is not counted again.
TEST_F(ClockStep, Item07_MarkerDroppedWhileAheadDoesNotLetARedeliveryCount) {
  auto db = DropWhileAheadThenStepBack(/*reopen=*/false);
  ExpectNothingComesBack(db.get());
  // New events are judged by the engine's time too, until the clock
  // catches up with it: kStart + 10 min is an hour and more before it.
  auto late = db->IncrementOnce("w", "x", 1, OnceOptions{kStart, {}});
  ASSERT_OK(late);
  EXPECT_EQ(late->outcome, Outcome::kOutsideWindow);
  auto fresh =
      db->IncrementOnce("w", "y", 1, OnceOptions{kStart + 3 * kHour, {}});
  ASSERT_OK(fresh);
  EXPECT_EQ(fresh->outcome, Outcome::kApplied);
}

// The bucket dropped while the clock was ahead does not come back as an
// empty bucket inside retention that takes new counts: it stays past
// retention by the engine's time, reads as expired (0) as it did before
// the step back, and an increment into it is refused, naming the time.
TEST_F(ClockStep, Item07_BucketDroppedWhileAheadStaysPastRetention) {
  auto db = DropWhileAheadThenStepBack(/*reopen=*/false);
  ExpectNothingComesBack(db.get());
}

// The mark persists: after a close, a step back and a reopen, the engine's
// time resumes from it.
TEST_F(ClockStep, Item07_TheMarkSurvivesAReopen) {
  auto db = DropWhileAheadThenStepBack(/*reopen=*/true);
  ExpectNothingComesBack(db.get());
}

// A read-only instance reads the mark: a marker and a bucket expired at the
// writer's time (and liable to be dropped at any compaction) read as
// expired there too, not as present because its own clock is behind.
TEST_F(ClockStep, Item07_AReadOnlyInstanceReadsTheMark) {
  {
    auto db = Open();
    CreateCounters(db.get());
    CountAtStart(db.get());
  }
  clock_.Advance(3 * kHour);
  { auto db = Open(); }  // the open persists the writer's time as the mark
  clock_.Advance(-3 * kHour + 10 * kMinute);

  auto reader = OpenReadOnly();
  ASSERT_NE(reader, nullptr);
  EXPECT_TRUE(reader->GetMarker("w", "e").status().IsNotFound());
  EXPECT_EQ(test::OkValue(reader->CountMarkers("w")), 0u);
  EXPECT_EQ(test::OkValue(reader->ReadExact("h")), 0);
  EXPECT_EQ(test::OkValue(reader->ReadExact("w")), 1);  // counts never expire

  // Beside a live writer, Refresh picks up a mark that moved: the age of
  // a roll-up is measured against it.
  auto writer = Open();  // its time: the mark, kStart + 3 h
  ASSERT_OK(writer->RollupNow("w"));
  ASSERT_OK(reader->Refresh());
  auto cached = reader->ReadCached("w");
  ASSERT_OK(cached);
  EXPECT_EQ(cached->as_of_ms, kStart + 3 * kHour);
  EXPECT_EQ(cached->lag_ms, 0);
  clock_.Advance(5 * kHour);
  ASSERT_OK(tally::Compact(*writer));  // the mark: kStart + 5 h 10 min
  clock_.Advance(-5 * kHour);
  ASSERT_OK(reader->Refresh());
  cached = reader->ReadCached("w");
  ASSERT_OK(cached);
  EXPECT_EQ(cached->lag_ms, 2 * kHour + 10 * kMinute);
}

}  // namespace
}  // namespace tally
