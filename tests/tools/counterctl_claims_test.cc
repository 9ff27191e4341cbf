// counterctl claims list, show and release (docs/claims.md): each one's
// lines and --json document against claims made through the library, an
// operator's release that the next holder sees as a higher token (and the
// stuck holder's completion then refused), and bad input refused with one
// line on stderr and nothing changed. No test sleeps: a lease that has run
// out is one of 1 ms, which a process start alone outlasts.

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "counterctl_fixture.h"
#include "tally/db.h"

namespace tally::test {
namespace {

constexpr int64_t kHour = 3'600'000;

class CounterctlClaims : public CounterctlTest {
 protected:
  // c-done: completed with result "row 7"; c-held: held by w1 for an hour;
  // c-out: its 1 ms lease ran out; c-released: released.
  void MakeClaims() {
    std::unique_ptr<Db> db;
    Options o;
    o.create_if_missing = true;
    ASSERT_OK(Db::Open(o, db_, &db));
    ASSERT_OK(db->Claim("c-done", "w0", kHour));
    ASSERT_OK(db->CompleteClaim("c-done", 1, "row 7"));
    ASSERT_OK(db->Claim("c-held", "w1", kHour));
    ASSERT_OK(db->Claim("c-out", "w2", 1));
    ASSERT_OK(db->Claim("c-released", "w3", kHour));
    ASSERT_OK(db->ReleaseClaim("c-released", 1));
  }
  void ExpectRefused(const std::vector<std::string>& args, int code,
                     const std::string& err) {
    const ProcessResult r = Ctl(args);
    EXPECT_EQ(r.exit_code, code) << Describe(args, r);
    EXPECT_EQ(r.out, "") << Describe(args, r);
    EXPECT_EQ(r.err, "counterctl: " + err + "\n") << Describe(args, r);
  }
  // The words of each line before its first time field.
  static std::vector<std::string> Heads(const std::string& out) {
    std::vector<std::string> heads;
    size_t from = 0;
    for (size_t nl; (nl = out.find('\n', from)) != std::string::npos;
         from = nl + 1) {
      const std::string line = out.substr(from, nl - from);
      const size_t time = line.find(" lease_until=") != std::string::npos
                              ? line.find(" lease_until=")
                              : line.find(" ended_at=");
      heads.push_back(line.substr(0, time));
    }
    return heads;
  }
};

TEST_F(CounterctlClaims, ListShowsEveryClaimAndFilters) {
  MakeClaims();
  const std::string all = CtlOk({"claims", "list"});
  EXPECT_EQ(Heads(all), (std::vector<std::string>{
                            "c-done state=done token=1 holder=w0",
                            "c-held state=held token=1 holder=w1",
                            "c-out state=expired token=1 holder=w2",
                            "c-released state=released token=1 holder=w3"}))
      << all;
  EXPECT_NE(all.find(" result=row 7\n"), std::string::npos) << all;
  EXPECT_EQ(Heads(CtlOk({"claims", "list", "--held"})),
            (std::vector<std::string>{"c-held state=held token=1 holder=w1"}));
  EXPECT_EQ(Heads(CtlOk({"claims", "list", "--done"})),
            (std::vector<std::string>{"c-done state=done token=1 holder=w0"}));
  // A full page says where the next one starts.
  const std::string page = CtlOk({"claims", "list", "--limit", "2"});
  EXPECT_EQ(Heads(page).size(), 3u) << page;
  EXPECT_NE(page.find("(more: --after c-held)\n"), std::string::npos) << page;
  EXPECT_EQ(Heads(CtlOk({"claims", "list", "--after", "c-held", "--limit",
                         "1"}))[0],
            "c-out state=expired token=1 holder=w2");

  nlohmann::json doc = CtlJson({"claims", "list", "--done"});
  ASSERT_EQ(doc["claims"].size(), 1u);
  const nlohmann::json& c = doc["claims"][0];
  EXPECT_EQ(c["key"], "c-done");
  EXPECT_EQ(c["state"], "done");
  EXPECT_EQ(c["token"], 1);
  EXPECT_EQ(c["result"], "row 7");
  EXPECT_TRUE(c["ended_at_ms"].is_number());
  EXPECT_TRUE(c["granted_at"].is_string());
  EXPECT_TRUE(doc["next_after"].is_null());
  doc = CtlJson({"claims", "list", "--held"});
  EXPECT_TRUE(doc["claims"][0]["ended_at"].is_null());
  EXPECT_TRUE(doc["claims"][0]["result"].is_null());
}

TEST_F(CounterctlClaims, ShowPrintsOneClaim) {
  MakeClaims();
  const std::string out = CtlOk({"claims", "show", "c-done"});
  EXPECT_EQ(out.substr(0, out.find("granted_at")),
            "key: c-done\nstate: done\ntoken: 1\nholder: w0\n");
  EXPECT_NE(out.find("\nresult: row 7\n"), std::string::npos) << out;
  const std::string held = CtlOk({"claims", "show", "c-held"});
  EXPECT_NE(held.find("\nended_at: none\nresult: none\n"), std::string::npos)
      << held;
  nlohmann::json doc = CtlJson({"claims", "show", "c-out"});
  EXPECT_EQ(doc["state"], "expired");
  EXPECT_EQ(doc["holder"], "w2");
  ExpectRefused({"claims", "show", "nope"}, 1,
                "NotFound: claim 'nope' was never claimed");
}

// The operator frees a stuck claim: the next holder gets token 2 and the
// stuck holder's completion is refused as stale.
TEST_F(CounterctlClaims, ReleaseFreesAStuckClaimForTheNextHolder) {
  MakeClaims();
  EXPECT_EQ(Heads(CtlOk({"claims", "release", "c-held", "--token", "1"}))[0],
            "released state=released token=1 holder=w1");
  EXPECT_EQ(
      Heads(CtlOk({"claims", "release", "c-held", "--token", "1"}))[0],
      "released (repeated) state=released token=1 holder=w1");
  nlohmann::json doc =
      CtlJson({"claims", "release", "c-done", "--token", "1"});
  EXPECT_EQ(doc["answer"], "done");
  EXPECT_EQ(doc["claim"]["state"], "done");
  ExpectRefused({"claims", "release", "c-held", "--token", "2"}, 1,
                "InvalidArgument: token 2 of claim 'c-held' was never granted "
                "(the latest grant is token 1)");

  std::unique_ptr<Db> db;
  ASSERT_OK(Db::Open(Options(), db_, &db));
  auto next = db->Claim("c-held", "w9", kHour);
  ASSERT_OK(next);
  EXPECT_EQ(next->answer, ClaimAnswer::kAcquired);
  EXPECT_EQ(next->claim.token, 2u);
  auto stuck = db->CompleteClaim("c-held", 1, "late");
  ASSERT_OK(stuck);
  EXPECT_EQ(stuck->answer, ClaimAnswer::kStaleToken);
  db.reset();
  doc = CtlJson({"claims", "release", "c-held", "--token", "1"});
  EXPECT_EQ(doc["answer"], "stale_token");
  EXPECT_EQ(doc["claim"]["token"], 2);
  EXPECT_EQ(doc["claim"]["state"], "held");
}

TEST_F(CounterctlClaims, BadInputIsOneLineAndChangesNothing) {
  MakeClaims();
  ExpectRefused({"claims"}, 2,
                "claims needs an action: list, show or release (see "
                "counterctl --help)");
  ExpectRefused({"claims", "release", "c-held", "--token", "0"}, 2,
                "--token 0: expected a token, an integer of at least 1 "
                "(claims show KEY prints the current one)");
  ExpectRefused({"claims", "release", "c-held", "--token", "1x"}, 2,
                "--token 1x: expected a token, an integer of at least 1 "
                "(claims show KEY prints the current one)");
  ExpectRefused({"claims", "list", "--limit", "0"}, 2,
                "--limit 0: expected an integer in 1..10000");
  const ProcessResult both = Ctl({"claims", "list", "--held", "--done"});
  EXPECT_EQ(both.exit_code, 2) << Describe({}, both);
  EXPECT_EQ(both.ErrLines(), 1u) << Describe({}, both);
  ExpectRefused({"claims", "show", ""}, 1,
                "InvalidArgument: claim key is empty");
  EXPECT_EQ(Heads(CtlOk({"claims", "list", "--held"})),
            (std::vector<std::string>{"c-held state=held token=1 holder=w1"}));
}

}  // namespace
}  // namespace tally::test
