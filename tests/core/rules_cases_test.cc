// The counting rules' case tables (tests/core/cases/*.json) run against
// core/: each file is one rule's cases as data, inputs and the expected
// answer and new state. The engine runs these functions; a second backend
// (the cluster's server-side scripts) runs the same files, so two backends
// cannot disagree on a case. This binary links core/ and tally::Status
// only: no RocksDB, no schema/, no engine/.

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "core/bounds.h"
#include "core/buckets.h"
#include "core/claims.h"
#include "core/decide.h"
#include "core/holds.h"
#include "core/write_op.h"
#include "testutil/case_table.h"

namespace tally::core {
namespace {

using namespace cases;  // NOLINT: the tables' vocabulary

void ExpectDecision(const json& expect, const Decision& d) {
  if (expect.contains("outcome")) {
    EXPECT_EQ(OutcomeName(d.outcome), expect["outcome"].get<std::string>());
  }
  const Fields fields = {
      {"applied", d.applied},       {"shard", d.shard},
      {"bucket", d.bucket},         {"expires_at", d.expires_at},
      {"value", d.value},           {"remaining", d.remaining},
      {"window_ends", d.window_ends}};
  ExpectFields(expect, fields);
}

TEST(RuleCases, Once) {
  ForEachCase(
      "once",
      {"status", "message_has", "outcome", "applied", "shard", "bucket", "expires_at", "value", "remaining", "window_ends"},
      [](const json& c, const json& expect) {
    const CounterInfo counter = CounterOf(c["counter"]);
    const WriteOp op = OpOf(c["op"]);
    const FoundMarker marker =
        c.contains("marker") ? MarkerFrom(c["marker"]) : FoundMarker{};
    Decision d;
    Status s = CheckArguments(op);
    if (s.ok()) s = PlaceOp(counter, op, &d);
    if (s.ok()) s = Decide(counter, op, marker, c["now"].get<int64_t>(), &d);
    if (StatusAsExpected(expect, s)) ExpectDecision(expect, d);
  });
}

// A quota's previous window, when the case gives one.
bool PreviousOf(const json& c, PreviousWindow* previous) {
  if (!c.contains("previous")) return false;
  previous->used = c["previous"]["used"].get<int64_t>();
  previous->elapsed = c["previous"]["elapsed"].get<int64_t>();
  return true;
}

TEST(RuleCases, Bounds) {
  ForEachCase(
      "bounds",
      {"outcome", "applied", "value", "remaining", "window_ends", "reason_has", "room"},
      [](const json& c, const json& expect) {
    const CounterInfo counter = CounterOf(c["counter"]);
    const WriteOp op = OpOf(c["op"]);
    const int64_t current = c["current"].get<int64_t>();
    const int64_t held = Get<int64_t>(c, "held", 0);
    PreviousWindow window;
    const PreviousWindow* previous = PreviousOf(c, &window) ? &window : nullptr;
    Decision d;
    d.bucket = Get<int64_t>(c, "bucket", kNoBucket);
    CheckBounds(counter, op, current, previous, &d, held);
    ExpectDecision(expect, d);
    if (expect.contains("reason_has")) {
      ASSERT_EQ(d.outcome, Outcome::kRefused);
      const std::string reason =
          RefusalReason(counter, op, current, previous, held);
      EXPECT_NE(reason.find(expect["reason_has"].get<std::string>()),
                std::string::npos)
          << reason;
    }
    if (expect.contains("room")) {
      EXPECT_EQ(RoomNow(counter, current, previous),
                expect["room"].get<int64_t>());
    }
  });
}

TEST(RuleCases, Reset) {
  ForEachCase(
      "reset",
      {"status", "message_has", "applied", "value", "remaining", "window_ends"},
      [](const json& c, const json& expect) {
    const CounterInfo counter = CounterOf(c["counter"]);
    WriteOp op;
    op.counter = "c";
    op.key = View(c, "key");
    op.event_id = "reset-1";
    op.once = op.reset = true;
    op.delta = c["to"].get<int64_t>();
    PreviousWindow window;
    const PreviousWindow* previous = PreviousOf(c, &window) ? &window : nullptr;
    Decision d;
    d.bucket = Get<int64_t>(c, "bucket", kNoBucket);
    Status s = AnswerReset(counter, op, c["current"].get<int64_t>(), previous,
                           &d, Get<int64_t>(c, "held", 0));
    if (StatusAsExpected(expect, s)) ExpectDecision(expect, d);
  });
}

TEST(RuleCases, Claims) {
  ForEachCase(
      "claims",
      {"status", "message_has", "answer", "repeated", "write", "record"},
      [](const json& c, const json& expect) {
    const ClaimCall call = ClaimCallNamed(c["call"].get<std::string>());
    const ClaimArgs args = ClaimArgsOf(c["args"]);
    const bool found = c.contains("record");
    ClaimRecord rec = found ? ClaimRecordOf(c["record"]) : ClaimRecord{};
    ClaimResult result;
    bool write = false;
    Status s = CheckClaimCall(call, "job", args);
    if (s.ok()) {
      s = ClaimStep(call, "job", args, found, c["now"].get<int64_t>(), &rec,
                    &result, &write);
    }
    if (!StatusAsExpected(expect, s)) return;
    EXPECT_EQ(ClaimAnswerName(result.answer), expect["answer"].get<std::string>());
    if (expect.contains("repeated")) {
      EXPECT_EQ(result.repeated, expect["repeated"]);
    }
    if (expect.contains("write")) {
      EXPECT_EQ(write, expect["write"]);
    }
    if (expect.contains("record")) ExpectClaimRecord(expect["record"], rec);
  });
}

TEST(RuleCases, Holds) {
  ForEachCase(
      "holds",
      {"status", "message_has", "outcome", "state", "put_new", "close_found", "new", "closed", "take", "value", "held", "open", "next_expiry"},
      [](const json& c, const json& expect) {
    const CounterInfo counter = CounterOf(c["counter"]);
    const HoldCall call = HoldCallNamed(c["call"].get<std::string>());
    const std::string_view id = View(c, "id");
    const int64_t units = Get<int64_t>(c, "units", 0);
    const int64_t hold_for = Get<int64_t>(c, "hold_for_ms", 0);
    const bool known = c.contains("record");
    HoldRecord h;
    if (known) h = HoldRecordFrom(c["record"], id, counter.id);
    int64_t value = c["value"].get<int64_t>();
    HeldNow held;
    held.held = c["held"].get<int64_t>();
    held.open = c["open"].get<uint64_t>();
    held.next_expiry = Get<int64_t>(c, "next_expiry", 0);
    HoldStep step;
    Status s = CheckHoldCall(call, id, units, hold_for);
    if (s.ok()) {
      s = HoldStepOf(call, counter, "", id, units, hold_for, known,
                     Get<bool>(c, "open_record", false),
                     c["now"].get<int64_t>(), &h, &value, &held, &step);
    }
    if (!StatusAsExpected(expect, s)) return;
    EXPECT_EQ(OutcomeName(step.outcome), expect["outcome"].get<std::string>());
    EXPECT_EQ(step.state, HoldStateNamed(expect["state"].get<std::string>()));
    if (expect.contains("put_new")) {
      EXPECT_EQ(step.put_new, expect["put_new"]);
    }
    if (expect.contains("close_found")) {
      EXPECT_EQ(step.close_found, expect["close_found"]);
    }
    if (expect.contains("new")) ExpectHoldRecord(expect["new"], h);
    if (expect.contains("closed")) {
      ASSERT_TRUE(step.close_found);
      ExpectHoldRecord(expect["closed"], step.closed);
    }
    const Fields fields = {
        {"take", step.take},
        {"value", value},
        {"held", held.held},
        {"open", static_cast<int64_t>(held.open)},
        {"next_expiry", held.next_expiry}};
    ExpectFields(expect, fields);
  });
}

}  // namespace
}  // namespace tally::core
