// The rules of reservations (Db::Reserve, CommitReservation,
// ReleaseReservation): units of a strict counter's key held for a while,
// then taken (commit) or given back (release, or the hold running out).
//
// A reservation is one record: open while held, closed once decided. The
// value does not move until a commit, which takes the units from it in the
// same atomic write that closes the record; a held reservation counts
// only against the minimum (CheckBounds' `held`). So nothing has to happen
// when a hold runs out: from then on it no longer counts.
//
// Invariant: value - held >= min. A take checks it; a Reserve checks
// value - held - units >= min; a commit moves value and held by the same
// units; a release or an end only lowers held.
//
// Thread safety: pure functions.

#ifndef TALLY_CORE_HOLDS_H_
#define TALLY_CORE_HOLDS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tally/status.h"
#include "tally/types.h"

namespace tally::core {

// A reservation as stored (docs/format.md, "holds").
struct HoldRecord {
  std::string reservation_id;
  uint64_t counter_id = 0;
  int64_t units = 0;
  int64_t created_at_ms = 0;
  int64_t expires_at_ms = 0;
  uint8_t state = 0;  // tally::HoldState
  int64_t closed_at_ms = 0;  // 0 while held
};

enum class HoldCall { kReserve, kCommit, kRelease };

// A record's state at `now`: a held one whose time ran out is kExpired.
HoldState HoldStateAt(const HoldRecord& h, int64_t now);

// The record closed in `state` (kExpired: at its own end; else at `now`).
HoldRecord ClosedHold(HoldRecord h, HoldState state, int64_t now);

// The key's open reservations at `now` (those whose time has not run out).
struct HeldNow {
  int64_t held = 0;   // their units
  uint64_t open = 0;  // how many
  int64_t next_expiry = 0;  // the earliest end among them (0: none)
};

// What one call writes, in this order, and answers.
struct HoldStep {
  // The found open record closed (its open record goes, this one is
  // stored closed): by a commit, a release, or because it ran out.
  bool close_found = false;
  HoldRecord closed;
  // A new reservation (`*h`): stored open when held, closed when refused.
  bool put_new = false;
  // A commit: the units taken from the key's value.
  int64_t take = 0;
  Outcome outcome = Outcome::kApplied;
  HoldState state = HoldState::kHeld;
};

// How messages name reservation `id` of counter `c`'s key `key`.
std::string ReservationNaming(const CounterInfo& c, std::string_view key,
                              std::string_view id);

// InvalidArgument naming counter `c` unless it takes reservations: a
// strict counter with a minimum and no time buckets.
Status CheckTakesHolds(const CounterInfo& c);

// What the open (held) records `open` of one key hold at `now`: those
// whose time has not run out (HoldStateAt). Corruption when their units
// sum beyond int64 (Reserve never lets them).
Status HeldAt(const std::vector<HoldRecord>& open, int64_t now, HeldNow* out);

// The call's own arguments, before any lookup (Reserve's units and hold).
Status CheckHoldCall(HoldCall call, std::string_view id, int64_t units,
                     int64_t hold_for_ms);

// One call on reservation `id` of counter `c`'s key `key` (its minimum
// c.bounds.min): `*h` as stored when `known` (open or closed, by
// `is_open`), the key's `*value` and `*held` read after the lookup, at
// `now`. NotFound for a commit or release of an unknown id; OutOfRange for
// a Reserve past kMaxOpenHolds or past int64 held units; Corruption when a
// held reservation's units are more than the value above its minimum.
// Otherwise OK: *step says what to write and answer; *h, *value and *held
// are as they are after the call.
Status HoldStepOf(HoldCall call, const CounterInfo& c, std::string_view key,
                  std::string_view id, int64_t units, int64_t hold_for_ms,
                  bool known, bool is_open, int64_t now, HoldRecord* h,
                  int64_t* value, HeldNow* held, HoldStep* step);

}  // namespace tally::core

#endif  // TALLY_CORE_HOLDS_H_
