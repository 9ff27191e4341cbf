// counterctl stats beside a live writer (this test process, holding the
// database): the writer's real figures with their source, writer state and
// age, in text and --json; every time appears as NAME_ms and NAME.

#include <gtest/gtest.h>
#include <unistd.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "counterctl_fixture.h"
#include "engine/test_hooks.h"
#include "tally/db.h"
#include "tally/limits.h"

namespace tally::test {
namespace {

using nlohmann::json;
using CounterctlLiveStats = CounterctlTest;

// 2026-12-01T00:00:00Z: the writer's clock, so the published times are known.
constexpr int64_t kStart = 1'796'083'200'000;

TEST_F(CounterctlLiveStats, ShowsTheRunningWritersFigures) {
  ManualClock clock(kStart);
  Options o;
  o.clock = &clock;
  o.stats_publish_interval_ms = kMaxStatsPublishIntervalMs;  // on demand
  o.rollup_interval_ms = 0;  // no roll-up between the writes and the publish
  std::unique_ptr<Db> writer = OpenOrDie(db_, o);
  ASSERT_NE(writer, nullptr);
  ASSERT_OK(writer->CreateCounter("orders", {4}));
  for (int i = 0; i < 6; ++i) {
    ASSERT_OK(writer->IncrementOnce("orders", "o-" + std::to_string(i), 1));
  }
  ASSERT_OK(writer->IncrementOnce("orders", "o-0", 1));  // a duplicate
  ASSERT_OK(writer->IncrementOnce("orders", "o-1", 9));  // a conflict
  EXPECT_TRUE(writer->Increment("nope", 1).status().IsNotFound());
  clock.Advance(20);
  ASSERT_OK(engine::PublishStatsForTest(writer.get()));

  json doc = CtlJson({"stats"});
  const json& e = doc["engine"];
  EXPECT_EQ(e["source"], "writer") << e.dump();
  EXPECT_EQ(e["problem"], "");
  EXPECT_EQ(e["writer_state"], "live");
  EXPECT_EQ(e["writer_pid"], static_cast<uint64_t>(::getpid()));
  EXPECT_EQ(e["writer_started_ms"], kStart);
  EXPECT_EQ(e["writer_started"], "2026-12-01T00:00:00.000Z");
  EXPECT_EQ(e["as_of_ms"], kStart + 20);
  EXPECT_EQ(e["as_of"], "2026-12-01T00:00:00.020Z");
  // counterctl's clock is the system's, not the writer's.
  EXPECT_TRUE(e["age_ms"].is_number_integer()) << e.dump();
  EXPECT_GE(e["age_ms"].get<int64_t>(), 0);
  EXPECT_EQ(e["publish_interval_ms"], kMaxStatsPublishIntervalMs);
  EXPECT_EQ(e["applied"], 6);
  EXPECT_EQ(e["duplicates"], 1);
  EXPECT_EQ(e["conflicts"], 1);
  EXPECT_EQ(e["outside_window"], 0);
  EXPECT_EQ(e["rejected"], 1);
  EXPECT_EQ(e["rollups_behind"], 1);
  EXPECT_EQ(e["rollup_lag_increments"], 6);
  EXPECT_EQ(e["rollup_lag_ms"], 20);
  EXPECT_EQ(e["pending_operands"], 6);
  EXPECT_EQ(e["group_commits"], 0) << "sync is off";
  EXPECT_TRUE(e["group_mean"].is_null());

  ProcessResult r = Ctl({"stats"});
  ASSERT_EQ(r.exit_code, 0) << Describe({"stats"}, r);
  EXPECT_EQ(r.err, "");
  const std::string pid = std::to_string(::getpid());
  for (const std::string& line :
       {"engine.source: writer pid " + pid + " (live)\n",
        std::string("engine.as_of: 2026-12-01T00:00:00.020Z (age "),
        std::string("engine.writer_started: 2026-12-01T00:00:00.000Z\n"),
        std::string("engine.applied: 6\n"),
        std::string("engine.duplicates: 1\n"),
        std::string("engine.conflicts: 1\n"),
        std::string("engine.rejected: 1\n"),
        std::string("engine.group_mean: n/a\n"),
        std::string("engine.pending_operands: 6\n")}) {
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
  }

  writer.reset();  // a clean close publishes a last time
  doc = CtlJson({"stats"});
  EXPECT_EQ(doc["engine"]["writer_state"], "closed");
  EXPECT_EQ(doc["engine"]["applied"], 6);
}

// A writer that does not publish: the source is none, with the reason.
TEST_F(CounterctlLiveStats, NoneWhenTheWriterDoesNotPublish) {
  Options o;
  o.stats_publish_interval_ms = 0;
  std::unique_ptr<Db> writer = OpenOrDie(db_, o);
  ASSERT_NE(writer, nullptr);
  ASSERT_OK(writer->CreateCounter("orders", {1}));
  ASSERT_OK(writer->Increment("orders", 1));
  json doc = CtlJson({"stats"});
  const json& e = doc["engine"];
  EXPECT_EQ(e["source"], "none");
  EXPECT_NE(e["problem"].get<std::string>().find("does not exist"),
            std::string::npos)
      << e.dump();
  EXPECT_TRUE(e["writer_state"].is_null());
  EXPECT_TRUE(e["as_of_ms"].is_null());
  EXPECT_TRUE(e["as_of"].is_null());
  EXPECT_EQ(e["applied"], 0);
  ProcessResult r = Ctl({"stats"});
  ASSERT_EQ(r.exit_code, 0) << Describe({"stats"}, r);
  EXPECT_NE(r.out.find("engine.source: none (no engine figures published: "),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("engine.as_of: none\n"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace tally::test
