// A writer's engine figures reach a read-only Db (another instance on the
// same path, as another process would open it): exactly the writer's
// counts, with their source, their age by the reader's clock and whether
// the writer is live; a clean close marks them closed; a writer that does
// not publish leaves none. Publishing runs on demand (PublishStatsForTest)
// under a publish interval no test reaches, so nothing waits on real time.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include "engine/test_hooks.h"
#include "tally/admin.h"
#include "tally/db.h"
#include "tally/limits.h"
#include "testutil/db_fixture.h"

namespace tally {
namespace {

// 2026-12-01T00:00:00Z.
constexpr int64_t kStart = 1'796'083'200'000;

// Every figure of two EngineStats, the origin aside.
void ExpectSameFigures(const EngineStats& a, const EngineStats& b) {
  EXPECT_EQ(a.applied, b.applied);
  EXPECT_EQ(a.duplicates, b.duplicates);
  EXPECT_EQ(a.conflicts, b.conflicts);
  EXPECT_EQ(a.outside_window, b.outside_window);
  EXPECT_EQ(a.rejected, b.rejected);
  EXPECT_EQ(a.rollups_behind, b.rollups_behind);
  EXPECT_EQ(a.rollup_lag_increments, b.rollup_lag_increments);
  EXPECT_EQ(a.rollup_lag_ms, b.rollup_lag_ms);
  EXPECT_EQ(a.group_commits, b.group_commits);
  EXPECT_EQ(a.group_members, b.group_members);
  EXPECT_EQ(a.group_largest, b.group_largest);
  EXPECT_EQ(a.pending_operands, b.pending_operands);
}

class PublishedStats : public test::DbMatrixTest {
 protected:
  PublishedStats() : DbMatrixTest(kStart) {}

