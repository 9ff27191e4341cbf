// The rules of reservations (core/holds.h).

#include "core/holds.h"

#include <cassert>

#include "core/deadline.h"
#include "core/validate.h"
#include "tally/limits.h"

namespace tally::core {
namespace {

// A new reservation of `units`: held when the value less what is held
// keeps its minimum, else refused (stored closed).
Status Reserve(const CounterInfo& c, std::string_view key,
               std::string_view id, int64_t units, int64_t hold_for_ms,
               int64_t now, int64_t value, HeldNow* held, HoldRecord* h,
               HoldStep* step) {
  if (held->open >= kMaxOpenHolds) {
    return Status::OutOfRange(CounterKeyNaming(c.name, key) + " has " +
                              std::to_string(held->open) +
                              " reservations held, the limit (kMaxOpenHolds)");
  }
  // held + units stays within int64: ReadHeld, takes and commits sum it.
  if (static_cast<__int128>(held->held) + units > kMaxDelta) {
    return Status::OutOfRange(CounterKeyNaming(c.name, key) + ": reserving " +
                              std::to_string(units) + " units beside the " +
                              std::to_string(held->held) +
                              " already held would hold more than int64");
  }
  const __int128 after = static_cast<__int128>(value) - held->held - units;
  const bool fits = after >= c.bounds.min;
  *h = HoldRecord{};
  h->reservation_id = std::string(id);
  h->counter_id = c.id;
  h->units = units;
  h->created_at_ms = now;
  h->expires_at_ms = DeadlineAfter(now, hold_for_ms);
  h->state = static_cast<uint8_t>(fits ? HoldState::kHeld : HoldState::kRefused);
  h->closed_at_ms = fits ? 0 : now;
  step->put_new = true;
  step->outcome = fits ? Outcome::kApplied : Outcome::kRefused;
  step->state = static_cast<HoldState>(h->state);
  if (fits) {
    held->held += units;
    ++held->open;
    if (held->next_expiry == 0 || h->expires_at_ms < held->next_expiry) {
      held->next_expiry = h->expires_at_ms;
    }
  }
  return Status::OK();
}

}  // namespace

std::string ReservationNaming(const CounterInfo& c, std::string_view key,
                              std::string_view id) {
  return "reservation " + Quote(id) + " of " + CounterKeyNaming(c.name, key);
}

HoldState HoldStateAt(const HoldRecord& h, int64_t now) {
  const auto s = static_cast<HoldState>(h.state);
  return s == HoldState::kHeld && now >= h.expires_at_ms ? HoldState::kExpired
                                                         : s;
}

HoldRecord ClosedHold(HoldRecord h, HoldState state, int64_t now) {
  assert(state != HoldState::kHeld);
  h.state = static_cast<uint8_t>(state);
  h.closed_at_ms = state == HoldState::kExpired ? h.expires_at_ms : now;
  return h;
}

Status CheckTakesHolds(const CounterInfo& c) {
  if (c.bounds.has_min && c.bucket == BucketWidth::kNone) return Status::OK();
  return Status::InvalidArgument(
      "counter " + Quote(c.name) +
      " takes no reservations: they need a strict counter with a minimum "
      "and no time buckets");
}

Status HeldAt(const std::vector<HoldRecord>& open, int64_t now,
              HeldNow* out) {
  *out = HeldNow{};
  __int128 held = 0;
  for (const HoldRecord& h : open) {
    if (HoldStateAt(h, now) != HoldState::kHeld) continue;
    held += h.units;
    ++out->open;
    if (out->next_expiry == 0 || h.expires_at_ms < out->next_expiry) {
      out->next_expiry = h.expires_at_ms;
    }
  }
  if (held > kMaxDelta) {
    return Status::Corruption("open reservations hold more units than int64");
  }
  out->held = static_cast<int64_t>(held);
  return Status::OK();
}

Status CheckHoldCall(HoldCall call, std::string_view id, int64_t units,
                     int64_t hold_for_ms) {
  Status s = ValidateReservationId(id);
  if (s.ok() && call == HoldCall::kReserve) s = ValidateHold(units, hold_for_ms);
  return s;
}

Status HoldStepOf(HoldCall call, const CounterInfo& c, std::string_view key,
                  std::string_view id, int64_t units, int64_t hold_for_ms,
                  bool known, bool is_open, int64_t now, HoldRecord* h,
                  int64_t* value, HeldNow* held, HoldStep* step) {
  assert(c.bounds.has_min);
  *step = HoldStep{};
  if (!known) {
    if (call != HoldCall::kReserve) {
      return Status::NotFound(ReservationNaming(c, key, id) + " not found");
    }
    return Reserve(c, key, id, units, hold_for_ms, now, *value, held, h, step);
  }
  const HoldState state = HoldStateAt(*h, now);
  step->state = state;
  // A held one whose time ran out is closed as expired by any call on it.
  if (state == HoldState::kExpired && is_open) {
    step->close_found = true;
    step->closed = ClosedHold(*h, HoldState::kExpired, now);
  }
  const bool active = state == HoldState::kHeld;
  switch (call) {
    case HoldCall::kReserve:
      step->outcome =
          h->units == units ? Outcome::kDuplicate : Outcome::kConflict;
      return Status::OK();
    case HoldCall::kCommit:
      if (!active) {
        step->outcome = state == HoldState::kCommitted ? Outcome::kDuplicate
                                                       : Outcome::kRefused;
        return Status::OK();
      }
      // value - held >= min and this hold is part of held: the take stays
      // within the minimum.
      if (static_cast<__int128>(*value) - h->units < c.bounds.min) {
        return Status::Corruption(
            ReservationNaming(c, key, id) + ": the value " + std::to_string(*value) +
            " cannot cover its " + std::to_string(h->units) +
            " units above the minimum");
      }
      step->take = h->units;
      *value -= h->units;
      break;
    case HoldCall::kRelease:
      if (!active) {
        step->outcome = state == HoldState::kCommitted ? Outcome::kRefused
                                                       : Outcome::kDuplicate;
        return Status::OK();
      }
      break;
  }
  // A commit or release of a held reservation: it closes.
  const HoldState to = call == HoldCall::kCommit ? HoldState::kCommitted
                                                 : HoldState::kReleased;
  step->close_found = true;
  step->closed = ClosedHold(*h, to, now);
  held->held -= h->units;
  --held->open;
  step->outcome = Outcome::kApplied;
  step->state = to;
  return Status::OK();
}

}  // namespace tally::core
