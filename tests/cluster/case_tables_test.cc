// The counting rules' case tables (tests/core/cases/*.json) against the
// cluster backend on a real cluster: the same files core/'s runner
// (tests/core/rules_cases_test.cc) checks, read by the same code
// (testutil/case_table.h), run through a Db on a redis:// target, so that
// each case's answer comes from the client's decision and the functions'
// check of the stored state, as in production.
//
// A case's stored marker is planted with the functions themselves (what
// the first delivery's calls leave: tally_write in the shard's tag, and a
// forward by tally_forward at home when the marker's shard is not its
// event id's), then the op runs with the clock at the case's "now". Each
// answer is compared with the case's: status (code and message part),
// outcome, applied, shard, the marker's expiry, and the counter's value
// afterwards (the planted delta plus what was applied). A case of a
// feature the cluster has not built (strict counters, buckets, resets:
// docs/cluster.md) is skipped by name and counted; the test fails if a
// rule file has no case run.

#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cluster/client/cluster_client.h"
#include "cluster/cluster_target.h"
#include "cluster/keys.h"
#include "cluster/records.h"
#include "cluster/target.h"
#include "core/shard_picker.h"
#include "tally/tally.h"
#include "testutil/case_table.h"

namespace tally::cluster {
namespace {

using core::cases::json;

// The clock of the cases: each sets its "now".
class CaseClock : public Clock {
 public:
  int64_t NowMillis() const override { return now_.load(); }
  void Set(int64_t now) { now_.store(now); }

 private:
  std::atomic<int64_t> now_{0};
};

// Why a case cannot run on the cluster yet; empty when it can.
std::string NotBuilt(const json& c) {
  const json& counter = c["counter"];
  const json& op = c["op"];
  if (counter.contains("min") || counter.contains("max")) {
    return "strict counters";
  }
  if (counter.value("bucket", "none") != "none") return "time buckets";
  if (op.value("reset", false)) return "resets";
  if (op.value("saturate", false)) return "strict counters (saturate)";
  return "";
}

class CaseTables : public ::testing::Test {
 protected:
  void SetUp() override {
    target_ = test::ClusterTarget("cases");
    if (target_.empty()) GTEST_SKIP() << "no cluster: TALLY_REDIS_ENV is unset";
    Options options;
    options.clock = &clock_;
    ASSERT_TRUE(Db::Open(options, target_, &db_).ok());
    Target t;
    ASSERT_TRUE(ParseTarget(target_, &t).ok());
    keys_ = std::make_unique<KeySpace>(t.ns);
    ClientOptions o;
    o.seeds = t.seeds;
    o.user = t.user;
    ASSERT_TRUE(ReadPassword(&o.password).ok());
    ASSERT_TRUE(ClusterClient::Connect(o, &client_).ok());
  }

  // One function call on the node of `tag`; its answer must be an array.
  void Call(const std::string& tag, std::vector<std::string> args) {
    Command c;
    c.args = std::move(args);
    c.slot = ClusterClient::SlotOf(tag);
    std::vector<Reply> replies;
    ASSERT_TRUE(client_->Run({c}, &replies).ok());
    ASSERT_EQ(replies[0].kind, Reply::Kind::kArray) << replies[0].str;
  }

  // Leaves the case's stored marker of the op's event as its first
  // delivery would have: counted in the marker's shard with its record,
  // and a forward at home when that shard is not the event id's.
  void Plant(const CounterInfo& c, const core::WriteOp& op, const json& m) {
    const core::FoundMarker found = core::cases::MarkerFrom(m);
    MarkerInfo info;
    info.shard = found.shard;
    info.delta = found.delta;
    info.created_at_ms = 1;
    info.strict = found.strict;
    info.refused = found.refused;
    info.asked = found.asked;
    info.value = found.value;
    info.window_ends_ms = found.window_ends;
    info.remaining = found.remaining;
    info.reset = found.reset;
    info.remaining_kept = found.remaining_kept;
    const std::string name = KeySpace::MarkerName(op.key, op.event_id);
    const uint32_t home = core::ShardOfKey(op.event_id, c.shards);
    if (found.shard != home) {
      const std::string tag = keys_->Tag(c, home, op.key);
      Call(tag, {"FCALL", "tally_forward", "3", KeySpace::Live(tag),
                 KeySpace::ForwardIndex(tag), KeySpace::Marker(tag, name),
                 "0", "1", "3", EncodeForward(found.shard), "0", name, "0"});
    }
    const std::string tag = keys_->Tag(c, found.shard, op.key);
    Call(tag, {"FCALL", "tally_write", "5", KeySpace::Live(tag),
               KeySpace::MarkerIndex(tag), KeySpace::KeyIndex(tag),
               KeySpace::Value(tag, op.key), KeySpace::Marker(tag, name), "0",
               "1", "o", "4", "5", std::to_string(found.delta),
               EncodeMarker(info), "0", name, "0", std::string(op.key)});
  }

