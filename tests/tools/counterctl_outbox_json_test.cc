// counterctl outbox status and list --json follow the JSON rules of
// docs/counterctl.md (issue 18): every time as NAME_ms and NAME, and a
// list entry carries its identity (origin, origin_seq) and its key.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "counterctl_fixture.h"

namespace tally::test {
namespace {

class CounterctlOutboxJson : public CounterctlTest {};

TEST_F(CounterctlOutboxJson, TimesComeAsMsAndIsoAndEntriesCarryTheirIdentity) {
  CtlOk({"create", "feed", "--shards", "2", "--outbox"});
  nlohmann::json empty = CtlJson({"outbox", "status"});
  EXPECT_EQ(empty["entries"], 0);
  EXPECT_TRUE(empty["oldest_time_ms"].is_null());
  EXPECT_TRUE(empty["oldest_time"].is_null());
  EXPECT_TRUE(empty["age_ms"].is_null());

  CtlOk({"create", "likes", "--shards", "1", "--outbox", "--keyed"});
  CtlOk({"incr", "feed", "--by", "3", "--event-id", "e1",
         "--time", "2026-12-01T00:00:00.250Z"});
  CtlOk({"incr", "likes", "--key", "post-1"});

  nlohmann::json st = CtlJson({"outbox", "status"});
  EXPECT_EQ(st["entries"], 2);
  EXPECT_EQ(st["oldest_time_ms"], 1796083200250);
  EXPECT_EQ(st["oldest_time"], "2026-12-01T00:00:00.250Z");

  nlohmann::json list = CtlJson({"outbox", "list"});
  ASSERT_EQ(list["entries"].size(), 2u);
  const nlohmann::json& a = list["entries"][0];
  EXPECT_EQ(a["seq"], 1);
  EXPECT_EQ(a["counter"], "feed");
  EXPECT_EQ(a["event_id"], "e1");
  EXPECT_EQ(a["delta"], 3);
  EXPECT_EQ(a["time_ms"], 1796083200250);
  EXPECT_EQ(a["time"], "2026-12-01T00:00:00.250Z");
  EXPECT_EQ(a["origin"].get<std::string>().size(), 32u);
  EXPECT_EQ(a["origin_seq"], 1);
  EXPECT_FALSE(a.contains("key"));
  const nlohmann::json& b = list["entries"][1];
  EXPECT_EQ(b["key"], "post-1");
  EXPECT_FALSE(b.contains("event_id"));
  // Each counterctl run is its own writer incarnation: its own origin.
  EXPECT_EQ(b["origin"].get<std::string>().size(), 32u);
  EXPECT_NE(b["origin"], a["origin"]);
}

// incr --json: the answer as one document (issue 18).
TEST_F(CounterctlOutboxJson, IncrAnswersInJson) {
  CtlOk({"create", "orders", "--shards", "4"});
  nlohmann::json a = CtlJson({"incr", "orders", "--event-id", "o-1"});
  EXPECT_EQ(a["counter"], "orders");
  EXPECT_EQ(a["event_id"], "o-1");
  EXPECT_EQ(a["outcome"], "applied");
  EXPECT_TRUE(a["shard"].is_number());
  EXPECT_FALSE(a.contains("value"));
  nlohmann::json d = CtlJson({"incr", "orders", "--event-id", "o-1"});
  EXPECT_EQ(d["outcome"], "duplicate");
  EXPECT_EQ(d["shard"], a["shard"]);
  CtlOk({"create", "stock", "--shards", "1", "--min", "0", "--keyed"});
  nlohmann::json r = CtlJson({"incr", "stock", "--key", "sku", "--by", "-1"});
  EXPECT_EQ(r["key"], "sku");
  EXPECT_EQ(r["outcome"], "refused");
  EXPECT_EQ(r["value"], 0);
  EXPECT_EQ(r["remaining"], 0);
}

}  // namespace
}  // namespace tally::test
