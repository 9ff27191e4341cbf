// counterctl watch: a live view of a database beside its writer (this test
// process), from one long-lived read-only instance that catches up with
// Db::Refresh each frame.
//  - frames are read one by one as the tool prints them (LiveProcess); the
//    test writes between them and reads frames until one shows the writes,
//    bounded by --count so a bug fails the test instead of hanging it (no
//    sleep is used to synchronise);
//  - the writer's figures are published on demand (PublishStatsForTest)
//    with a publish interval of an hour, so what a frame shows never
//    depends on a background tick;
//  - the instance is opened once: every frame names the same open time and
//    counts one more successful Refresh than the frame before (the tool's
//    own account: another process cannot see a Db::Open inside it);
//  - SIGINT and SIGTERM end a watch without --count with exit 0 after a
//    complete frame; --count N prints N frames separated by one blank line
//    when stdout is not a terminal; bad flags are one line, exit 2.

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "counterctl_fixture.h"
#include "engine/test_hooks.h"
#include "subprocess.h"
#include "tally/batch.h"
#include "tally/db.h"
#include "tally/limits.h"

namespace tally::test {
namespace {

using nlohmann::json;
using CounterctlWatch = CounterctlTest;

// At most this many frames per watch of a test: at --interval 100ms, 20 s
// before a watch that never shows what the test waits for ends on its own.
constexpr int kMaxFrames = 200;

// The next frame of a --json watch, parsed; false at end of output (the
// watch ended) or on a line that is not one JSON object.
bool NextFrame(LiveProcess* watch, json* frame) {
  std::string line;
  if (!watch->ReadLine(&line)) return false;
  *frame = json::parse(line, nullptr, /*allow_exceptions=*/false);
  EXPECT_TRUE(frame->is_object()) << line;
  return frame->is_object();
}

// Why a watch ended, once its output did: its exit and stderr.
std::string Ended(LiveProcess* watch) {
  const ProcessResult r = watch->Wait();
  return "exit " + std::to_string(r.exit_code) + ", signal " +
         std::to_string(r.signal) + ", stderr: " + r.err;
}

// The entry of counter `name` in a frame's busiest list, or null.
json Busiest(const json& frame, const std::string& name) {
  for (const json& c : frame["busiest"]) {
    if (c["name"] == name) return c;
  }
  return json();
}

// Checks what every frame of one watch must hold: numbered in order, the
// same one instance (its open time) caught up once more per frame.
void CheckInstance(const json& frame, int number, const json& first) {
  EXPECT_EQ(frame["frame"], number) << frame.dump();
  EXPECT_EQ(frame["opened_ms"], first["opened_ms"])
      << "a second instance was opened\n" << frame.dump();
  EXPECT_TRUE(frame["refresh_error"].is_null()) << frame.dump();
  EXPECT_EQ(frame["refreshes"], number - 1) << frame.dump();
  EXPECT_EQ(frame["interval_ms"], 100);
  EXPECT_LE(frame["busiest"].size(), 3u) << "--top 3";
}

TEST_F(CounterctlWatch, CatchesUpWithTheWriterFrameByFrame) {
  Options o;
  o.stats_publish_interval_ms = kMaxStatsPublishIntervalMs;  // on demand
  o.rollup_interval_ms = 0;  // roll-ups only where the test asks
  std::unique_ptr<Db> writer = OpenOrDie(db_, o);
  ASSERT_NE(writer, nullptr);
  ASSERT_OK(writer->CreateCounter("orders", {4}));
  ASSERT_OK(writer->CreateCounter("views", {1}));
  CounterSpec keyed;
  keyed.shards = 2;
  keyed.keyed = true;
  ASSERT_OK(writer->CreateCounter("likes", keyed));
  CounterSpec outbox;
  outbox.outbox = true;
  ASSERT_OK(writer->CreateCounter("feed", outbox));
  ASSERT_OK(writer->Increment("views", 2));
  ASSERT_OK(writer->Increment(CounterRef("likes", "p1"), 1));
  for (const char* name : {"orders", "views", "likes", "feed"}) {
    ASSERT_OK(writer->RollupNow(name));  // every cached total current
  }
  ASSERT_OK(engine::PublishStatsForTest(writer.get()));

  LiveProcess watch({COUNTERCTL, "--db", db_, "watch", "--json", "--interval",
                     "100ms", "--count", std::to_string(kMaxFrames), "--top",
                     "3"},
                    tmp_.path());
  ASSERT_TRUE(watch.started());
  json first;
  ASSERT_TRUE(NextFrame(&watch, &first))
      << "watch ended before a frame: " << Ended(&watch);
  CheckInstance(first, 1, first);
  EXPECT_EQ(first["writer"]["state"], "live") << first.dump();
  EXPECT_EQ(first["writer"]["pid"], static_cast<uint64_t>(::getpid()));
  EXPECT_EQ(first["applied"], 2);
  EXPECT_EQ(first["duplicates"], 0);
  // The first frame has totals, no rates.
  EXPECT_TRUE(first["applied_per_s"].is_null()) << first.dump();
  EXPECT_TRUE(first["duplicates_per_s"].is_null());
  EXPECT_EQ(first["counters"], 4);
  EXPECT_EQ(first["counters_watched"], 4);
  ASSERT_EQ(first["busiest"].size(), 3u) << first.dump();
  for (const json& c : first["busiest"]) EXPECT_TRUE(c["per_s"].is_null());
  // Without rates, by value: views 2, then likes 1 (its roll-up's total).
  EXPECT_EQ(first["busiest"][0]["name"], "views") << first.dump();
  EXPECT_EQ(first["busiest"][0]["value"], 2);
  EXPECT_EQ(first["busiest"][1]["name"], "likes");
  EXPECT_EQ(first["busiest"][1]["keyed"], true);
  EXPECT_EQ(first["outbox_entries"], 0);
  EXPECT_TRUE(first["outbox_age_ms"].is_null());
  EXPECT_TRUE(first["rollup_lag_ms"].is_null()) << "every roll-up is current";

  // Between frames: likes, feed and views change and are rolled up (views
  // by three more plain increments: 4 operands on its one shard key, 3
  // beyond the one a read starts from); then orders gets ten
  // once-increments and four redeliveries in one atomic batch, after the
  // roll-ups (so its cached total lags).
  ASSERT_OK(writer->Increment(CounterRef("likes", "p1"), 1));
  ASSERT_OK(writer->Increment(CounterRef("likes", "p2"), 5));
  ASSERT_OK(writer->Increment("feed", 1));
  for (int i = 0; i < 3; ++i) ASSERT_OK(writer->Increment("views", 1));
  for (const char* name : {"views", "likes", "feed"}) {
    ASSERT_OK(writer->RollupNow(name));
  }
  Batch batch;
  for (int i = 0; i < 10; ++i) batch.AddOnce("orders", "o-" + std::to_string(i), 3);
  for (int i = 0; i < 4; ++i) batch.AddOnce("orders", "o-" + std::to_string(i), 3);
  std::vector<IncrementResult> results;
  ASSERT_OK(writer->Apply(batch, &results));
  ASSERT_OK(engine::PublishStatsForTest(writer.get()));

  // Frames until one shows orders at 30: the watch caught up by Refresh.
  json frame;
  int number = 1;
  bool seen_orders = false, seen_duplicates = false, seen_keys = false;
  while (!(seen_orders && seen_duplicates && seen_keys)) {
    ASSERT_TRUE(NextFrame(&watch, &frame))
        << "the watch ended after " << number << " frames without showing "
        << (seen_orders ? "" : "orders=30 ")
        << (seen_duplicates ? "" : "duplicates=4 ")
        << (seen_keys ? "" : "the keys of likes");
    CheckInstance(frame, ++number, first);
    EXPECT_EQ(frame["writer"]["state"], "live");
    const json orders = Busiest(frame, "orders");
    if (!seen_orders && orders.is_object() && orders["value"] == 30) {
      seen_orders = true;
      // The one atomic batch is the largest change of its frame.
      EXPECT_EQ(frame["busiest"][0]["name"], "orders") << frame.dump();
      ASSERT_TRUE(orders["per_s"].is_number()) << frame.dump();
      EXPECT_GT(orders["per_s"].get<double>(), 0);
      // Rolled up before the batch: its cached total (0) is behind.
      EXPECT_EQ(frame["rollup_lag_counter"], "orders") << frame.dump();
      EXPECT_TRUE(frame["rollup_lag_ms"].is_number_integer());
    }
    if (!seen_duplicates && frame["duplicates"] == 4) {
      seen_duplicates = true;
      // Published once, after every write of the test.
      EXPECT_EQ(frame["applied"], 2 + 2 + 1 + 3 + 10) << frame.dump();
      // A publication newer than the first frame's: rates between them.
      ASSERT_TRUE(frame["duplicates_per_s"].is_number()) << frame.dump();
      EXPECT_GT(frame["duplicates_per_s"].get<double>(), 0);
      EXPECT_GT(frame["applied_per_s"].get<double>(), 0);
      EXPECT_EQ(frame["writer_rollups_behind"], 1)
          << "orders was written after its roll-up\n"
          << frame.dump();
    }
    for (const json& k : frame["keys"]) {
      if (k["counter"] != "likes" || k["total"] != 7) continue;
      seen_keys = true;
      EXPECT_EQ(k["key_count"], 2);
      EXPECT_EQ(k["keys"], json::parse(R"([{"key":"p2","value":5},)"
                                       R"({"key":"p1","value":2}])"));
      EXPECT_TRUE(k["as_of_ms"].is_number_integer());
      EXPECT_TRUE(k["as_of"].is_string());
    }
  }
  // Once everything is seen: the values, the operands left to fold, the
  // outbox entry waiting.
  EXPECT_EQ(Busiest(frame, "orders")["value"], 30) << frame.dump();
  EXPECT_EQ(frame["pending_operands"], 3) << frame.dump();
  EXPECT_EQ(frame["pending_operands_max_counter"], "views");
  EXPECT_EQ(frame["outbox_entries"], 1);
  EXPECT_TRUE(frame["outbox_age_ms"].is_number_integer()) << frame.dump();
  EXPECT_TRUE(frame["outbox_oldest_time"].is_string());

  // The writer closes: the next frames say so, and rates stop.
  writer.reset();
  for (;;) {
    ASSERT_TRUE(NextFrame(&watch, &frame)) << "the close was never shown";
    CheckInstance(frame, ++number, first);
    if (frame["writer"]["state"] == "closed") break;
  }
  EXPECT_TRUE(frame["applied_per_s"].is_null()) << frame.dump();
  EXPECT_EQ(frame["applied"], 18);

  watch.Signal(SIGINT);
  const ProcessResult r = watch.Wait();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  // What it printed after the last frame read: whole frames only.
  std::istringstream rest(r.out);
  for (std::string line; std::getline(rest, line);) {
    const json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
    ASSERT_TRUE(j.is_object()) << line;
    CheckInstance(j, ++number, first);
  }
  EXPECT_EQ(r.out.empty() || r.out.back() == '\n', true);
}

// Text frames of a watch without --count, ended by a signal.
TEST_F(CounterctlWatch, ASignalEndsItWithExit0AfterAWholeFrame) {
  CtlOk({"create", "orders", "--shards", "2"});
  CtlOk({"incr", "orders", "--by", "7"});
  for (const int sig : {SIGINT, SIGTERM}) {
    SCOPED_TRACE(sig);
    LiveProcess watch({COUNTERCTL, "--db", db_, "watch", "--interval", "100ms"},
                      tmp_.path());
    ASSERT_TRUE(watch.started());
    // Two frames: the second proves it loops; signal once it is whole.
    std::string text, line;
    int frames = 0;
    while (frames < 2) {
      ASSERT_TRUE(watch.ReadLine(&line))
          << "ended early: " << Ended(&watch) << "\n" << text;
      text += line + "\n";
      if (line.rfind("outbox: ", 0) == 0) ++frames;
    }
    watch.Signal(sig);
    const ProcessResult r = watch.Wait();
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.signal, 0);
    EXPECT_EQ(r.err, "");
    text += r.out;
    EXPECT_EQ(text.find('\x1b'), std::string::npos) << "not a terminal";
    // Frames separated by exactly one blank line, each whole: from its time
    // line to its outbox line.
    ASSERT_FALSE(text.empty());
    EXPECT_EQ(text.back(), '\n');
    EXPECT_EQ(text.find("\n\n\n"), std::string::npos) << text;
    std::vector<std::string> parts;
    for (size_t start = 0;;) {
      const size_t end = text.find("\n\n", start);
      parts.push_back(text.substr(start, end == std::string::npos
                                             ? std::string::npos
                                             : end + 1 - start));
      if (end == std::string::npos) break;
      start = end + 2;
    }
    ASSERT_GE(parts.size(), 2u) << text;
    for (size_t i = 0; i < parts.size(); ++i) {
      const std::string& p = parts[i];
      EXPECT_EQ(p.rfind("time: ", 0), 0u) << p;
      EXPECT_NE(p.find("(frame " + std::to_string(i + 1) + ", every 100 ms"),
                std::string::npos)
          << p;
      EXPECT_NE(p.find("\nwriter: closed (pid "), std::string::npos) << p;
      EXPECT_NE(p.find("\n  orders  "), std::string::npos) << p;
      const size_t last = p.rfind("\noutbox: ");
      ASSERT_NE(last, std::string::npos) << p;
      EXPECT_EQ(p.find('\n', last + 1), p.size() - 1) << "cut short:\n" << p;
    }
  }
}

TEST_F(CounterctlWatch, CountStopsAfterNFrames) {
  CtlOk({"create", "orders", "--shards", "2"});
  CtlOk({"incr", "orders", "--event-id", "a", "--by", "4"});
  const ProcessResult r =
      Ctl({"watch", "--count", "3", "--interval", "100ms", "--top", "1"});
  ASSERT_EQ(r.exit_code, 0) << Describe({"watch"}, r);
  EXPECT_EQ(r.err, "");
  std::vector<std::string> frames;
  for (size_t start = 0; start < r.out.size();) {
    const size_t end = r.out.find("\n\n", start);
    frames.push_back(r.out.substr(start, end == std::string::npos
                                             ? std::string::npos
                                             : end + 1 - start));
    if (end == std::string::npos) break;
    start = end + 2;
  }
  ASSERT_EQ(frames.size(), 3u) << r.out;
  // The writer was `counterctl incr`, closed; frame 1 has no rates.
  EXPECT_NE(frames[0].find("\nincrements/s: - (applied 1)\n"),
            std::string::npos)
      << frames[0];
  EXPECT_NE(frames[0].find("\n  orders  -  4\n"), std::string::npos)
      << frames[0];
  // Later frames: a change of 0 (the value did not move).
  EXPECT_NE(frames[2].find("\n  orders  0.0  4\n"), std::string::npos)
      << frames[2];
  EXPECT_NE(frames[2].find("\nreader: opened "), std::string::npos)
      << frames[2];
  EXPECT_NE(frames[2].find(", refreshed 2 times since\n"), std::string::npos)
      << frames[2];
  EXPECT_NE(frames[2].find("\noutbox: 0 entries\n"), std::string::npos)
      << frames[2];
}

TEST_F(CounterctlWatch, BadFlagsAreOneLineNamingTheValue) {
  CtlOk({"create", "orders", "--shards", "2"});
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--interval", "0"}, "--interval 0"},
      {{"--interval", "5x"}, "--interval 5x"},
      {{"--interval", "99ms"}, "--interval 99ms"},
      {{"--interval", "61m"}, "--interval 61m"},
      {{"--count", "0"}, "--count 0"},
      {{"--count", "1000001"}, "--count 1000001"},
      {{"--count", "-1"}, "--count -1"},
      {{"--top", "0"}, "--top 0"},
      {{"--top", "101"}, "--top 101"},
  };
  for (const auto& [flags, named] : cases) {
    std::vector<std::string> args = {"watch"};
    args.insert(args.end(), flags.begin(), flags.end());
    const ProcessResult r = Ctl(args);
    EXPECT_EQ(r.exit_code, 2) << Describe(args, r);
    EXPECT_EQ(r.ErrLines(), 1u) << Describe(args, r);
    EXPECT_EQ(r.err.rfind("counterctl: " + named + ": expected ", 0), 0u)
        << Describe(args, r);
    EXPECT_EQ(r.out, "") << Describe(args, r);
  }
  // The bounds themselves are accepted.
  EXPECT_EQ(Ctl({"watch", "--interval", "100ms", "--count", "1", "--top",
                 "100"})
                .exit_code,
            0);
  EXPECT_EQ(Ctl({"watch", "--interval", "1h", "--count", "1", "--top", "1"})
                .exit_code,
            0);
}

}  // namespace
}  // namespace tally::test
