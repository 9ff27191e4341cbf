// counterctl on strict counters (CounterSpec::bounds): create --min/--max,
// incr answering refused with the value, describe showing the bounds, the
// bad flags refused with one line, and export/import keeping the bounds
// and every remembered answer. Every command runs the real binary against
// a real database.

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "counterctl_fixture.h"
#include "tally/admin.h"
#include "tally/db.h"

namespace tally::test {
namespace {

using Json = nlohmann::json;

class CounterctlStrict : public CounterctlTest {};

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

TEST_F(CounterctlStrict, CreateIncrAndDescribe) {
  EXPECT_EQ(CtlOk({"create", "stock", "--shards", "1", "--min", "0"}),
            "created stock (1 shards, min 0)\n");
  EXPECT_EQ(CtlOk({"create", "seats", "--shards", "1", "--min", "-2", "--max",
                   "10", "--keyed"}),
            "created seats (1 shards, keyed, min -2, max 10)\n");
  EXPECT_EQ(CtlOk({"incr", "stock", "--by", "2"}),
            "applied shard=0 value=2 remaining=9223372036854775805\n");
  EXPECT_EQ(CtlOk({"incr", "stock", "--by=-3"}), "refused shard=0 value=2 remaining=2\n");
  EXPECT_EQ(CtlOk({"incr", "stock", "--by=-2", "--event-id", "o-1"}),
            "applied shard=0 value=0 remaining=0\n");
  EXPECT_EQ(CtlOk({"incr", "stock", "--by=-1", "--event-id", "o-2"}),
            "refused shard=0 value=0 remaining=0\n");
  CtlOk({"incr", "stock", "--by", "5"});
  // A redelivered refusal gets its first answer, whatever the value now.
  EXPECT_EQ(CtlOk({"incr", "stock", "--by=-1", "--event-id", "o-2"}),
            "refused shard=0 value=0 remaining=0\n");
  EXPECT_EQ(CtlValue({"get", "stock"}), "5");
  EXPECT_EQ(CtlOk({"incr", "seats", "--key", "row-a", "--by", "11"}),
            "refused shard=0 value=0 remaining=10\n");
  const Json d = CtlJson({"describe", "seats", "--json"});
  EXPECT_EQ(d["min"], -2);
  EXPECT_EQ(d["max"], 10);
  const Json plain = CtlJson({"describe", "stock", "--json"});
  EXPECT_EQ(plain["min"], 0);
  EXPECT_TRUE(plain["max"].is_null());
  EXPECT_NE(CtlOk({"describe", "seats"}).find("min: -2\nmax: 10\n"),
            std::string::npos);
  EXPECT_EQ(CtlOk({"verify"}).rfind("ok: ", 0), 0u);
}

TEST_F(CounterctlStrict, BadBoundsAreOneLineErrors) {
  ProcessResult r = Ctl({"create", "a", "--shards", "1", "--min", "zero"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "counterctl: --min zero: expected an integer that fits int64\n");
  r = Ctl({"create", "a", "--shards", "4", "--min", "0"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("never sharded: shard count 4 must be 1"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  r = Ctl({"create", "a", "--shards", "1", "--max", "-1"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("maximum -1 is below 0"), std::string::npos) << r.err;
  EXPECT_EQ(CtlOk({"list"}), "");
}

TEST_F(CounterctlStrict, ExportImportKeepsBoundsAndAnswers) {
  CtlOk({"create", "stock", "--shards", "1", "--min", "0", "--keyed"});
  CtlOk({"incr", "stock", "--key", "sku", "--by", "1", "--event-id", "r-1"});
  CtlOk({"incr", "stock", "--key", "sku", "--by=-1", "--event-id", "t-1"});
  CtlOk({"incr", "stock", "--key", "sku", "--by=-1", "--event-id", "t-2"});
  const std::string file = tmp_.Sub("dump.jsonl");
  CtlOk({"export", file});
  const std::string text = Slurp(file);
  EXPECT_NE(text.find("\"min\":0"), std::string::npos) << text;
  EXPECT_NE(text.find("\"event_id\":\"t-2\",\"shard\":0,\"delta\":0,"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\"strict\":true,\"refused\":true,\"asked\":-1,"
                      "\"value\":0"),
            std::string::npos)
      << text;
  const std::string copy = tmp_.Sub("copy");
  ProcessResult imported = CtlOn(copy, {"import", file});
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  // The copy answers t-2 as the original did, and keeps the bound.
  EXPECT_EQ(CtlOnOk(copy, {"incr", "stock", "--key", "sku", "--by", "3"}),
            "applied shard=0 value=3 remaining=9223372036854775804\n");
  EXPECT_EQ(CtlOnOk(copy, {"incr", "stock", "--key", "sku", "--by=-1",
                           "--event-id", "t-2"}),
            "refused shard=0 value=0 remaining=0\n");
  EXPECT_EQ(CtlOnOk(copy, {"incr", "stock", "--key", "sku", "--by=-4"}),
            "refused shard=0 value=3 remaining=3\n");
  EXPECT_EQ(CtlOnOk(copy, {"verify"}).rfind("ok: ", 0), 0u);
}

// A quota: incr says what remains and when the window ends; get shows the
// window now. The window is the wall clock's minute, so the test gives its
// increments that minute's time explicitly (--time) to stay in one window
// even when the minute turns during the test, and reads with --json.
TEST_F(CounterctlStrict, AQuotaShowsRemainingAndItsWindow) {
  EXPECT_EQ(CtlOk({"create", "calls", "--shards", "1", "--max", "2",
                   "--bucket", "minute", "--retention", "10m", "--keyed"}),
            "created calls (1 shards, keyed, max 2)\n");
  const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  const int64_t from = now - now % 60'000, to = from + 60'000;
  const std::string at = std::to_string(now);
  const std::string ends = CtlOk({"incr", "calls", "--key", "k", "--time", at});
  EXPECT_EQ(ends.rfind("applied shard=0 value=1 remaining=1 window_ends=", 0),
            0u)
      << ends;
  CtlOk({"incr", "calls", "--key", "k", "--time", at});
  const std::string refused =
      CtlOk({"incr", "calls", "--key", "k", "--time", at});
  EXPECT_EQ(refused.rfind("refused shard=0 value=2 remaining=0 window_ends=", 0),
            0u)
      << refused;
  const Json got = CtlJson({"get", "calls", "--key", "k", "--json"});
  EXPECT_EQ(got["value"], 2);
  // The window now: the test's minute, unless the minute has turned since.
  const int64_t window_from = got["window"]["from_ms"];
  if (window_from == from) {
    EXPECT_EQ(got["window"]["used"], 2);
    EXPECT_EQ(got["window"]["remaining"], 0);
    EXPECT_EQ(got["window"]["resets_at_ms"], to);
  } else {
    EXPECT_GT(window_from, from);
    EXPECT_EQ(got["window"]["used"], 0);
    EXPECT_EQ(got["window"]["remaining"], 2);
  }
  const std::string text = CtlOk({"get", "calls", "--key", "k"});
  EXPECT_NE(text.find("\nwindow_used: "), std::string::npos) << text;
  EXPECT_NE(text.find("\nresets_at: "), std::string::npos) << text;
  EXPECT_EQ(CtlOk({"verify"}).rfind("ok: ", 0), 0u);
}

}  // namespace
}  // namespace tally::test
