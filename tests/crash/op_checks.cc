#include "crash/op_checks.h"

#include "crash/workload.h"
#include "tally/limits.h"
#include "testutil/exported.h"

namespace tally::crash {

Status ListAllKeys(Db* db, std::string_view name, std::vector<KeyValue>* out) {
  ListKeysOptions page;
  page.limit = kMaxListKeys;
  for (;;) {
    auto keys = db->ListKeys(name, page);
    if (!keys.ok()) return keys.status();
    out->insert(out->end(), keys->begin(), keys->end());
    if (keys->size() < page.limit) return Status::OK();
    page.start_after = keys->back().key;
  }
}

namespace {

const std::string kApplied = OutcomeName(Outcome::kApplied);
const std::string kDuplicate = OutcomeName(Outcome::kDuplicate);

std::string Answer(const Result<IncrementResult>& r) {
  if (!r.ok()) return r.status().ToString();
  return std::string(OutcomeName(r->outcome)) + ", value " +
         std::to_string(r->value) + ", applied " + std::to_string(r->applied);
}

}  // namespace

bool GaugeModel::Parse(std::istringstream* fields, Op* op) {
  *fields >> op->key >> op->kind >> op->id >> op->arg;
  return !fields->fail() &&
         (op->kind == "o" || op->kind == "p" || op->kind == "r");
}

void GaugeModel::Intent(std::istringstream* fields, const std::string& line,
                        CheckSink* sink) {
  Op op;
  if (!Parse(fields, &op)) {
    sink->Violation("ack log: malformed line '" + line + "'");
  } else if (!final_) {
    expected_.try_emplace(op.key, 0);
    pending_[op.key] = op;
  }
}

void GaugeModel::Ack(Db* db, std::istringstream* fields,
                     const std::string& line, CheckSink* sink) {
  Op op;
  std::string outcome;
  int64_t value = 0, applied = 0;
  if (!Parse(fields, &op) || !(*fields >> outcome >> value >> applied)) {
    sink->Violation("ack log: malformed line '" + line + "'");
    return;
  }
  sink->Acknowledged();
  if (!final_) {
    pending_.erase(op.key);
    Move(op, outcome, value, applied, sink);
  }
  if (op.kind == "p") return;
  // Asked again: its first answer, and nothing changes.
  const CounterRef ref(kGaugeCounter, op.key);
  auto before = db->ReadExact(ref);
  auto again = op.kind == "r" ? db->Reset(ref, op.id, op.arg)
                              : db->IncrementOnce(ref, op.id, op.arg);
  auto after = db->ReadExact(ref);
  if (!again.ok() || OutcomeName(again->outcome) != kDuplicate ||
      again->value != value || again->applied != applied || !before.ok() ||
      !after.ok() || *after != *before) {
    sink->Violation("acknowledged '" + line +
                    "' asked again: " + Answer(again) +
                    (before.ok() && after.ok() && *after != *before
                         ? ", and the value moved"
                         : ""));
  } else {
    sink->Pass();
  }
}

// The model moves by an acknowledged answer, which must be what the model
// says the call did.
void GaugeModel::Move(const Op& op, const std::string& outcome, int64_t value,
                      int64_t applied, CheckSink* sink) {
  int64_t& want = expected_[op.key];
  const std::string what = "gauge " + op.key + " " + op.kind + " " + op.id +
                           " " + std::to_string(op.arg) + " answered " +
                           outcome + ", value " + std::to_string(value) +
                           ", applied " + std::to_string(applied);
  if (outcome == kDuplicate && op.kind != "p" && counted_.count(op.id) != 0) {
    return;  // a redelivery: nothing changes
  }
  if (outcome != kApplied || (op.kind == "o" && applied != op.arg) ||
      (op.kind == "r" && (value != op.arg || applied != op.arg - want))) {
    sink->Violation(what + " where the key held " + std::to_string(want));
    return;
  }
  want = op.kind == "r" ? op.arg : want + op.arg;
  if (op.kind != "p") counted_.insert(op.id);
  sink->Pass();
}

// "" when the call in flight is whole or absent (moving the model to what
// it did), else what is wrong.
std::string GaugeModel::Resolve(Db* db, const Op& op) {
  const CounterRef ref(kGaugeCounter, op.key);
  int64_t& want = expected_[op.key];
  auto now = db->ReadExact(ref);
  if (!now.ok()) return "read: " + now.status().ToString();
  bool whole = *now == want;  // absent, or a redelivery
  if (op.kind == "p") {
    whole = whole || *now == want + op.arg;
  } else if (counted_.count(op.id) == 0) {
    auto marker = db->GetMarker(ref, op.id);
    if (marker.ok()) {
      whole = op.kind == "r"
                  ? marker->reset && marker->value == op.arg &&
                        marker->delta == op.arg - want && *now == op.arg
                  : marker->delta == op.arg && *now == want + op.arg;
    } else if (!marker.status().IsNotFound()) {
      return "marker: " + marker.status().ToString();
    }
  }
  if (!whole) {
    return "value " + std::to_string(*now) + " where it held " +
           std::to_string(want);
  }
  want = *now;
  return "";
}

void GaugeModel::Settle(Db* db, CheckSink* sink) {
  for (const auto& [key, op] : pending_) {
    ++in_flight_;
    const std::string problem = Resolve(db, op);
    if (problem.empty()) {
      sink->Pass();
    } else {
      sink->Violation("gauge " + key + ": the call in flight at the kill (" +
                      op.kind + " " + op.id + " " + std::to_string(op.arg) +
                      ") is neither whole nor absent: " + problem);
    }
  }
  pending_.clear();
  counted_.clear();
  CheckValues(db, sink);
}

void GaugeModel::CheckValues(Db* db, CheckSink* sink) {
  std::vector<KeyValue> keys;
  Status s = ListAllKeys(db, kGaugeCounter, &keys);
  if (!s.ok()) {
    if (!s.IsNotFound()) sink->Violation("gauge: list keys: " + s.ToString());
    return;
  }
  for (const KeyValue& kv : keys) {
    if (expected_.count(kv.key) == 0) {
      sink->Violation("gauge: key " + kv.key + " that no call wrote");
    }
  }
  for (const auto& [key, want] : expected_) {
    auto now = db->ReadExact({kGaugeCounter, key});
    if (!now.ok() || *now != want) {
      sink->Violation(
          "gauge " + key + ": value " +
          (now.ok() ? std::to_string(*now) : now.status().ToString()) +
          ", the acknowledged calls give " + std::to_string(want));
    } else {
      sink->Pass();
    }
  }
}

namespace {

const std::string kCompletedName = ClaimAnswerName(ClaimAnswer::kCompleted);
const std::string kStaleName = ClaimAnswerName(ClaimAnswer::kStaleToken);
const std::string kDoneName = ClaimAnswerName(ClaimAnswer::kDone);
const std::string kReleasedName = ClaimAnswerName(ClaimAnswer::kReleased);

std::string ClaimText(const Result<ClaimResult>& r) {
  if (!r.ok()) return r.status().ToString();
  return std::string(ClaimAnswerName(r->answer)) +
         (r->repeated ? " (repeated)" : "") + ", token " +
         std::to_string(r->claim.token) + ", result '" + r->claim.result + "'";
}

// What a ReleaseClaim of `token` answers with the claim stored as `now`;
// "" when it would release a claim that token holds (never after an
// acknowledged release or a stale or done answer).
std::string ReleaseAnswer(const ClaimInfo& now, uint64_t token) {
  if (now.state == ClaimState::kDone) return kDoneName;
  if (token < now.token) return kStaleName;
  if (now.state == ClaimState::kReleased) return kReleasedName;
  return "";
}

// A claim call's ack line (see CheckClaimAck).
struct ClaimAck {
  std::string key, holder, call, answer, result;
  uint64_t token = 0, claim_token = 0;
};

// The claim call of `ack` asked again; "" when it answers as it did (with
// the same token and result, unless its answer was stale), or, for a
// release, as the claim stored now says.
std::string AskClaimAgain(Db* db, const ClaimInfo& stored,
                          const ClaimAck& ack) {
  // Every branch below that does not return asks again.
  Result<ClaimResult> again = Status::NotFound("not asked again");
  std::string want = ack.answer;
  if (ack.call == "claim") {
    if (ack.answer != kDoneName) {
      // acquired or busy: a grant keeps its token for its holder alone.
      return ack.answer == ClaimAnswerName(ClaimAnswer::kAcquired) &&
                     stored.token == ack.claim_token &&
                     stored.holder != ack.holder
                 ? "its token granted to " + stored.holder + " too"
                 : "";
    }
    again = db->Claim(ack.key, "checker", kJobLeaseMs);
  } else if (ack.call == "complete") {
    again = db->CompleteClaim(ack.key, ack.token, "by-" + ack.holder,
                              JobCount(ack.key));
  } else {
    want = ReleaseAnswer(stored, ack.token);
    if (want.empty() || (ack.answer == kDoneName && want != kDoneName)) {
      return "stored " + std::string(ClaimStateName(stored.state)) +
             " with token " + std::to_string(stored.token);
    }
    again = db->ReleaseClaim(ack.key, ack.token);
  }
  bool same = again.ok() && ClaimAnswerName(again->answer) == want;
  if (same && want == kCompletedName) {
    same = again->repeated && again->counted.empty();  // not counted again
  }
  if (same && want == ack.answer && want != kStaleName) {
    same = again->claim.token == ack.claim_token &&
           again->claim.result == ack.result;
  }
  return same ? "" : "asked again: " + ClaimText(again);
}

}  // namespace

void CheckClaimAck(Db* db, std::istringstream* fields, const std::string& line,
                   CheckSink* sink) {
  ClaimAck ack;
  *fields >> ack.key >> ack.holder >> ack.call >> ack.token >> ack.answer >>
      ack.claim_token >> ack.result;
  if (fields->fail() || (ack.call != "claim" && ack.call != "complete" &&
                         ack.call != "release")) {
    sink->Violation("ack log: malformed line '" + line + "'");
    return;
  }
  if (ack.result == "-") ack.result.clear();
  sink->Acknowledged();
  auto stored = db->GetClaim(ack.key);
  std::string problem;
  if (!stored.ok()) {
    problem = "lost: " + stored.status().ToString();
  } else if (stored->token < ack.claim_token) {
    problem = "its token went back to " + std::to_string(stored->token);
  } else {
    problem = AskClaimAgain(db, *stored, ack);
  }
  if (problem.empty()) {
    sink->Pass();
  } else {
    sink->Violation("acknowledged '" + line + "': " + problem);
  }
}

void CheckClaimsCounted(Db* db, CheckSink* sink) {
  if (!db->DescribeCounter(kJobCounter).ok()) return;  // not created yet
  std::set<std::string> done, counted;
  ListClaimsOptions page;
  page.filter = ClaimFilter::kDone;
  page.limit = kMaxListClaims;
  for (;;) {
    auto claims = db->ListClaims(page);
    if (!claims.ok()) {
      sink->Violation("list claims: " + claims.status().ToString());
      return;
    }
    for (const ClaimInfo& c : *claims) done.insert(c.key);
    if (claims->size() < page.limit) break;
    page.start_after = claims->back().key;
  }
  std::vector<MarkerInfo> markers;
  Status s = test::ReadExportedMarkers(db, kJobCounter, 1000, &markers);
  auto value = db->ReadExact(kJobCounter);
  if (!s.ok() || !value.ok()) {
    sink->Violation(std::string(kJobCounter) + ": " +
                    (s.ok() ? value.status() : s).ToString());
    return;
  }
  for (const MarkerInfo& m : markers) {
    if (m.delta == 1) counted.insert(m.event_id);
  }
  if (done != counted || markers.size() != counted.size() ||
      *value != static_cast<int64_t>(done.size())) {
    sink->Violation(std::to_string(done.size()) + " claims done, " +
                    std::to_string(markers.size()) + " events of " +
                    kJobCounter + ", which holds " + std::to_string(*value) +
                    ": done and counted disagree");
  } else {
    sink->Pass();
  }
}

}  // namespace tally::crash
