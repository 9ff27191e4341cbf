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
#include <optional>
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
  if (!c.contains("counter")) return "";  // claims: no counter
  const json& counter = c["counter"];
  if (counter.value("bucket", "none") != "none") {
    return counter.contains("min") || counter.contains("max")
               ? "quotas"
               : "time buckets";
  }
  if (c.contains("held")) return "reservations";
  if (c["expect"].contains("room")) return "ReadQuota (room)";
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
               EncodeMarker(info), "0", name, "0", std::string(op.key), "0"});
  }

  // Creates the case's counter as counter `name`.
  void Create(const json& c, const std::string& name, CounterInfo* counter) {
    const CounterInfo want = core::cases::CounterOf(c["counter"]);
    CounterSpec spec{want.shards};
    spec.policy = want.policy;
    spec.keyed = want.keyed;
    spec.dedupe_window_ms = want.dedupe_window_ms;
    spec.bounds = want.bounds;
    const Status s = db_->CreateCounter(name, spec);
    ASSERT_TRUE(s.ok()) << s.ToString();
    *counter = db_->DescribeCounter(name).value();
  }

  // Adds `delta` to `key`'s value in shard 0 with a plain op of
  // tally_write, unchecked (a strict case's current value may lie outside
  // its bounds).
  void Plant(const CounterInfo& c, std::string_view key, int64_t delta) {
    const std::string tag = keys_->Tag(c, 0, key);
    Call(tag, {"FCALL", "tally_write", "4", KeySpace::Live(tag),
               KeySpace::MarkerIndex(tag), KeySpace::KeyIndex(tag),
               KeySpace::Value(tag, key), "0", "1", "p", "4", "0",
               std::to_string(delta), "", "0", "", "0", std::string(key),
               "0"});
  }

  // The options of a case's op.
  static OnceOptions OnceOf(const core::WriteOp& op) {
    OnceOptions o;
    o.event_time_ms = op.event_time_ms;
    o.affinity_key = op.affinity_key;
    o.saturate = op.saturate;
    return o;
  }
  static IncrementOptions PlainOf(const core::WriteOp& op) {
    IncrementOptions o;
    o.event_time_ms = op.event_time_ms;
    o.affinity_key = op.affinity_key;
    o.saturate = op.saturate;
    return o;
  }

  // The op of a case, by the public API.
  Result<IncrementResult> Write(const core::WriteOp& op) {
    const CounterRef ref(op.counter, op.key);
    if (op.reset) {
      ResetOptions o;
      o.event_time_ms = op.event_time_ms;
      return db_->Reset(ref, op.event_id, op.delta, o);
    }
    return op.once ? db_->IncrementOnce(ref, op.event_id, op.delta, OnceOf(op))
                   : db_->Increment(ref, op.delta, PlainOf(op));
  }

 public:
  // Runs one case of once.json (`index`: its counter's name).
  void Run(const json& c, const json& expect, size_t index) {
    core::WriteOp op = core::cases::OpOf(c["op"]);
    const std::string name = "c" + std::to_string(index);
    CounterInfo counter;
    ASSERT_NO_FATAL_FAILURE(Create(c, name, &counter));
    op.counter = name;
    int64_t planted = 0;
    if (c.contains("marker")) {
      ASSERT_NO_FATAL_FAILURE(Plant(counter, op, c["marker"]));
      planted = c["marker"].value("delta", int64_t{0});
    }
    clock_.Set(c["now"].get<int64_t>());
    const CounterRef ref(name, op.key);
    const Result<IncrementResult> r = Write(op);
    if (!core::cases::StatusAsExpected(expect, r.status())) return;
    const IncrementResult& got = r.value();
    if (expect.contains("outcome")) {
      EXPECT_EQ(OutcomeName(got.outcome), expect["outcome"].get<std::string>());
    }
    core::cases::ExpectFields(expect, {{"applied", got.applied},
                                       {"shard", got.shard},
                                       {"value", got.value},
                                       {"remaining", got.remaining},
                                       {"window_ends", got.window_ends_ms}});
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

  // Runs one case of bounds.json: the key holds "current" (planted), the
  // op runs alone and as a batch of one (whose refusal must name the
  // case's reason), and the answer and the value afterwards are the case's.
  void RunBounds(const json& c, const json& expect, size_t index) {
    core::WriteOp op = core::cases::OpOf(c["op"]);
    const std::string name = "b" + std::to_string(index);
    CounterInfo counter;
    ASSERT_NO_FATAL_FAILURE(Create(c, name, &counter));
    op.counter = name;
    if (op.once && op.event_id.empty()) op.event_id = "e";
    const int64_t current = c["current"].get<int64_t>();
    ASSERT_NO_FATAL_FAILURE(Plant(counter, op.key, current));
    clock_.Set(1'000'000);
    if (expect.contains("reason_has")) {
      Batch b;
      const CounterRef ref(op.counter, op.key);
      if (op.once) {
        b.AddOnce(ref, op.event_id, op.delta, OnceOf(op));
      } else {
        b.Add(ref, op.delta, PlainOf(op));
      }
      std::vector<IncrementResult> results;
      const Status s = db_->Apply(b, &results);
      EXPECT_TRUE(s.IsOutOfRange()) << s.ToString();
      EXPECT_NE(s.message().find(expect["reason_has"].get<std::string>()),
                std::string::npos)
          << s.ToString();
    }
    const Result<IncrementResult> r = Write(op);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    const IncrementResult& got = r.value();
    EXPECT_EQ(OutcomeName(got.outcome), expect["outcome"].get<std::string>());
    core::cases::ExpectFields(expect, {{"applied", got.applied},
                                       {"value", got.value},
                                       {"remaining", got.remaining},
                                       {"window_ends", got.window_ends_ms}});
    EXPECT_EQ(db_->ReadExact(CounterRef(name, op.key)).value(),
              current + got.applied)
        << "the counter's value after the case";
  }

  // Runs one case of reset.json: the key holds "current" (planted), a
  // reset to "to" runs, and its answer (or refusal) and the value
  // afterwards are the case's.
  void RunReset(const json& c, const json& expect, size_t index) {
    const std::string name = "r" + std::to_string(index);
    CounterInfo counter;
    ASSERT_NO_FATAL_FAILURE(Create(c, name, &counter));
    const std::string key = c.value("key", "");
    const int64_t current = c["current"].get<int64_t>();
    ASSERT_NO_FATAL_FAILURE(Plant(counter, key, current));
    clock_.Set(1'000'000);
    const Result<IncrementResult> r =
        db_->Reset(CounterRef(name, key), "reset-1", c["to"].get<int64_t>());
    int64_t applied = 0;
    if (core::cases::StatusAsExpected(expect, r.status())) {
      const IncrementResult& got = r.value();
      EXPECT_EQ(got.outcome, Outcome::kApplied);
      applied = got.applied;
      core::cases::ExpectFields(expect, {{"applied", got.applied},
                                         {"value", got.value},
                                         {"remaining", got.remaining},
                                         {"window_ends", got.window_ends_ms}});
    }
    EXPECT_EQ(db_->ReadExact(CounterRef(name, key)).value(), current + applied)
        << "the counter's value after the case";
  }

  // The stored record of claim `key` (nullopt: none), as the backend
  // keeps it.
  std::optional<std::string> StoredClaimBytes(const std::string& key) {
    const std::string record = KeySpace::Claim(keys_->ClaimTag(key), key);
    Command get;
    get.args = {"GET", record};
    get.slot = ClusterClient::SlotOf(record);
    std::vector<Reply> replies;
    EXPECT_TRUE(client_->Run({get}, &replies).ok());
    if (replies.empty() || replies[0].kind != Reply::Kind::kString) {
      return std::nullopt;
    }
    return replies[0].str;
  }

  // Runs one case of claims.json: its record planted (or none) as the
  // backend stores it, the call made through the Db at the case's
  // time; the record after it read back, and "write" seen as the stored
  // bytes changing.
  void RunClaim(const json& c, const json& expect, size_t) {
    using namespace core::cases;  // NOLINT(build/namespaces): the helpers
    // The key core's runner names, so that messages match.
    const std::string key = "job";
    const std::string record = KeySpace::Claim(keys_->ClaimTag(key), key);
    Command plant;
    plant.args = {"DEL", record};
    if (c.contains("record")) {
      StoredClaim planted;
      planted.rec = ClaimRecordOf(c["record"]);
      plant.args = {"SET", record, EncodeClaim(planted)};
    }
    plant.slot = ClusterClient::SlotOf(record);
    std::vector<Reply> replies;
    ASSERT_TRUE(client_->Run({plant}, &replies).ok());
    const std::optional<std::string> before =
        StoredClaimBytes(key);
    clock_.Set(c["now"].get<int64_t>());
    const core::ClaimArgs a = ClaimArgsOf(c["args"]);
    const core::ClaimCall call = ClaimCallNamed(c["call"].get<std::string>());
    Result<ClaimResult> r =
        call == core::ClaimCall::kClaim
            ? db_->Claim(key, a.holder, a.lease_ms)
        : call == core::ClaimCall::kComplete
            ? db_->CompleteClaim(key, a.token, a.result, Batch())
            : db_->ReleaseClaim(key, a.token);
    if (!StatusAsExpected(expect, r.status())) return;
    EXPECT_STREQ(ClaimAnswerName(r->answer),
                 expect["answer"].get<std::string>().c_str());
    if (expect.contains("repeated")) {
      EXPECT_EQ(r->repeated, expect["repeated"]);
    }
    const std::optional<std::string> after =
        StoredClaimBytes(key);
    if (expect.contains("write")) {
      EXPECT_EQ(after != before, expect["write"]);
    }
    if (!expect.contains("record")) return;
    ASSERT_TRUE(after.has_value());
    StoredClaim stored;
    ASSERT_TRUE(DecodeClaim(key, *after, &stored).ok());
    ExpectClaimRecord(expect["record"], stored.rec);
  }

 protected:
  // Every case of `rule` that the cluster has built; the others skipped
  // by name. Fields a cluster answer does not carry (a decision's bucket)
  // are core's runner's.
  template <typename Runner>
  void RunRule(const std::string& rule,
               std::initializer_list<const char*> known, Runner runner) {
    size_t index = 0, ran = 0;
    std::map<std::string, int> skipped;
    core::cases::ForEachCase(rule, known,
                             [&](const json& c, const json& expect) {
                               ++index;
                               const std::string why = NotBuilt(c);
                               if (!why.empty()) {
                                 ++skipped[why];
                                 return;
                               }
                               ++ran;
                               (this->*runner)(c, expect, index);
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

TEST_F(CaseTables, Claims) {
  RunRule("claims",
          {"status", "message_has", "answer", "repeated", "write", "record"},
          &CaseTables::RunClaim);
}

TEST_F(CaseTables, Once) {
  RunRule("once",
          {"status", "message_has", "outcome", "applied", "shard", "bucket",
           "expires_at", "value", "remaining", "window_ends"},
          &CaseTables::Run);
}

TEST_F(CaseTables, Reset) {
  RunRule("reset",
          {"status", "message_has", "applied", "value", "remaining",
           "window_ends"},
          &CaseTables::RunReset);
}

TEST_F(CaseTables, Bounds) {
  RunRule("bounds",
          {"outcome", "applied", "value", "remaining", "window_ends",
           "reason_has", "room"},
          &CaseTables::RunBounds);
}

}  // namespace
}  // namespace tally::cluster
