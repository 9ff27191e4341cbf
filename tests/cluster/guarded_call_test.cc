// tally_guarded through GuardedCall (cluster/guarded_call.h), the
// compare-and-set the backend's claims and reservations write with: it
// writes all of its ops only where every guard still holds what was read,
// else nothing; a missing live key fails it; an increment past int64
// undoes the others.

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cluster/client/cluster_client.h"
#include "cluster/cluster_target.h"
#include "cluster/guarded_call.h"
#include "cluster/target.h"
#include "tally/tally.h"
#include "testutil/testutil.h"

namespace tally::cluster {
namespace {

class Guarded : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string target = test::ClusterTarget("guard-");
    if (target.empty()) GTEST_SKIP() << "no cluster: TALLY_REDIS_ENV is unset";
    Target t;
    ASSERT_OK(ParseTarget(target, &t));
    tag_ = "tally:" + t.ns + ":{g" + std::to_string(++tests_) + "}";
    ClientOptions o;
    o.seeds = t.seeds;
    o.user = t.user;
    ASSERT_OK(ReadPassword(&o.password));
    ASSERT_OK(ClusterClient::Connect(o, &client_));
  }

  Reply Run(const Command& c) {
    std::vector<Reply> replies;
    EXPECT_TRUE(client_->Run({c}, &replies).ok());
    return replies.empty() ? Reply() : replies[0];
  }

  GuardedCall::Outcome Send(const GuardedCall& g) {
    GuardedCall::Outcome out = GuardedCall::Outcome::kStale;
    const Status s = GuardedCall::Read(Run(g.Build()), "test", &out);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return out;
  }

  std::optional<std::string> Get(const std::string& key) {
    Command c;
    c.args = {"GET", key};
    c.slot = ClusterClient::SlotOf(key);
    const Reply r = Run(c);
    if (r.kind == Reply::Kind::kNil) return std::nullopt;
    return r.str;
  }

  std::string K(const std::string& name) const { return tag_ + ":" + name; }

  static inline int tests_ = 0;
  std::string tag_;
  std::unique_ptr<ClusterClient> client_;
};

TEST_F(Guarded, WritesEverythingOnlyWhereEveryGuardHolds) {
  GuardedCall first(tag_);
  first.Guard(K("rec"), std::nullopt);
  first.Set(K("rec"), "r1", 0);
  first.IncrBy(K("v"), 5);
  first.ZAdd(K("idx"), 0, "a");
  ASSERT_EQ(Send(first), GuardedCall::Outcome::kWritten);
  EXPECT_EQ(Get(K("rec")), "r1");
  EXPECT_EQ(Get(K("v")), "5");

  // The same call again: its guard (no record) no longer holds.
  ASSERT_EQ(Send(first), GuardedCall::Outcome::kStale);
  EXPECT_EQ(Get(K("v")), "5") << "a stale call wrote its increment";

  // Two guards, the second stale: nothing of it is written.
  GuardedCall mixed(tag_);
  mixed.Guard(K("rec"), std::string("r1"));
  mixed.Guard(K("v"), std::string("4"));
  mixed.Set(K("rec"), "r2", 0);
  mixed.IncrBy(K("v"), 1);
  ASSERT_EQ(Send(mixed), GuardedCall::Outcome::kStale);
  EXPECT_EQ(Get(K("rec")), "r1");
  EXPECT_EQ(Get(K("v")), "5");

  // Both guards as read: both ops, and a delete.
  GuardedCall next(tag_);
  next.Guard(K("rec"), std::string("r1"));
  next.Guard(K("v"), std::string("5"));
  next.Set(K("rec"), "r2", 0);
  next.IncrBy(K("v"), -7);
  next.Del(K("other"));
  next.ZRem(K("idx"), "a");
  ASSERT_EQ(Send(next), GuardedCall::Outcome::kWritten);
  EXPECT_EQ(Get(K("rec")), "r2");
  EXPECT_EQ(Get(K("v")), "-2");
}

TEST_F(Guarded, AnEmptyValueIsNotAMissingKey) {
  GuardedCall put(tag_);
  put.Guard(K("e"), std::nullopt);
  put.Set(K("e"), "", 0);
  ASSERT_EQ(Send(put), GuardedCall::Outcome::kWritten);
  GuardedCall absent(tag_);
  absent.Guard(K("e"), std::nullopt);
  absent.Set(K("e"), "x", 0);
  EXPECT_EQ(Send(absent), GuardedCall::Outcome::kStale);
  GuardedCall empty(tag_);
  empty.Guard(K("e"), std::string());
  empty.Set(K("e"), "y", 0);
  EXPECT_EQ(Send(empty), GuardedCall::Outcome::kWritten);
  EXPECT_EQ(Get(K("e")), "y");
}

TEST_F(Guarded, AMissingLiveKeyFailsTheCall) {
  GuardedCall g(tag_);
  g.RequireLive(K("live"));
  g.Set(K("rec"), "r", 0);
  EXPECT_EQ(Send(g), GuardedCall::Outcome::kGone);
  EXPECT_EQ(Get(K("rec")), std::nullopt);
}

TEST_F(Guarded, AnOverflowUndoesTheOtherIncrements) {
  GuardedCall near(tag_);
  near.IncrBy(K("big"), INT64_MAX - 1);
  ASSERT_EQ(Send(near), GuardedCall::Outcome::kWritten);
  GuardedCall over(tag_);
  over.IncrBy(K("small"), 3);
  over.IncrBy(K("big"), 2);
  over.Set(K("rec"), "r", 0);
  GuardedCall::Outcome out = GuardedCall::Outcome::kWritten;
  const Status s = GuardedCall::Read(Run(over.Build()), "test", &out);
  EXPECT_EQ(s.code(), Status::Code::kOutOfRange) << s.ToString();
  EXPECT_EQ(Get(K("small")), "0") << "the increment before the overflow";
  EXPECT_EQ(Get(K("big")), std::to_string(INT64_MAX - 1));
  EXPECT_EQ(Get(K("rec")), std::nullopt);
}

TEST_F(Guarded, ASetWithATtlExpires) {
  GuardedCall g(tag_);
  g.Set(K("t"), "x", 60000);
  ASSERT_EQ(Send(g), GuardedCall::Outcome::kWritten);
  Command c;
  c.args = {"PTTL", K("t")};
  c.slot = ClusterClient::SlotOf(K("t"));
  const Reply r = Run(c);
  ASSERT_EQ(r.kind, Reply::Kind::kInteger);
  EXPECT_GT(r.integer, 0);
  EXPECT_LE(r.integer, 60000);
}

}  // namespace
}  // namespace tally::cluster
