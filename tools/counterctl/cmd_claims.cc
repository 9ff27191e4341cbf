// claims list | show | release: the claims of a database (docs/claims.md),
// for an operator. list and show open the database read-only (they answer
// next to a live app); release needs it writable.
//
//   claims list [--held | --done] [--limit N] [--after KEY] [--json]
//     one line per claim in key order, "KEY state=S token=T holder=H"
//     then "lease_until=ISO" while held or expired, "ended_at=ISO" once
//     released or done, and "result=R" when done; at most --limit
//     (default 100, 1..kMaxListClaims) after --after; a last line
//     "(more: --after KEY)" when the page is full.
//   claims show KEY [--json]
//     one claim as "name: value" lines (key, state, token, holder,
//     granted_at, lease_until, ended_at: `none` until it ends, result:
//     `none` unless done). NotFound (exit 1) for a key never claimed.
//   claims release KEY --token T [--json]
//     gives the claim up for its holder (a stuck worker): the next Claim
//     gets a higher token, so the stuck one's completion is refused.
//     One line, the answer and the claim after it: "released token=3
//     state=released". Every answer exits 0 (stale_token and done too:
//     they are answers, and nothing changed).
//
// --json: a claim is {"key", "state", "token", "holder", "granted_at_ms",
// "granted_at", "lease_until_ms", "lease_until", "ended_at_ms",
// "ended_at" (null until it ends), "result" (null unless done)}; list
// prints {"claims": [...], "next_after": KEY or null}, release
// {"answer", "repeated", "claim": {...}}.

#include <iostream>
#include <memory>
#include <optional>

#include "commands.h"
#include "json_output.h"
#include "tally/limits.h"
#include "tally/types.h"

namespace counterctl {
namespace {

Json ClaimJson(const tally::ClaimInfo& c) {
  const bool done = c.state == tally::ClaimState::kDone;
  Json j = {{"key", c.key},
            {"state", tally::ClaimStateName(c.state)},
            {"token", c.token},
            {"holder", c.holder},
            {"result", done ? Json(c.result) : Json(nullptr)}};
  SetTime(&j, "granted_at", c.granted_at_ms);
  SetTime(&j, "lease_until", c.lease_until_ms);
  SetTimeOrNull(&j, "ended_at", c.ended_at_ms != 0, c.ended_at_ms);
  return j;
}

// "state=S token=T holder=H" and the times and result that apply.
std::string ClaimLine(const tally::ClaimInfo& c) {
  std::string line = std::string("state=") + tally::ClaimStateName(c.state) +
                     " token=" + std::to_string(c.token) +
                     " holder=" + Escaped(c.holder);
  if (c.ended_at_ms == 0) {
    line += " lease_until=" + FormatUtcMillis(c.lease_until_ms);
  } else {
    line += " ended_at=" + FormatUtcMillis(c.ended_at_ms);
  }
  if (c.state == tally::ClaimState::kDone) line += " result=" + Escaped(c.result);
  return line;
}

int List(tally::Db* db, const ClaimsArgs& args) {
  std::optional<uint64_t> limit = ParseUint64(args.limit);
  if (!limit || *limit < 1 || *limit > tally::kMaxListClaims) {
    return UsageError("--limit " + Printable(args.limit) +
                      ": expected an integer in 1.." +
                      std::to_string(tally::kMaxListClaims));
  }
  tally::ListClaimsOptions o;
  o.limit = *limit;
  o.start_after = args.after;
  o.filter = args.held   ? tally::ClaimFilter::kHeld
             : args.done ? tally::ClaimFilter::kDone
                         : tally::ClaimFilter::kAll;
  tally::Result<std::vector<tally::ClaimInfo>> claims = db->ListClaims(o);
  if (!claims.ok()) return Fail(claims.status());
  const bool full = claims->size() == o.limit;
  if (args.json) {
    Json list = Json::array();
    for (const tally::ClaimInfo& c : *claims) list.push_back(ClaimJson(c));
    PrintJson(Json{{"claims", list},
                   {"next_after",
                    full ? Json(claims->back().key) : Json(nullptr)}});
    return kExitOk;
  }
  for (const tally::ClaimInfo& c : *claims) {
    std::cout << Escaped(c.key) << " " << ClaimLine(c) << "\n";
  }
  if (full) std::cout << "(more: --after " << Escaped(claims->back().key) << ")\n";
  return kExitOk;
}

int Show(tally::Db* db, const ClaimsArgs& args) {
  tally::Result<tally::ClaimInfo> c = db->GetClaim(args.key);
  if (!c.ok()) return Fail(c.status());
  if (args.json) {
    PrintJson(ClaimJson(*c));
    return kExitOk;
  }
  std::cout << "key: " << Escaped(c->key) << "\n"
            << "state: " << tally::ClaimStateName(c->state) << "\n"
            << "token: " << c->token << "\n"
            << "holder: " << Escaped(c->holder) << "\n"
            << "granted_at: " << FormatUtcMillis(c->granted_at_ms) << "\n"
            << "lease_until: " << FormatUtcMillis(c->lease_until_ms) << "\n"
            << "ended_at: "
            << (c->ended_at_ms != 0 ? FormatUtcMillis(c->ended_at_ms) : "none")
            << "\n"
            << "result: "
            << (c->state == tally::ClaimState::kDone ? Escaped(c->result)
                                                      : "none")
            << "\n";
  return kExitOk;
}

int Release(tally::Db* db, const ClaimsArgs& args) {
  std::optional<uint64_t> token = ParseUint64(args.token);
  if (!token || *token < 1) {
    return UsageError("--token " + Printable(args.token) +
                      ": expected a token, an integer of at least 1 "
                      "(claims show KEY prints the current one)");
  }
  tally::Result<tally::ClaimResult> r = db->ReleaseClaim(args.key, *token);
  if (!r.ok()) return Fail(r.status());
  if (args.json) {
    PrintJson(Json{{"answer", tally::ClaimAnswerName(r->answer)},
                   {"repeated", r->repeated},
                   {"claim", ClaimJson(r->claim)}});
    return kExitOk;
  }
  std::cout << tally::ClaimAnswerName(r->answer)
            << (r->repeated ? " (repeated)" : "") << " " << ClaimLine(r->claim)
            << "\n";
  return kExitOk;
}

}  // namespace

int RunClaims(const GlobalArgs& global, const ClaimsArgs& args) {
  const bool write = args.action == "release";
  std::unique_ptr<tally::Db> db;
  // A claim's completion is the marker of a side effect (kReadMarkers).
  tally::Status s = write ? OpenDb(global, OpenMode::kWrite, &db)
                          : OpenDb(global, OpenMode::kRead, &db,
                                   tally::kReadMarkers);
  if (!s.ok()) return Fail(s);
  if (args.action == "list") return List(db.get(), args);
  if (args.action == "show") return Show(db.get(), args);
  return Release(db.get(), args);
}

}  // namespace counterctl
