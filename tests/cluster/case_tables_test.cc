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
// event id's), then the op runs with the clock at the case's "now". A
// case's reservations (held units, a stored reservation) are planted as
// the backend stores them (cluster/records.h) and the call runs by the
// public API; its answer, ReadHeld and GetReservation afterwards are
// compared with the case's. Each
// answer is compared with the case's: status (code and message part),
// outcome, applied, shard, the marker's expiry, and the counter's value
// afterwards (the planted delta plus what was applied; a bucketed
// counter's in the case's bucket, a quota's in its window). Every case of
// each file runs; the test fails if a rule file has none.

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
#include "core/holds.h"
#include "core/shard_picker.h"
#include "tally/tally.h"
#include "testutil/case_table.h"

namespace tally::cluster {
namespace {

using core::cases::json;

// A quota case's window: its "bucket", and the clock in it ("previous"'s
// elapsed for a sliding quota's, else the window's start).
struct Window {
  int64_t start = core::kNoBucket;
  int64_t width = 0;
  int64_t previous_used = 0;
  int64_t now = 1'000'000;  // a case without a window: any time
};
Window WindowOf(const json& c, const CounterInfo& counter) {
  Window w;
  if (!c.contains("bucket")) return w;
  w.start = c["bucket"].get<int64_t>();
  w.width = BucketWidthMs(counter.bucket);
  w.now = w.start;
  if (c.contains("previous")) {
    w.previous_used = c["previous"]["used"].get<int64_t>();
    w.now += c["previous"]["elapsed"].get<int64_t>();
  }
  return w;
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
  void Plant(const CounterInfo& c, const core::WriteOp& op, const json& m,
             int64_t bucket) {
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
    std::vector<std::string> args = {
        "FCALL", "tally_write", "6", KeySpace::Live(tag),
        KeySpace::MarkerIndex(tag), KeySpace::KeyIndex(tag),
        KeySpace::ValueIn(tag, op.key, bucket), KeySpace::Marker(tag, name),
        KeySpace::BucketIndex(tag, op.key), "0", "1", "o", "4", "5",
        std::to_string(found.delta), EncodeMarker(info), "0", name, "0",
        std::string(op.key), "0"};
    Call(tag, WithBucket(std::move(args), bucket, 6));
  }

  // tally_write's `args` (value key KEYS[4], bucket index KEYS[`index`],
  // the guards last) with the entry that indexes `bucket` (kNoBucket:
  // none).
  static std::vector<std::string> WithBucket(std::vector<std::string> args,
                                             int64_t bucket, int index) {
    if (bucket != core::kNoBucket) {
      args.insert(args.end(), {"1", "4", std::to_string(index),
                               std::to_string(bucket), "0", "0"});
    }
    return args;
  }

  // Creates the case's counter as counter `name`.
  void Create(const json& c, const std::string& name, CounterInfo* counter) {
    const CounterInfo want = core::cases::CounterOf(c["counter"]);
    CounterSpec spec{want.shards};
    spec.policy = want.policy;
    spec.keyed = want.keyed;
    spec.dedupe_window_ms = want.dedupe_window_ms;
    spec.bounds = want.bounds;
    spec.bucket = want.bucket;
    spec.retention_ms = want.retention_ms;
    spec.sliding = want.sliding;
    const Status s = db_->CreateCounter(name, spec);
    ASSERT_TRUE(s.ok()) << s.ToString();
    *counter = db_->DescribeCounter(name).value();
  }

  // Creates the case's counter as counter "c" (the name the messages of
  // the cases give), afresh.
  void CreateC(const json& c, CounterInfo* counter) {
    const Status dropped = db_->DeleteCounter("c");
    ASSERT_TRUE(dropped.ok() || dropped.IsNotFound()) << dropped.ToString();
    ASSERT_NO_FATAL_FAILURE(Create(c, "c", counter));
  }

  // Adds `delta` to `key`'s value in shard 0 (in `bucket`, kNoBucket:
  // none) with a plain op of tally_write, unchecked (a strict case's
  // current value may lie outside its bounds).
  void Plant(const CounterInfo& c, std::string_view key, int64_t delta,
             int64_t bucket = core::kNoBucket) {
    const std::string tag = keys_->Tag(c, 0, key);
    std::vector<std::string> args = {
        "FCALL", "tally_write", "5", KeySpace::Live(tag),
        KeySpace::MarkerIndex(tag), KeySpace::KeyIndex(tag),
        KeySpace::ValueIn(tag, key, bucket), KeySpace::BucketIndex(tag, key),
        "0", "1", "p", "4", "0", std::to_string(delta), "", "0", "", "0",
        std::string(key), "0"};
    Call(tag, WithBucket(std::move(args), bucket, 5));
  }

  // A quota case's key as the case gives it: "current" in its window,
  // "previous"'s use in the window before; the clock in the window.
  void PlantWindow(const json& c, const CounterInfo& counter,
                   std::string_view key, const Window& w) {
    const int64_t current = c["current"].get<int64_t>();
    if (w.start == core::kNoBucket) {
      Plant(counter, key, current);
    } else {
      Plant(counter, key, current, w.start);
      if (w.previous_used != 0) {
        Plant(counter, key, w.previous_used, w.start - w.width);
      }
    }
    clock_.Set(w.now);
  }

  // What the case's key holds after it: its window's use for a quota.
  int64_t ValueAfter(const CounterRef& ref, const Window& w) {
    if (w.start == core::kNoBucket) return db_->ReadExact(ref).value();
    return db_->ReadRange(ref, w.start, w.start + w.width).value();
  }

  // Stores `key`'s open holds: `held` units in `open` reservations, each
  // ending at `ends` (the first holds what the others, one unit each,
  // leave), beside `extra` (a stored reservation still held).
  void PlantHeld(const CounterInfo& c, std::string_view key, int64_t held,
                 uint64_t open, int64_t ends,
                 std::vector<core::HoldRecord> extra = {}) {
    ASSERT_TRUE(held >= static_cast<int64_t>(open) && (open > 0 || held == 0))
        << "a case's held units must fill its open reservations";
    for (uint64_t i = 0; i < open; ++i) {
      core::HoldRecord h;
      h.reservation_id = "planted-" + std::to_string(i);
      h.units = i == 0 ? held - static_cast<int64_t>(open - 1) : 1;
      h.expires_at_ms = ends;
      extra.push_back(std::move(h));
    }
    if (extra.empty()) return;
    const std::string tag = keys_->Tag(c, 0, key);
    Set(tag, KeySpace::Holds(tag, key), EncodeOpenHolds(extra));
  }

  // A bounds or reset case's "held" units (one reservation, held past the
  // case's clock).
  void PlantHeld(const CounterInfo& c, std::string_view key, const json& k) {
    const int64_t held = k.value("held", int64_t{0});
    PlantHeld(c, key, held, held > 0 ? 1 : 0, 2'000'000);
  }

  // Stores a reservation key of `tag` (open holds, a record) as the
  // backend does: with its entry in the tag's index, which deletes read.
  void Set(const std::string& tag, const std::string& key,
           const std::string& value) {
    Command set, index;
    set.args = {"SET", key, value};
    index.args = {"ZADD", KeySpace::HoldIndex(tag), "0",
                  key.substr(tag.size() + 1)};
    set.slot = index.slot = ClusterClient::SlotOf(tag);
    std::vector<Reply> replies;
    ASSERT_TRUE(client_->Run({set, index}, &replies).ok());
    ASSERT_EQ(replies[0].kind, Reply::Kind::kStatus) << replies[0].str;
    ASSERT_EQ(replies[1].kind, Reply::Kind::kInteger) << replies[1].str;
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
    const int64_t now = c["now"].get<int64_t>();
    const int64_t width = BucketWidthMs(counter.bucket);
    // A planted count of a bucketed counter: in the bucket of now.
    const int64_t planted_in =
        width == 0 ? core::kNoBucket : core::BucketStart(now, width);
    if (c.contains("marker")) {
      ASSERT_NO_FATAL_FAILURE(Plant(counter, op, c["marker"], planted_in));
      planted = c["marker"].value("delta", int64_t{0});
    }
    clock_.Set(now);
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
    if (expect.contains("bucket") && width != 0) {
      // Counted in the case's bucket: a range read of it finds the count.
      const int64_t b = expect["bucket"].get<int64_t>();
      EXPECT_EQ(db_->ReadRange(ref, b, b + width).value(),
                counted + (b == planted_in ? planted : 0))
          << "the count in bucket " << b;
    }
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
    const Window w = WindowOf(c, counter);
    ASSERT_NO_FATAL_FAILURE(PlantWindow(c, counter, op.key, w));
    if (expect.contains("room")) {
      // What ReadQuota answers before the op: the room of `current`.
      const Result<QuotaState> q = db_->ReadQuota(CounterRef(name, op.key));
      ASSERT_TRUE(q.ok()) << q.status().ToString();
      EXPECT_EQ(q.value().remaining, expect["room"].get<int64_t>());
    }
    ASSERT_NO_FATAL_FAILURE(PlantHeld(counter, op.key, c));
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
    const CounterRef ref(name, op.key);
    EXPECT_EQ(ValueAfter(ref, w), current + got.applied)
        << "the counter's value after the case";
  }

  // Runs one case of holds.json on counter "c" (the name its messages
  // give), created afresh: the key's value, its open holds ("held" units
  // in "open" reservations, the case's stored record among them when held
  // at "now"; the others ending at "next_expiry", else long after) and
  // the stored record are planted, the call runs, and its answer, then
  // ReadHeld and GetReservation, are the case's.
  void RunHolds(const json& c, const json& expect, size_t) {
    CounterInfo counter;
    ASSERT_NO_FATAL_FAILURE(CreateC(c, &counter));
    const std::string id(core::cases::View(c, "id"));
    const int64_t now = c["now"].get<int64_t>();
    ASSERT_NO_FATAL_FAILURE(Plant(counter, "", c["value"].get<int64_t>()));
    int64_t held = c["held"].get<int64_t>();
    uint64_t open = c["open"].get<uint64_t>();
    std::vector<core::HoldRecord> stored;
    if (c.contains("record")) {
      const core::HoldRecord h =
          core::cases::HoldRecordFrom(c["record"], id, counter.id);
      const std::string tag = keys_->Tag(counter, 0, "");
      ASSERT_NO_FATAL_FAILURE(Set(
          tag, KeySpace::Reservation(tag, KeySpace::MarkerName("", id)),
          EncodeHold(h)));
      if (c.value("open_record", false) &&
          core::HoldStateAt(h, now) == HoldState::kHeld) {
        stored.push_back(h);  // one of the open ones
        held -= h.units;
        --open;
      }
    }
    ASSERT_NO_FATAL_FAILURE(PlantHeld(counter, "", held, open,
                                      c.value("next_expiry", now + 1'000'000),
                                      std::move(stored)));
    clock_.Set(now);
    ASSERT_NO_FATAL_FAILURE(CallHolds(c, expect, id));
  }

  // The call of a holds.json case, its answer and what is stored after.
  void CallHolds(const json& c, const json& expect, const std::string& id) {
    const auto call = [&]() -> Result<ReservationResult> {
      switch (core::cases::HoldCallNamed(c["call"].get<std::string>())) {
        case core::HoldCall::kReserve:
          return db_->Reserve("c", id, c.value("units", int64_t{0}),
                              c.value("hold_for_ms", int64_t{0}));
        case core::HoldCall::kCommit:
          return db_->CommitReservation("c", id);
        case core::HoldCall::kRelease:
          break;
      }
      return db_->ReleaseReservation("c", id);
    };
    const Result<ReservationResult> r = call();
    if (!core::cases::StatusAsExpected(expect, r.status())) return;
    EXPECT_EQ(OutcomeName(r.value().outcome),
              expect["outcome"].get<std::string>());
    EXPECT_EQ(r.value().state,
              core::cases::HoldStateNamed(expect["state"].get<std::string>()));
    const HeldValue held = db_->ReadHeld("c").value();
    core::cases::ExpectFields(
        expect, {{"value", held.value},
                 {"held", held.held},
                 {"open", static_cast<int64_t>(held.open)},
                 {"next_expiry", held.next_expiry_ms}});
    if (expect.contains("take")) {
      EXPECT_EQ(c["value"].get<int64_t>() - held.value,
                expect["take"].get<int64_t>())
          << "units taken from the value";
    }
    EXPECT_EQ(r.value().value, held.value);
    EXPECT_EQ(r.value().available, held.value - held.held);
    // What the call stored: the new record, or the found one closed.
    for (const char* part : {"new", "closed"}) {
      if (!expect.contains(part)) continue;
      const Result<ReservationInfo> info = db_->GetReservation("c", id);
      ASSERT_TRUE(info.ok()) << info.status().ToString();
      core::HoldRecord h;
      h.units = info.value().units;
      h.created_at_ms = info.value().created_at_ms;
      h.expires_at_ms = info.value().expires_at_ms;
      h.state = static_cast<uint8_t>(info.value().state);
      h.closed_at_ms = info.value().closed_at_ms;
      core::cases::ExpectHoldRecord(expect[part], h);
    }
  }

  // Runs one case of reset.json on counter "c": the key holds "current"
  // (planted) and "held" units in a reservation, a reset to "to" runs, and
  // its answer (or refusal) and the value afterwards are the case's.
  void RunReset(const json& c, const json& expect, size_t) {
    const std::string name = "c";
    CounterInfo counter;
    ASSERT_NO_FATAL_FAILURE(CreateC(c, &counter));
    const std::string key = c.value("key", "");
    const int64_t current = c["current"].get<int64_t>();
    const Window w = WindowOf(c, counter);
    ASSERT_NO_FATAL_FAILURE(PlantWindow(c, counter, key, w));
    ASSERT_NO_FATAL_FAILURE(PlantHeld(counter, key, c));
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
    EXPECT_EQ(ValueAfter(CounterRef(name, key), w), current + applied)
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
  // Every case of `rule`. Fields a cluster answer does not carry (a
  // decision's bucket) are core's runner's.
  template <typename Runner>
  void RunRule(const std::string& rule,
               std::initializer_list<const char*> known, Runner runner) {
    size_t ran = 0;
    core::cases::ForEachCase(rule, known,
                             [&](const json& c, const json& expect) {
                               (this->*runner)(c, expect, ++ran);
                             });
    std::printf("%s: %zu cases ran on the cluster\n", rule.c_str(), ran);
    EXPECT_GT(ran, 0u);
  }

  test::TestClock clock_;  // each case sets its "now"
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

TEST_F(CaseTables, Holds) {
  RunRule("holds",
          {"status", "message_has", "outcome", "state", "put_new",
           "close_found", "new", "closed", "take", "value", "held", "open",
           "next_expiry"},
          &CaseTables::RunHolds);
}

TEST_F(CaseTables, Bounds) {
  RunRule("bounds",
          {"outcome", "applied", "value", "remaining", "window_ends",
           "reason_has", "room"},
          &CaseTables::RunBounds);
}

}  // namespace
}  // namespace tally::cluster