  // A writer that publishes only when told (and at open and close), with
  // no roll-up thread, reading clock_.
  Options WriterOptions() const {
    Options o = ClockOptions();
    o.stats_publish_interval_ms = kMaxStatsPublishIntervalMs;
    o.rollup_interval_ms = 0;
    return o;
  }
  std::unique_ptr<Db> OpenReader() {
    Options o = ClockOptions();
    o.read_only = true;
    return Open(o);
  }
};

TEST_P(PublishedStats, ReaderSeesTheWritersFiguresExactly) {
  auto writer = Open(WriterOptions());
  ASSERT_NE(writer, nullptr);
  ASSERT_OK(writer->CreateCounter("c", {4}));
  CounterSpec windowed{1};
  windowed.dedupe_window_ms = 60'000;
  ASSERT_OK(writer->CreateCounter("w", windowed));

  constexpr int kOnce = 7, kPlain = 2, kDuplicates = 3, kConflicts = 2;
  constexpr int kRefusals = 4;
  for (int i = 0; i < kOnce; ++i) {
    ASSERT_OK(writer->IncrementOnce("c", "e-" + std::to_string(i), 1));
  }
  for (int i = 0; i < kPlain; ++i) ASSERT_OK(writer->Increment("c", 2));
  for (int i = 0; i < kDuplicates; ++i) {
    Result<IncrementResult> r = writer->IncrementOnce("c", "e-0", 1);
    ASSERT_OK(r);
    EXPECT_EQ(r->outcome, Outcome::kDuplicate);
  }
  for (int i = 0; i < kConflicts; ++i) {
    Result<IncrementResult> r = writer->IncrementOnce("c", "e-1", 5);
    ASSERT_OK(r);
    EXPECT_EQ(r->outcome, Outcome::kConflict);
  }
  OnceOptions old;
  old.event_time_ms = kStart - 120'000;  // two minutes before now: outside
  Result<IncrementResult> late = writer->IncrementOnce("w", "late", 1, old);
  ASSERT_OK(late);
  EXPECT_EQ(late->outcome, Outcome::kOutsideWindow);
  for (int i = 0; i < kRefusals / 2; ++i) {
    EXPECT_TRUE(writer->Increment("missing", 1).status().IsNotFound());
    EXPECT_TRUE(writer->IncrementOnce("c", "", 1).status().IsInvalidArgument());
  }

  const EngineStats own = GetStats(*writer);
  EXPECT_EQ(own.origin.source, StatsSource::kThisProcess);
  EXPECT_EQ(own.origin.writer_pid, static_cast<uint64_t>(::getpid()));
  EXPECT_EQ(own.origin.as_of_ms, kStart);
  EXPECT_TRUE(own.origin.live);
  EXPECT_EQ(own.applied, uint64_t{kOnce + kPlain});
  EXPECT_EQ(own.duplicates, uint64_t{kDuplicates});
  EXPECT_EQ(own.conflicts, uint64_t{kConflicts});
  EXPECT_EQ(own.outside_window, 1u);
  EXPECT_EQ(own.rejected, uint64_t{kRefusals});
  // "c" has every applied increment and no roll-up; "w" has none.
  EXPECT_EQ(own.rollups_behind, 1u);
  EXPECT_EQ(own.rollup_lag_increments, uint64_t{kOnce + kPlain});
  EXPECT_EQ(own.rollup_lag_ms, 0);  // created and counted at kStart
  // One merge per applied increment, none flushed yet.
  EXPECT_EQ(own.pending_operands, uint64_t{kOnce + kPlain});
  if (GetParam() == test::WriteMode::kSyncGroupCommit) {
    // One thread: each applied increment is a group of its own.
    EXPECT_EQ(own.group_commits, uint64_t{kOnce + kPlain});
    EXPECT_EQ(own.group_members, uint64_t{kOnce + kPlain});
    EXPECT_EQ(own.group_largest, 1u);
  } else {
    EXPECT_EQ(own.group_commits, 0u);
    EXPECT_EQ(own.group_members, 0u);
    EXPECT_EQ(own.group_largest, 0u);
  }
  ASSERT_OK(engine::PublishStatsForTest(writer.get()));

  clock_.Advance(250);
  auto reader = OpenReader();
  ASSERT_NE(reader, nullptr);
  const EngineStats seen = GetStats(*reader);
  EXPECT_EQ(seen.origin.source, StatsSource::kWriter) << seen.origin.problem;
  EXPECT_EQ(seen.origin.problem, "");
  EXPECT_EQ(seen.origin.writer_pid, static_cast<uint64_t>(::getpid()));
  EXPECT_EQ(seen.origin.writer_started_ms, kStart);
  EXPECT_EQ(seen.origin.as_of_ms, kStart);
  EXPECT_EQ(seen.origin.age_ms, 250);
  EXPECT_EQ(seen.origin.publish_interval_ms, kMaxStatsPublishIntervalMs);
  EXPECT_FALSE(seen.origin.closed);
  EXPECT_TRUE(seen.origin.live);
  ExpectSameFigures(seen, own);

  Result<DbStats> db_stats = GetDbStats(*reader);
  ASSERT_OK(db_stats);
  EXPECT_EQ(db_stats->engine.origin.source, StatsSource::kWriter);
  EXPECT_EQ(db_stats->engine.origin.age_ms, 250);
  ExpectSameFigures(db_stats->engine, own);

  // The file is re-read at each call: a later publish shows at once.
  ASSERT_OK(writer->Increment("c", 1));
  ASSERT_OK(engine::PublishStatsForTest(writer.get()));
  const EngineStats later = GetStats(*reader);
  EXPECT_EQ(later.applied, uint64_t{kOnce + kPlain + 1});
  EXPECT_EQ(later.origin.as_of_ms, kStart + 250);
  EXPECT_EQ(later.origin.age_ms, 0);
  // A read-only Db publishes nothing of its own.
  EXPECT_TRUE(engine::PublishStatsForTest(reader.get()).IsNotSupported());
}

TEST_P(PublishedStats, CleanCloseMarksTheLastFiguresClosed) {
  auto writer = Open(WriterOptions());
  ASSERT_NE(writer, nullptr);
  ASSERT_OK(writer->CreateCounter("c", {2}));
  for (int i = 0; i < 5; ++i) ASSERT_OK(writer->Increment("c", 1));
  auto reader = OpenReader();
  ASSERT_NE(reader, nullptr);
  // Published at open, before the increments.
  EngineStats seen = GetStats(*reader);
  EXPECT_EQ(seen.origin.source, StatsSource::kWriter) << seen.origin.problem;
  EXPECT_EQ(seen.applied, 0u);
  EXPECT_TRUE(seen.origin.live);

  clock_.Advance(100);
  const EngineStats own = GetStats(*writer);
  writer.reset();
  clock_.Advance(40);
  seen = GetStats(*reader);
  EXPECT_EQ(seen.origin.source, StatsSource::kWriter) << seen.origin.problem;
  EXPECT_TRUE(seen.origin.closed);
  EXPECT_FALSE(seen.origin.live) << "a closed writer is not live";
  EXPECT_EQ(seen.origin.as_of_ms, kStart + 100);
  EXPECT_EQ(seen.origin.age_ms, 40);
  EXPECT_EQ(seen.applied, 5u);
  ExpectSameFigures(seen, own);
}

TEST_P(PublishedStats, RollupLagIsTheStalestChangedCounter) {
  auto writer = Open(WriterOptions());
  ASSERT_NE(writer, nullptr);
  ASSERT_OK(writer->CreateCounter("a", {1}));
  ASSERT_OK(writer->CreateCounter("b", {1}));
  for (int i = 0; i < 5; ++i) ASSERT_OK(writer->Increment("a", 1));
  clock_.Advance(700);
  EngineStats s = GetStats(*writer);
  EXPECT_EQ(s.rollups_behind, 1u);
  EXPECT_EQ(s.rollup_lag_increments, 5u);
  EXPECT_EQ(s.rollup_lag_ms, 700);  // not rolled up since the open

  ASSERT_OK(writer->RollupNow(""));
  s = GetStats(*writer);
  EXPECT_EQ(s.rollups_behind, 0u);
  EXPECT_EQ(s.rollup_lag_increments, 0u);
  EXPECT_EQ(s.rollup_lag_ms, 0);

  clock_.Advance(30);
  for (int i = 0; i < 2; ++i) ASSERT_OK(writer->Increment("a", 1));
  for (int i = 0; i < 3; ++i) ASSERT_OK(writer->Increment("b", 1));
  clock_.Advance(50);
  ASSERT_OK(engine::PublishStatsForTest(writer.get()));
  auto reader = OpenReader();
  ASSERT_NE(reader, nullptr);
  s = GetStats(*reader);
  EXPECT_EQ(s.rollups_behind, 2u);
  EXPECT_EQ(s.rollup_lag_increments, 3u);  // b's
  EXPECT_EQ(s.rollup_lag_ms, 80);          // both rolled up at kStart + 700

  ASSERT_OK(writer->RollupNow("b"));
  ASSERT_OK(engine::PublishStatsForTest(writer.get()));
  s = GetStats(*reader);
  EXPECT_EQ(s.rollups_behind, 1u);
  EXPECT_EQ(s.rollup_lag_increments, 2u);  // a's
  EXPECT_EQ(s.rollup_lag_ms, 80);
}

// A counter created after the open and never rolled up counts its lag from
// its creation.
TEST_P(PublishedStats, RollupLagOfANewCounterCountsFromItsCreation) {
  auto writer = Open(WriterOptions());
  ASSERT_NE(writer, nullptr);
  clock_.Advance(1000);
  ASSERT_OK(writer->CreateCounter("late", {1}));
  ASSERT_OK(writer->Increment("late", 1));
  clock_.Advance(300);
  const EngineStats s = GetStats(*writer);
  EXPECT_EQ(s.rollups_behind, 1u);
  EXPECT_EQ(s.rollup_lag_ms, 300);
}

TEST_P(PublishedStats, CompactionEmptiesThePendingOperands) {
  auto writer = Open(WriterOptions());
  ASSERT_NE(writer, nullptr);
  ASSERT_OK(writer->CreateCounter("c", {3}));
  for (int i = 0; i < 20; ++i) ASSERT_OK(writer->Increment("c", 1));
  EXPECT_EQ(GetStats(*writer).pending_operands, 20u);
  ASSERT_OK(Compact(*writer));
  EXPECT_EQ(GetStats(*writer).pending_operands, 0u);
}

TEST_P(PublishedStats, AWriterThatDoesNotPublishLeavesNoFigures) {
  Options on = WriterOptions();
  auto writer = Open(on);
  ASSERT_NE(writer, nullptr);
  writer.reset();  // leaves its closed figures
  ASSERT_TRUE(std::filesystem::exists(path() + "/TALLY-STATS"));

  Options off = WriterOptions();
  off.stats_publish_interval_ms = 0;
  writer = Open(off);
  ASSERT_NE(writer, nullptr);
  EXPECT_FALSE(std::filesystem::exists(path() + "/TALLY-STATS"))
      << "the earlier writer's figures are not this one's";
  ASSERT_OK(writer->CreateCounter("c", {1}));
  ASSERT_OK(writer->Increment("c", 1));
  auto reader = OpenReader();
  ASSERT_NE(reader, nullptr);
  const EngineStats seen = GetStats(*reader);
  EXPECT_EQ(seen.origin.source, StatsSource::kNone);
  EXPECT_NE(seen.origin.problem.find("TALLY-STATS does not exist"),
            std::string::npos)
      << seen.origin.problem;
  EXPECT_EQ(seen.applied, 0u);
  EXPECT_FALSE(seen.origin.live);
  writer.reset();
  EXPECT_FALSE(std::filesystem::exists(path() + "/TALLY-STATS"));
}

TALLY_WRITE_MODES(PublishedStats);

}  // namespace
}  // namespace tally
