// The counting rules' case tables (tests/core/cases/*.json) as test
// inputs: loading a rule's file, reading its counters, ops and markers
// into core/'s types, and checking an answer against a case's "expect".
// Shared by every runner of the tables: core/ alone (rules_cases_test.cc)
// and each backend (tests/cluster/case_tables_test.cc), so that a case
// means the same thing to all of them. The including target defines
// TALLY_CASES_DIR (the directory of the files).

#ifndef TALLY_TESTS_TESTUTIL_CASE_TABLE_H_
#define TALLY_TESTS_TESTUTIL_CASE_TABLE_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>

#include "core/buckets.h"
#include "core/claims.h"
#include "core/decide.h"
#include "core/holds.h"
#include "core/write_op.h"
#include "tally/status.h"
#include "tally/types.h"

namespace tally::core::cases {

using nlohmann::json;


inline json LoadCases(const std::string& rule) {
  const std::string path = std::string(TALLY_CASES_DIR) + "/" + rule + ".json";
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  json doc = json::parse(in, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(doc.is_discarded()) << path << " is not JSON";
  EXPECT_EQ(doc.value("rule", ""), rule) << path;
  EXPECT_TRUE(doc.contains("cases") && !doc["cases"].empty()) << path;
  return doc;
}

// Reads a field the case may leave out.
template <typename T>
T Get(const json& j, const char* field, T otherwise) {
  return j.contains(field) ? j[field].get<T>() : otherwise;
}

// Views into the case document, which outlives every use of them.
inline std::string_view View(const json& j, const char* field) {
  if (!j.contains(field)) return {};
  return j[field].get_ref<const std::string&>();
}

inline BucketWidth BucketNamed(const std::string& name) {
  if (name == "minute") return BucketWidth::kMinute;
  if (name == "hour") return BucketWidth::kHour;
  if (name == "day") return BucketWidth::kDay;
  EXPECT_EQ(name, "none") << "unknown bucket width";
  return BucketWidth::kNone;
}

inline CounterInfo CounterOf(const json& j) {
  CounterInfo c;
  c.name = Get<std::string>(j, "name", "c");
  c.id = 1;
  c.shards = Get<uint32_t>(j, "shards", 1);
  c.policy = Get<std::string>(j, "policy", "random") == "affinity"
                 ? ShardPolicy::kAffinity
                 : ShardPolicy::kRandom;
  c.keyed = Get<bool>(j, "keyed", false);
  c.dedupe_window_ms = Get<int64_t>(j, "dedupe_window_ms", 0);
  c.bucket = BucketNamed(Get<std::string>(j, "bucket", "none"));
  c.retention_ms = Get<int64_t>(j, "retention_ms", 0);
  c.bounds.has_min = j.contains("min");
  c.bounds.min = Get<int64_t>(j, "min", 0);
  c.bounds.has_max = j.contains("max");
  c.bounds.max = Get<int64_t>(j, "max", 0);
  c.sliding = Get<bool>(j, "sliding", false);
  return c;
}

inline WriteOp OpOf(const json& j) {
  WriteOp op;
  op.counter = "c";
  op.key = View(j, "key");
  op.event_id = View(j, "event_id");
  op.affinity_key = View(j, "affinity_key");
  op.delta = Get<int64_t>(j, "delta", 0);
  op.event_time_ms = Get<int64_t>(j, "event_time_ms", kEventTimeNow);
  op.once = Get<bool>(j, "once", false);
  op.saturate = Get<bool>(j, "saturate", false);
  op.reset = Get<bool>(j, "reset", false);
  return op;
}

inline FoundMarker MarkerFrom(const json& j) {
  FoundMarker m;
  m.found = true;
  m.delta = Get<int64_t>(j, "delta", 0);
  m.shard = Get<uint32_t>(j, "shard", 0);
  m.strict = Get<bool>(j, "strict", false);
  m.refused = Get<bool>(j, "refused", false);
  m.asked = Get<int64_t>(j, "asked", 0);
  m.value = Get<int64_t>(j, "value", 0);
  m.window_ends = Get<int64_t>(j, "window_ends", 0);
  m.remaining = Get<int64_t>(j, "remaining", 0);
  m.reset = Get<bool>(j, "reset", false);
  m.remaining_kept = Get<bool>(j, "remaining_kept", false);
  return m;
}

// The status's code as Status::ToString names it ("OK", "NotFound", ...).
inline std::string CodeName(const Status& s) {
  const std::string text = s.ToString();
  return text.substr(0, text.find(':'));
}

// The enum value of `E` (0..count-1) whose public name (OutcomeName,
// HoldStateName, ...) is `name`: the tables use the library's own names.
template <typename E, typename NameOf>
E Named(NameOf name_of, int count, const std::string& name) {
  for (int v = 0; v < count; ++v) {
    if (name == name_of(static_cast<E>(v))) return static_cast<E>(v);
  }
  ADD_FAILURE() << "no value is named " << name;
  return static_cast<E>(0);
}

// The expected status: its code and, when given, a part of its message.
// True when the case expects OK (and got it).
inline bool StatusAsExpected(const json& expect, const Status& s) {
  const std::string want = Get<std::string>(expect, "status", "OK");
  EXPECT_EQ(CodeName(s), want) << s.ToString();
  if (expect.contains("message_has")) {
    EXPECT_NE(s.message().find(expect["message_has"].get<std::string>()),
              std::string::npos)
        << "message: " << s.message();
  }
  return want == "OK" && s.ok();
}

// Compares each integer field the case names.
using Fields = std::initializer_list<std::pair<const char*, int64_t>>;
inline void ExpectFields(const json& expect, Fields fields) {
  for (const auto& [name, value] : fields) {
    if (expect.contains(name)) {
      EXPECT_EQ(value, expect[name].get<int64_t>()) << "field " << name;
    }
  }
}

// A reservation's state, and its call, by the names the tables use.
inline HoldState HoldStateNamed(const std::string& name) {
  return Named<HoldState>(HoldStateName, 5, name);
}
inline HoldCall HoldCallNamed(const std::string& name) {
  if (name == "reserve") return HoldCall::kReserve;
  if (name == "commit") return HoldCall::kCommit;
  EXPECT_EQ(name, "release") << "unknown reservation call";
  return HoldCall::kRelease;
}

// A case's stored reservation ("record") of `id`.
inline HoldRecord HoldRecordFrom(const json& r, std::string_view id,
                                 uint64_t counter_id) {
  HoldRecord h;
  h.reservation_id = std::string(id);
  h.counter_id = counter_id;
  h.units = r["units"].get<int64_t>();
  h.created_at_ms = Get<int64_t>(r, "created_at_ms", 0);
  h.expires_at_ms = Get<int64_t>(r, "expires_at_ms", 0);
  h.state = static_cast<uint8_t>(HoldStateNamed(r["state"].get<std::string>()));
  h.closed_at_ms = Get<int64_t>(r, "closed_at_ms", 0);
  return h;
}

// Compares the fields of a reservation that the case names.
inline void ExpectHoldRecord(const json& want, const HoldRecord& h) {
  if (want.contains("state")) {
    EXPECT_EQ(static_cast<HoldState>(h.state),
              HoldStateNamed(want["state"].get<std::string>()));
  }
  const Fields fields = {
      {"units", h.units},
      {"created_at_ms", h.created_at_ms},
      {"expires_at_ms", h.expires_at_ms},
      {"closed_at_ms", h.closed_at_ms}};
  ExpectFields(want, fields);
}

// claims.json: a stored record, a call's name and arguments (views into
// the case), and the record expected after the call.
inline uint8_t ClaimStateNamed(const std::string& name) {
  // Stored states: held, released or done (expired never is).
  const auto state = Named<ClaimState>(ClaimStateName, 4, name);
  EXPECT_NE(state, ClaimState::kExpired) << "a stored claim never is expired";
  return static_cast<uint8_t>(state);
}

inline ClaimRecord ClaimRecordOf(const json& j) {
  ClaimRecord r;
  r.state = ClaimStateNamed(j["state"].get<std::string>());
  r.token = j["token"].get<uint64_t>();
  r.holder = Get<std::string>(j, "holder", "");
  r.granted_at_ms = Get<int64_t>(j, "granted_at_ms", 0);
  r.lease_until_ms = Get<int64_t>(j, "lease_until_ms", 0);
  r.ended_at_ms = Get<int64_t>(j, "ended_at_ms", 0);
  r.result = Get<std::string>(j, "result", "");
  return r;
}

inline ClaimCall ClaimCallNamed(const std::string& name) {
  if (name == "claim") return ClaimCall::kClaim;
  if (name == "complete") return ClaimCall::kComplete;
  EXPECT_EQ(name, "release") << "unknown claim call";
  return ClaimCall::kRelease;
}

inline void ExpectClaimRecord(const json& want, const ClaimRecord& r) {
  if (want.contains("state")) {
    EXPECT_EQ(r.state, ClaimStateNamed(want["state"].get<std::string>()));
  }
  if (want.contains("holder")) {
    EXPECT_EQ(r.holder, want["holder"]);
  }
  if (want.contains("result")) {
    EXPECT_EQ(r.result, want["result"]);
  }
  const Fields fields = {
      {"token", static_cast<int64_t>(r.token)},
      {"granted_at_ms", r.granted_at_ms},
      {"lease_until_ms", r.lease_until_ms},
      {"ended_at_ms", r.ended_at_ms}};
  ExpectFields(want, fields);
}

inline ClaimArgs ClaimArgsOf(const json& a) {
  ClaimArgs args;
  args.holder = View(a, "holder");
  args.lease_ms = Get<int64_t>(a, "lease_ms", 0);
  args.token = Get<uint64_t>(a, "token", 0);
  args.result = View(a, "result");
  return args;
}

// Runs `run` on every case of `rule`, each traced by its name. An
// expected field the runner does not know fails the case: a misspelt
// field would otherwise be checked by nobody.
template <typename Run>
void ForEachCase(const std::string& rule,
                 std::initializer_list<const char*> known, const Run& run) {
  const json doc = LoadCases(rule);
  for (const json& c : doc["cases"]) {
    SCOPED_TRACE(rule + ": " + c.value("name", "(unnamed)"));
    ASSERT_TRUE(c.contains("expect"));
    for (const auto& field : c["expect"].items()) {
      EXPECT_NE(std::find_if(known.begin(), known.end(),
                             [&](const char* k) { return field.key() == k; }),
                known.end())
          << "unknown expected field " << field.key();
    }
    run(c, c["expect"]);
  }
}

}  // namespace tally::core::cases

#endif  // TALLY_TESTS_TESTUTIL_CASE_TABLE_H_
