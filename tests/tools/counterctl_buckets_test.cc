// counterctl and time-bucketed counters: create --bucket/--retention, incr
// --time into past buckets, get --from/--to, --today and --last, against the
// real binary (at a frozen COUNTERCTL_NOW where a test compares days).

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "counterctl_fixture.h"
#include "tally/db.h"

namespace tally::test {
namespace {

using CounterctlBuckets = CounterctlTest;

constexpr int64_t kDay = 86'400'000;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Stands counterctl's clock at `ms` (COUNTERCTL_NOW) for one test.
class FrozenNow {
 public:
  explicit FrozenNow(int64_t ms) {
    ::setenv("COUNTERCTL_NOW", std::to_string(ms).c_str(), 1);
  }
  ~FrozenNow() { ::unsetenv("COUNTERCTL_NOW"); }
};

// At a fixed noon (2026-11-30T12:00:00Z), so "today" and "the last 2 days"
// mean the same buckets at every run: on the system clock the test broke
// when midnight UTC fell between its calls (issue 28, item 16).
TEST_F(CounterctlBuckets, RangesTodayAndLast) {
  const int64_t midnight = 1'796'083'200'000 - kDay;  // 2026-11-30T00:00Z
  const FrozenNow frozen(midnight + kDay / 2);
  EXPECT_EQ(CtlOk({"create", "orders", "--shards", "4", "--bucket", "day",
                   "--retention", "30d"}),
            "created orders (4 shards)\n");
  nlohmann::json info = CtlJson({"describe", "orders"});
  EXPECT_EQ(info["bucket"], "day");
  EXPECT_EQ(info["retention_ms"], 30 * kDay);

  const std::string yesterday = std::to_string(midnight - 1);
  const std::string three_days_ago = std::to_string(midnight - 3 * kDay + 5);
  CtlOk({"incr", "orders", "--by", "5"});  // now: today
  CtlOk({"incr", "orders", "--by", "7", "--time", yesterday});
  CtlOk({"incr", "orders", "--by", "11", "--time", three_days_ago,
         "--event-id", "ord-1"});
  // Outside the 30-day retention: refused, exit 1, nothing counted.
  ProcessResult late = Ctl({"incr", "orders", "--time",
                            std::to_string(midnight - 40 * kDay)});
  EXPECT_EQ(late.exit_code, 1);
  EXPECT_NE(late.err.find("past its retention"), std::string::npos) << late.err;

  EXPECT_EQ(CtlValue({"get", "orders"}), "23");
  EXPECT_EQ(CtlValue({"get", "orders", "--today"}), "5");
  EXPECT_EQ(CtlValue({"get", "orders", "--last", "2d"}), "12");
  EXPECT_EQ(CtlValue({"get", "orders", "--last", "7d"}), "23");
  nlohmann::json range = CtlJson({"get", "orders", "--from",
                                  std::to_string(midnight - 3 * kDay), "--to",
                                  std::to_string(midnight - 2 * kDay)});
  EXPECT_EQ(range["value"], 11);
  EXPECT_EQ(range["from_ms"], midnight - 3 * kDay);
  const std::string text = CtlOk({"get", "orders", "--today"});
  EXPECT_EQ(text.rfind("from: ", 0), 0u) << text;

  ProcessResult bad = Ctl({"get", "orders", "--last", "36h"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("whole number of the counter's buckets"),
            std::string::npos)
      << bad.err;
  // Export does not carry buckets yet: refused, and no file is left behind.
  ProcessResult exp = Ctl({"export", tmp_.Sub("dump.jsonl")});
  EXPECT_EQ(exp.exit_code, 1);
  EXPECT_NE(exp.err.find("has time buckets"), std::string::npos) << exp.err;
  EXPECT_FALSE(std::ifstream(tmp_.Sub("dump.jsonl")).good());
  EXPECT_EQ(CtlOk({"verify"}).rfind("ok: ", 0), 0u);
}

// Item 13: a redelivery into a bucket past retention is a duplicate; the
// apply batch holding it is not refused. The first delivery is written ten
// days ago through the library with a clock set back then.
TEST_F(CounterctlBuckets,
       Item13_ApplyRedeliveryIntoAnExpiredBucketIsADuplicate) {
  const int64_t then = NowMs() - 10 * kDay;
  {
    ManualClock clock(then);
    Options o;
    o.clock = &clock;
    o.rollup_interval_ms = 0;
    auto db = OpenOrDie(db_, o);
    CounterSpec spec;
    spec.shards = 2;
    spec.bucket = BucketWidth::kDay;
    spec.retention_ms = kDay;
    ASSERT_OK(db->CreateCounter("orders", spec));
    ASSERT_OK(db->IncrementOnce("orders", "ord-1", 5, OnceOptions{then, {}}));
  }
  const std::string file = WriteFile(
      "in.jsonl",
      "{\"counter\":\"orders\",\"event_id\":\"ord-1\",\"delta\":5,"
      "\"time_ms\":" +
          std::to_string(then) +
          "}\n"
          "{\"counter\":\"orders\",\"event_id\":\"ord-2\",\"delta\":2}\n");
  EXPECT_EQ(CtlOk({"apply", "--file", file}),
            "applied=1 duplicates=1 conflicts=0 outside_window=0 rejected=0 "
            "lines=2\n");
  EXPECT_EQ(CtlValue({"get", "orders"}), "2");  // ten days ago is expired
}

}  // namespace
}  // namespace tally::test
