// counterctl stats of keyed counters: each keyed counter's keys, estimated
// from its last roll-up (tally::KeyedCounterStats), in the text and --json
// forms; a keyed counter never rolled up says so.

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "counterctl_fixture.h"
#include "tally/db.h"

namespace tally::test {
namespace {

using nlohmann::json;
using CounterctlKeyedStats = CounterctlTest;

// 2026-11-30T10:00:00Z.
constexpr int64_t kNow = 1796032800000;

std::string LineStarting(const std::string& text, const std::string& head) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(head, 0) == 0) return line;
  }
  return "";
}

TEST_F(CounterctlKeyedStats, KeysEstimatedFromTheLastRollup) {
  ManualClock clock(kNow);
  {
    Options o;
    o.clock = &clock;
    o.rollup_interval_ms = 0;
    std::unique_ptr<Db> db = OpenOrDie(db_, o);
    ASSERT_NE(db, nullptr);
    CounterSpec keyed;
    keyed.keyed = true;
    ASSERT_OK(db->CreateCounter("likes", keyed));
    ASSERT_OK(db->CreateCounter("views", keyed));  // never rolled up
    ASSERT_OK(db->CreateCounter("orders", CounterSpec{}));
    for (const char* post : {"post-1", "post-2", "post-3"}) {
      ASSERT_OK(db->IncrementOnce({"likes", post}, "user-1", 1));
    }
    ASSERT_OK(db->Increment({"likes", "post-1"}, 1));
    ASSERT_OK(db->Increment({"views", "page"}, 1));
    ASSERT_OK(db->RollupNow("likes"));
    // After the roll-up: not in its count.
    ASSERT_OK(db->Increment({"likes", "post-4"}, 1));
  }
  const std::string text = CtlOk({"stats"});
  // counterctl reads the system clock: the lag is whatever it is.
  EXPECT_EQ(LineStarting(text, "counter.likes.keys_estimate: ")
                .rfind("counter.likes.keys_estimate: 3 (as of "
                       "2026-11-30T10:00:00.000Z, lag ",
                       0),
            0u)
      << text;
  EXPECT_EQ(LineStarting(text, "counter.views.keys_estimate: "),
            "counter.views.keys_estimate: none (not rolled up yet)")
      << text;
  EXPECT_EQ(LineStarting(text, "counter.orders.keys_estimate"), "") << text;

  json doc = CtlJson({"stats"});
  ASSERT_EQ(doc["counters"].size(), 3u) << doc.dump();
  const json& likes = doc["counters"][0];
  const json& orders = doc["counters"][1];
  const json& views = doc["counters"][2];
  EXPECT_EQ(likes["name"], "likes");
  EXPECT_EQ(likes["keyed"], true);
  EXPECT_EQ(likes["keys_estimate"], 3);
  EXPECT_EQ(likes["keys_as_of_ms"], kNow);
  EXPECT_EQ(likes["keys_as_of"], "2026-11-30T10:00:00.000Z");
  EXPECT_TRUE(likes["keys_lag_ms"].is_number_integer());
  // counterctl opens read-only: what the writer did since is not known.
  EXPECT_TRUE(likes["keys_changes_since"].is_null());
  EXPECT_TRUE(likes["pending_operands"].is_number_unsigned());
  EXPECT_EQ(orders["name"], "orders");
  EXPECT_FALSE(orders.contains("keyed"));
  EXPECT_FALSE(orders.contains("keys_estimate"));
  EXPECT_EQ(views["name"], "views");
  EXPECT_EQ(views["keyed"], true);
  for (const char* key : {"keys_estimate", "keys_as_of_ms", "keys_as_of",
                          "keys_lag_ms", "keys_changes_since"}) {
    EXPECT_TRUE(views.contains(key) && views[key].is_null()) << key;
  }
}

}  // namespace
}  // namespace tally::test