  // Runs one case (`index`: its counter's name) on the cluster.
  void Run(const json& c, const json& expect, size_t index) {
    const CounterInfo want = core::cases::CounterOf(c["counter"]);
    core::WriteOp op = core::cases::OpOf(c["op"]);
    const std::string name = "c" + std::to_string(index);
    CounterSpec spec{want.shards};
    spec.policy = want.policy;
    spec.keyed = want.keyed;
    spec.dedupe_window_ms = want.dedupe_window_ms;
    ASSERT_TRUE(db_->CreateCounter(name, spec).ok());
    const CounterInfo counter = db_->DescribeCounter(name).value();
    op.counter = name;
    int64_t planted = 0;
    if (c.contains("marker")) {
      ASSERT_NO_FATAL_FAILURE(Plant(counter, op, c["marker"]));
      planted = c["marker"].value("delta", int64_t{0});
    }
    clock_.Set(c["now"].get<int64_t>());
    const CounterRef ref(name, op.key);
    const Result<IncrementResult> r = [&]() -> Result<IncrementResult> {
      if (op.once) {
        OnceOptions o;
        o.event_time_ms = op.event_time_ms;
        o.affinity_key = op.affinity_key;
        return db_->IncrementOnce(ref, op.event_id, op.delta, o);
      }
      IncrementOptions o;
      o.event_time_ms = op.event_time_ms;
      o.affinity_key = op.affinity_key;
      return db_->Increment(ref, op.delta, o);
    }();
    if (!core::cases::StatusAsExpected(expect, r.status())) return;
    const IncrementResult& got = r.value();
    if (expect.contains("outcome")) {
      EXPECT_EQ(OutcomeName(got.outcome), expect["outcome"].get<std::string>());
    }
    core::cases::ExpectFields(expect, {{"applied", got.applied},
                                       {"shard", got.shard}});
    if (expect.contains("expires_at") && op.once &&
        got.outcome == Outcome::kApplied) {
      Result<MarkerInfo> m = db_->GetMarker(ref, op.event_id);
      ASSERT_TRUE(m.ok()) << m.status().ToString();
      EXPECT_EQ(m.value().expires_at_ms, expect["expires_at"].get<int64_t>());
    }
    const int64_t counted = got.outcome == Outcome::kApplied ? got.applied : 0;
    EXPECT_EQ(db_->ReadExact(ref).value(), planted + counted)
        << "the counter's value after the case";
  }

  // Every case of `rule` that the cluster has built; the others skipped
  // by name. Fields a cluster answer does not carry (a decision's bucket,
  // a strict counter's value, room and window) are core's runner's.
  void RunRule(const std::string& rule) {
    size_t index = 0, ran = 0;
    std::map<std::string, int> skipped;
    core::cases::ForEachCase(
        rule,
        {"status", "message_has", "outcome", "applied", "shard", "bucket",
         "expires_at", "value", "remaining", "window_ends"},
        [&](const json& c, const json& expect) {
          ++index;
          const std::string why = NotBuilt(c);
          if (!why.empty()) {
            ++skipped[why];
            return;
          }
          ++ran;
          Run(c, expect, index);
        });
    std::string report;
    for (const auto& [why, n] : skipped) {
      report += " " + std::to_string(n) + " of " + why + ";";
    }
    std::printf("%s: %zu cases ran on the cluster; skipped (not built):%s\n",
                rule.c_str(), ran, report.c_str());
    EXPECT_GT(ran, 0u);
  }

  CaseClock clock_;
  std::string target_;
  std::unique_ptr<Db> db_;
  std::unique_ptr<KeySpace> keys_;
  std::unique_ptr<ClusterClient> client_;
};

TEST_F(CaseTables, Once) { RunRule("once"); }

}  // namespace
}  // namespace tally::cluster
