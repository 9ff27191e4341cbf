// Reservations: units of a strict counter with a minimum and no time
// buckets (one counter, or one --key of a keyed one) held for a while, then
// taken or given back (docs/design.md, "Reservations"). Every call is
// idempotent by (counter, key, reservation id).
//
//   reserve NAME --id RID --units N --hold-for DURATION   Db::Reserve
//   commit NAME --id RID                                  Db::CommitReservation
//   release NAME --id RID                                 Db::ReleaseReservation
//
// each print one line, the outcome and the reservation after the call:
// "applied state=held units=3 expires_at=2026-...Z value=10 available=7"
// (value: the key's value now; available: the value less what open
// reservations hold). Every outcome exits 0, `refused` too (too few units
// available, or a commit of a released or expired one): a refusal is an
// answer, as for incr. --json: {"counter", "key" (with --key),
// "reservation_id", "outcome", "state", "units", "expires_at_ms",
// "expires_at", "value", "available"}.
//
//   reservation NAME --id RID                             Db::GetReservation
//
// one reservation as stored, as "key: value" lines (counter, key,
// reservation_id, state, units, created_at, expires_at, closed_at: `none`
// while held); read-only. --json: {"counter", "key", "reservation_id",
// "state", "units", "created_at_ms", "created_at", "expires_at_ms",
// "expires_at", "closed_at_ms", "closed_at"}, closed_at* null while held.
//
// An unknown reservation id is NotFound (exit 1) for all but reserve; a
// counter that takes no reservations (sharded, no minimum, or with time
// buckets) is InvalidArgument (exit 1): both the engine's messages.

#include <iostream>
#include <memory>
#include <optional>

#include "commands.h"
#include "json_output.h"
#include "tally/limits.h"
#include "tally/types.h"

namespace counterctl {
namespace {

int PrintResult(const std::string& name, const KeyArg& key,
                const std::string& id, bool json,
                const tally::ReservationResult& r) {
  if (json) {
    Json doc = {{"counter", name},
                {"reservation_id", id},
                {"outcome", tally::OutcomeName(r.outcome)},
                {"state", tally::HoldStateName(r.state)},
                {"units", r.units},
                {"value", r.value},
                {"available", r.available}};
    if (key.given) doc["key"] = key.value;
    SetTime(&doc, "expires_at", r.expires_at_ms);
    PrintJson(doc);
    return kExitOk;
  }
  std::cout << tally::OutcomeName(r.outcome)
            << " state=" << tally::HoldStateName(r.state)
            << " units=" << r.units
            << " expires_at=" << FormatUtcMillis(r.expires_at_ms)
            << " value=" << r.value << " available=" << r.available << "\n";
  return kExitOk;
}

// commit and release: the same flags, the same answer.
int RunDecision(const GlobalArgs& global, const HoldArgs& args,
                tally::Result<tally::ReservationResult> (tally::Db::*call)(
                    tally::CounterRef, std::string_view)) {
  if (args.key.given && !CheckKeyFlag(args.key.value)) return kExitUsage;
  std::unique_ptr<tally::Db> db;
  tally::Status s = OpenDb(global, OpenMode::kWrite, &db);
  if (!s.ok()) return Fail(s);
  tally::Result<tally::ReservationResult> result =
      (db.get()->*call)(RefOf(args.name, args.key), args.id);
  if (!result.ok()) return Fail(result.status());
  return PrintResult(args.name, args.key, args.id, args.json, *result);
}

}  // namespace

int RunReserve(const GlobalArgs& global, const ReserveArgs& args) {
  std::optional<int64_t> units = ParseInt64(args.units);
  if (!units || *units < 1 || *units > tally::kMaxDelta) {
    return UsageError("--units " + Printable(args.units) +
                      ": expected an integer in 1.." +
                      std::to_string(tally::kMaxDelta));
  }
  // The range (1 ms .. kMaxHoldMs) is the engine's rule, as for
  // create --dedupe-window; only the syntax is checked here.
  std::optional<int64_t> hold_for = ParseDurationMs(args.hold_for);
  if (!hold_for) {
    return UsageError("--hold-for " + Printable(args.hold_for) +
                      ": expected a duration such as 15m, 30s or 500ms");
  }
  if (args.key.given && !CheckKeyFlag(args.key.value)) return kExitUsage;
  std::unique_ptr<tally::Db> db;
  tally::Status s = OpenDb(global, OpenMode::kWrite, &db);
  if (!s.ok()) return Fail(s);
  tally::Result<tally::ReservationResult> result =
      db->Reserve(RefOf(args.name, args.key), args.id, *units, *hold_for);
  if (!result.ok()) return Fail(result.status());
  return PrintResult(args.name, args.key, args.id, args.json, *result);
}

int RunCommit(const GlobalArgs& global, const HoldArgs& args) {
  return RunDecision(global, args, &tally::Db::CommitReservation);
}

int RunRelease(const GlobalArgs& global, const HoldArgs& args) {
  return RunDecision(global, args, &tally::Db::ReleaseReservation);
}

int RunReservation(const GlobalArgs& global, const HoldArgs& args) {
  if (args.key.given && !CheckKeyFlag(args.key.value)) return kExitUsage;
  std::unique_ptr<tally::Db> db;
  // Reservations are part of a strict counter's value (tally::kReadValues).
  tally::Status s = OpenDb(global, OpenMode::kRead, &db, tally::kReadValues);
  if (!s.ok()) return Fail(s);
  tally::Result<tally::ReservationInfo> info =
      db->GetReservation(RefOf(args.name, args.key), args.id);
  if (!info.ok()) return Fail(info.status());
  const bool closed = info->closed_at_ms != 0;
  if (args.json) {
    Json doc = {{"counter", args.name},
                {"reservation_id", info->reservation_id},
                {"state", tally::HoldStateName(info->state)},
                {"units", info->units}};
    if (args.key.given) doc["key"] = args.key.value;
    SetTime(&doc, "created_at", info->created_at_ms);
    SetTime(&doc, "expires_at", info->expires_at_ms);
    SetTimeOrNull(&doc, "closed_at", closed, info->closed_at_ms);
    PrintJson(doc);
    return kExitOk;
  }
  std::cout << "counter: " << args.name << "\n";
  if (args.key.given) std::cout << "key: " << Escaped(args.key.value) << "\n";
  std::cout << "reservation_id: " << Escaped(info->reservation_id) << "\n"
            << "state: " << tally::HoldStateName(info->state) << "\n"
            << "units: " << info->units << "\n"
            << "created_at: " << FormatUtcMillis(info->created_at_ms) << "\n"
            << "expires_at: " << FormatUtcMillis(info->expires_at_ms) << "\n"
            << "closed_at: "
            << (closed ? FormatUtcMillis(info->closed_at_ms)
                       : std::string("none"))
            << "\n";
  return kExitOk;
}

}  // namespace counterctl
