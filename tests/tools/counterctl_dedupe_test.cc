// counterctl and dedupe windows: create --dedupe-window, incr --time, apply
// lines with time_ms, describe, and export/import keeping window and
// expiries; against the real binary and the system clock.

#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

#include "counterctl_fixture.h"

namespace tally::test {
namespace {

using CounterctlDedupe = CounterctlTest;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

TEST_F(CounterctlDedupe, WindowRefusesOldEventsAndSurvivesExport) {
  EXPECT_EQ(CtlOk({"create", "views", "--shards", "2", "--dedupe-window",
                   "1h"}),
            "created views (2 shards)\n");
  EXPECT_EQ(CtlJson({"describe", "views"})["dedupe_window_ms"], 3600000);

  const int64_t now = NowMs();
  const std::string recent = std::to_string(now - 60'000);
  const std::string old = std::to_string(now - 2 * 3'600'000);
  EXPECT_EQ(CtlOk({"incr", "views", "--event-id", "a", "--time", recent})
                .rfind("applied shard=", 0),
            0u);
  EXPECT_EQ(CtlOk({"incr", "views", "--event-id", "a", "--time", recent})
                .rfind("duplicate shard=", 0),
            0u);
  EXPECT_EQ(CtlOk({"incr", "views", "--event-id", "b", "--time", old})
                .rfind("outside_window shard=", 0),
            0u);
  // Without --time the engine cannot apply the window: refused.
  ProcessResult r = Ctl({"incr", "views", "--event-id", "c"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("needs its event time"), std::string::npos) << r.err;

  const std::string file = WriteFile(
      "in.jsonl", "{\"counter\":\"views\",\"event_id\":\"d\",\"time_ms\":" +
                      recent + "}\n{\"counter\":\"views\",\"event_id\":\"e\","
                      "\"time_ms\":" + old + "}\n");
  EXPECT_EQ(CtlOk({"apply", "--file", file}),
            "applied=1 duplicates=0 conflicts=0 outside_window=1 rejected=0 "
            "lines=2\n");
  EXPECT_EQ(CtlValue({"get", "views"}), "2");
  EXPECT_EQ(CtlValue({"events", "views", "--count"}), "2");
  nlohmann::json marker = CtlJson({"events", "views", "--show", "a"});
  ASSERT_TRUE(marker.contains("expires_at_ms")) << marker.dump();
  EXPECT_GE(marker["expires_at_ms"].get<int64_t>(), now + 3'600'000);

  // export, then import into a new database: same window, same expiries,
  // and a redelivery there is still a duplicate.
  const std::string dump = tmp_.Sub("dump.jsonl");
  CtlOk({"export", dump});
  const std::string copy = tmp_.Sub("copy");
  CtlOnOk(copy, {"import", dump});
  const nlohmann::json again = nlohmann::json::parse(
      CtlOnOk(copy, {"describe", "views", "--json"}));
  EXPECT_EQ(again["dedupe_window_ms"], 3600000);
  const nlohmann::json copied = nlohmann::json::parse(
      CtlOnOk(copy, {"events", "views", "--show", "a", "--json"}));
  EXPECT_EQ(copied["expires_at_ms"], marker["expires_at_ms"]);
  EXPECT_EQ(CtlOnOk(copy, {"incr", "views", "--event-id", "d", "--time",
                           recent})
                .rfind("duplicate shard=", 0),
            0u);
}

}  // namespace
}  // namespace tally::test
