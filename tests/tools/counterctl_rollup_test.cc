// counterctl rollup, get --cached and stats' worst roll-up lag, against the
// real binary.

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "counterctl_fixture.h"
#include "tally/db.h"

namespace tally::test {
namespace {

using nlohmann::json;
using CounterctlRollup = CounterctlTest;

TEST_F(CounterctlRollup, RollupThenGetCachedShowsValueAsOfAndLag) {
  CtlOk({"create", "orders", "--shards", "4"});
  CtlOk({"incr", "orders", "--by", "3"});
  // Read-only get --cached before any roll-up: a clear NotFound.
  ProcessResult none = Ctl({"get", "orders", "--cached"});
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_EQ(none.err,
            "counterctl: NotFound: counter 'orders' has no roll-up yet: run "
            "`counterctl rollup orders` first, or `counterctl get orders` "
            "for the exact value now\n");
  // An unknown counter is NotFound as itself.
  ProcessResult unknown = Ctl({"get", "nope", "--cached"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_EQ(unknown.err.find("roll-up"), std::string::npos) << unknown.err;

  EXPECT_EQ(CtlOk({"rollup"}), "rolled up every changed counter\n");
  CtlOk({"incr", "orders", "--by", "2"});
  std::string out = CtlOk({"get", "orders", "--cached"});
  // as_of, lag_ms, lag_increments (unknown: another process rolled it up),
  // then the value alone on the last line: the roll-up's 3, not the exact 5.
  EXPECT_NE(out.find("as_of: 20"), std::string::npos) << out;
  EXPECT_NE(out.find("\nlag_ms: "), std::string::npos) << out;
  EXPECT_NE(out.find("\nlag_increments: unknown\n"), std::string::npos) << out;
  EXPECT_EQ(CtlValue({"get", "orders", "--cached"}), "3");
  EXPECT_EQ(CtlValue({"get", "orders"}), "5");

  EXPECT_EQ(CtlOk({"rollup", "orders"}), "rolled up orders\n");
  json doc = CtlJson({"get", "orders", "--cached"});
  EXPECT_EQ(doc["value"], 5);
  EXPECT_TRUE(doc["as_of_ms"].is_number_integer());
  EXPECT_GE(doc["lag_ms"].get<int64_t>(), 0);
  EXPECT_TRUE(doc["lag_increments"].is_null());
}

TEST_F(CounterctlRollup, StatsNamesTheWorstLag) {
  CtlOk({"create", "a", "--shards", "1"});
  CtlOk({"create", "b", "--shards", "1"});
  EXPECT_NE(CtlOk({"stats"}).find("\nrollup.worst_lag_ms: none\n"),
            std::string::npos);
  CtlOk({"rollup", "a"});
  std::string out = CtlOk({"stats"});
  EXPECT_NE(out.find("\nrollup.worst_lag_ms: "), std::string::npos) << out;
  EXPECT_NE(out.find(" (counter a)\n"), std::string::npos) << out;
  json doc = CtlJson({"stats"});
  EXPECT_EQ(doc["rollup_worst_lag_counter"], "a");
  EXPECT_GE(doc["rollup_worst_lag_ms"].get<int64_t>(), 0);
}

TEST_F(CounterctlRollup, ErrorsAreOneLine) {
  CtlOk({"create", "a", "--shards", "1"});
  ProcessResult r = Ctl({"rollup", "nope"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "counterctl: NotFound: counter 'nope' does not exist\n");
  // A database held by another process: the writer's worker rolls up.
  std::unique_ptr<Db> held = OpenOrDie(db_);
  ASSERT_NE(held, nullptr);
  r = Ctl({"rollup"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("is in use by another process"), std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace tally::test
