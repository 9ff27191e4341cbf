// counterctl's command-line conventions (issue 18): --db anywhere on the
// line, -d as its short form, TALLY_DB as its default, and --version
// naming counterctl's build.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <regex>
#include <string>

#include "counterctl_fixture.h"

namespace tally::test {
namespace {

class CounterctlConventions : public CounterctlTest {
 protected:
  void SetUp() override {
    ::unsetenv("TALLY_DB");
    CtlOk({"create", "orders", "--shards", "2"});
    CtlOk({"incr", "orders", "--by", "5"});
  }
  void TearDown() override {
    ::unsetenv("TALLY_DB");
    ::unsetenv("COUNTERCTL_NOW");
  }
};

TEST_F(CounterctlConventions, DbGoesBeforeOrAfterTheSubcommand) {
  for (const auto& argv : std::vector<std::vector<std::string>>{
           {"--db", db_, "get", "orders"},
           {"get", "orders", "--db", db_},
           {"get", "--db", db_, "orders"},
           {"-d", db_, "get", "orders"},
           {"get", "orders", "-d", db_}}) {
    const ProcessResult r = CtlRaw(argv);
    EXPECT_EQ(r.exit_code, 0) << Describe(argv, r);
    EXPECT_EQ(r.out, "5\n") << Describe(argv, r);
  }
  // Subcommands with their own actions take it too.
  const ProcessResult r = CtlRaw({"claims", "list", "--db", db_});
  EXPECT_EQ(r.exit_code, 0) << Describe({}, r);
}

TEST_F(CounterctlConventions, TallyDbIsTheDefaultAndDbWins) {
  ::setenv("TALLY_DB", db_.c_str(), 1);
  ProcessResult r = CtlRaw({"get", "orders"});
  EXPECT_EQ(r.exit_code, 0) << Describe({}, r);
  EXPECT_EQ(r.out, "5\n");
  // --db names another database: it wins over the environment.
  const std::string other = tmp_.Sub("other");
  CtlOnOk(other, {"create", "orders", "--shards", "1"});
  r = CtlRaw({"get", "orders", "--db", other});
  EXPECT_EQ(r.out, "0\n") << Describe({}, r);
  ::unsetenv("TALLY_DB");
  r = CtlRaw({"get", "orders"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "counterctl: no database given: pass --db DIR (or -d DIR) before "
            "or after the subcommand, or set TALLY_DB (see counterctl "
            "--help)\n");
}

TEST_F(CounterctlConventions, VersionNamesTallyRocksDbAndTheCommit) {
  const ProcessResult r = CtlRaw({"--version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(std::regex_match(
      r.out, std::regex("counterctl [0-9]+\\.[0-9]+\\.[0-9]+ \\(tally "
                        "[0-9]+\\.[0-9]+\\.[0-9]+, RocksDB [0-9]+\\.[0-9]+\\."
                        "[0-9]+, commit ([0-9a-f]{12}(-dirty)?|unknown)\\)\n")))
      << r.out;
}

// help [SUBCOMMAND] needs no database: the tool's --help, or one
// subcommand's with a footer naming that subcommand (not another's
// example).
TEST_F(CounterctlConventions, HelpNamesTheSubcommand) {
  const ProcessResult all = CtlRaw({"help"});
  EXPECT_EQ(all.exit_code, 0);
  EXPECT_EQ(all.out, CtlRaw({"--help"}).out);
  for (const char* name : {"get", "apply", "claims", "backup"}) {
    const ProcessResult r = CtlRaw({"help", name});
    EXPECT_EQ(r.exit_code, 0) << Describe({}, r);
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(r.out, CtlRaw({name, "--help"}).out) << name;
    EXPECT_NE(r.out.find(std::string("Run as: counterctl --db DIR ") + name +
                         " ..."),
              std::string::npos)
        << r.out;
    EXPECT_EQ(r.out.find("Example: counterctl --db /var/lib/tally get"),
              std::string::npos)
        << name << " shows get's example:\n" << r.out;
  }
}

// COUNTERCTL_NOW stops counterctl's clock: creation times and a --last
// range read it; a malformed value fails the open naming it, and the
// engine never goes below the time it persisted.
TEST_F(CounterctlConventions, CounterctlNowStopsTheClock) {
  // A database of its own: the fixture's was written at the wall clock.
  const std::string db = tmp_.Sub("frozen");
  ::setenv("COUNTERCTL_NOW", "2026-11-30T04:30:00Z", 1);
  CtlOnOk(db, {"create", "daily", "--shards", "1", "--bucket", "day"});
  const nlohmann::json daily =
      nlohmann::json::parse(CtlOnOk(db, {"describe", "daily", "--json"}));
  EXPECT_EQ(daily["created_at"], "2026-11-30T04:30:00.000Z");
  CtlOnOk(db,
          {"incr", "daily", "--by", "5", "--time", "2026-11-29T18:30:00Z"});
  CtlOnOk(db,
          {"incr", "daily", "--by", "2", "--time", "2026-11-20T00:00:00Z"});
  // A week back from the frozen now holds the first, not the second.
  EXPECT_EQ(CtlOnOk(db, {"get", "daily", "--last", "7d"}),
            "from: 2026-11-24T00:00:00.000Z\nto: 2026-12-01T00:00:00.000Z\n5\n");

  ::setenv("COUNTERCTL_NOW", "yesterday", 1);
  const ProcessResult bad = CtlOn(db, {"get", "daily"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_EQ(bad.err,
            "counterctl: InvalidArgument: COUNTERCTL_NOW=yesterday: expected "
            "an ISO-8601 UTC time or epoch milliseconds\n");

  // Stopped before what the database has seen: its time stays there.
  ::setenv("COUNTERCTL_NOW", "2026-01-01T00:00:00Z", 1);
  CtlOnOk(db, {"create", "later", "--shards", "1"});
  const nlohmann::json later =
      nlohmann::json::parse(CtlOnOk(db, {"describe", "later", "--json"}));
  ::unsetenv("COUNTERCTL_NOW");
  EXPECT_EQ(later["created_at"], "2026-11-30T04:30:00.000Z");
}

}  // namespace
}  // namespace tally::test
