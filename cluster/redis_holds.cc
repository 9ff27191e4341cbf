// RedisDb's reservations (Db::Reserve, CommitReservation,
// ReleaseReservation, GetReservation, ReadHeld) on a strict counter's key
// (docs/cluster.md, "Reservations"). A strict key is never sharded, so its
// value, its open holds (KeySpace::Holds) and each reservation's record
// (KeySpace::Reservation) share one hash tag: one MGET reads them all at
// once, and one tally_guarded call (GuardedCall) writes what core/'s rules
// decided from them (core::HoldStepOf), only where none of the three
// changed since the read; else the call reads and decides again, as a
// strict take does (cluster/stale_rounds.h).
//
// Time is the client's clock (Options::clock), read after each read: a
// hold whose end it has reached counts for nothing, and nothing is written
// when a hold runs out; the next write of the key drops it from the open
// holds. Closed records are kept, as the engine keeps them, until the key
// or the counter is deleted (KeySpace::HoldIndex lists them for that).

#include <algorithm>
#include <charconv>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "cluster/guarded_call.h"
#include "cluster/records.h"
#include "cluster/redis_db.h"
#include "cluster/stale_rounds.h"
#include "core/holds.h"
#include "core/validate.h"

namespace tally::cluster {
namespace {

using core::HoldCall;

// value - held, kept above INT64_MIN (ReservationResult::available).
int64_t Available(int64_t value, int64_t held) {
  return static_cast<int64_t>(
      std::max<__int128>(static_cast<__int128>(value) - held,
                         std::numeric_limits<int64_t>::min() + 1));
}

// An MGET element: its bytes, or nullopt for no key.
Status BytesOf(const std::string& key, const Reply& r,
               std::optional<std::string>* out) {
  out->reset();
  if (r.kind == Reply::Kind::kNil) return Status::OK();
  if (r.kind != Reply::Kind::kString) {
    return Status::IOError("read " + core::Quote(key) + ": " + r.str);
  }
  *out = r.str;
  return Status::OK();
}

}  // namespace

// One key's reservations as one MGET read them (all of one tag).
struct RedisDb::HoldView {
  std::string tag, value_key, holds_key, record_key, name;
  bool live = false;  // the counter's live key exists
  std::optional<std::string> value_bytes, holds_bytes, record_bytes;
  int64_t value = 0;
  std::vector<core::HoldRecord> open;  // as stored: some may have run out
  bool known = false;    // `record` is the reservation's
  bool is_open = false;  // it is stored held
  core::HoldRecord record;
};

Status RedisDb::FindHoldCounter(CounterRef ref, CounterInfo* c) {
  Status s = FindRef(ref, false, c);
  return s.ok() ? core::CheckTakesHolds(*c) : s;
}

Status RedisDb::ReadHoldView(const CounterInfo& c, std::string_view key,
                             std::string_view id, HoldView* v) {
  v->tag = keys_.Tag(c, 0, key);
  v->value_key = KeySpace::Value(v->tag, key);
  v->holds_key = KeySpace::Holds(v->tag, key);
  Command cmd;
  cmd.args = {"MGET", KeySpace::Live(v->tag), v->value_key, v->holds_key};
  if (!id.empty()) {
    v->name = KeySpace::MarkerName(key, id);
    v->record_key = KeySpace::Reservation(v->tag, v->name);
    cmd.args.push_back(v->record_key);
  }
  cmd.slot = ClusterClient::SlotOf(v->tag);
  cmd.idempotent = true;
  std::vector<Reply> replies;
  Status s = Run({cmd}, &replies, false);
  if (!s.ok()) return s;
  const Reply& r = replies[0];
  if (r.kind != Reply::Kind::kArray ||
      r.elements.size() != cmd.args.size() - 1) {
    return Status::IOError("read " + core::Quote(v->holds_key) + ": " + r.str);
  }
  std::optional<std::string> live;
  s = BytesOf(cmd.args[1], r.elements[0], &live);
  v->live = live.has_value();
  if (s.ok()) s = BytesOf(v->value_key, r.elements[1], &v->value_bytes);
  if (s.ok()) s = BytesOf(v->holds_key, r.elements[2], &v->holds_bytes);
  if (s.ok() && !id.empty()) {
    s = BytesOf(v->record_key, r.elements[3], &v->record_bytes);
  }
  if (s.ok() && v->value_bytes) {
    const std::string& t = *v->value_bytes;
    const auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(),
                                           v->value);
    if (t.empty() || ec != std::errc() || ptr != t.data() + t.size()) {
      s = Status::Corruption(core::Quote(v->value_key) +
                             " is not an integer: " + core::Quote(t));
    }
  }
  if (s.ok() && v->holds_bytes) {
    s = DecodeOpenHolds(v->holds_key, *v->holds_bytes, c.id, &v->open);
  }
  if (s.ok() && v->record_bytes) {
    s = DecodeHold(v->record_key, *v->record_bytes, c.id, &v->record);
    v->record.reservation_id = std::string(id);
    v->known = true;
    v->is_open = v->record.state == static_cast<uint8_t>(HoldState::kHeld);
  }
  return s;
}

// The write of one decided call: the record, the key's open holds (those
// still held at `now`, less the one closed, with the new one) and a
// commit's take, guarded on all three as read. False when the call
// changes nothing (a retry, a refusal of a closed one).
bool RedisDb::HoldWrite(const CounterInfo& c, std::string_view key,
                        const HoldView& v, const core::HoldRecord& h,
                        const core::HoldStep& step, int64_t now,
                        GuardedCall* g) {
  if (!step.close_found && !step.put_new && step.take == 0) return false;
  g->RequireLive(KeySpace::Live(v.tag));
  g->Guard(v.value_key, v.value_bytes);
  g->Guard(v.holds_key, v.holds_bytes);
  g->Guard(v.record_key, v.record_bytes);
  const std::string index = KeySpace::HoldIndex(v.tag);
  if (step.take != 0) {
    g->IncrBy(v.value_key, -step.take);
    if (c.keyed) g->ZAdd(KeySpace::KeyIndex(v.tag), 0, std::string(key));
  }
  if (step.close_found) g->Set(v.record_key, EncodeHold(step.closed), 0);
  if (step.put_new) {
    g->Set(v.record_key, EncodeHold(h), 0);
    g->ZAdd(index, 0, "r:" + v.name);
  }
  std::vector<core::HoldRecord> open;
  for (const core::HoldRecord& o : v.open) {
    if (core::HoldStateAt(o, now) == HoldState::kHeld &&
        !(step.close_found && o.reservation_id == h.reservation_id)) {
      open.push_back(o);
    }
  }
  if (step.put_new && h.state == static_cast<uint8_t>(HoldState::kHeld)) {
    open.push_back(h);
  }
  if (open.empty()) {
    if (v.holds_bytes) g->Del(v.holds_key);
  } else {
    g->Set(v.holds_key, EncodeOpenHolds(open), 0);
    g->ZAdd(index, 0, v.holds_key.substr(v.tag.size() + 1));
  }
  return true;
}

// One round of a call: read, decide at the clock after the read, write
// guarded. `*again`: the write found the key changed (nothing written).
Status RedisDb::HoldRound(HoldCall call, const CounterInfo& c,
                          std::string_view key, std::string_view id,
                          int64_t units, int64_t hold_for_ms,
                          GuardedCall::Outcome* outcome,
                          ReservationResult* out) {
  HoldView v;
  Status s = ReadHoldView(c, key, id, &v);
  if (!s.ok()) return s;
  *outcome = GuardedCall::Outcome::kWritten;
  if (!v.live) {
    *outcome = GuardedCall::Outcome::kGone;
    return Status::OK();
  }
  const int64_t now = clock_->NowMillis();
  core::HeldNow held;
  s = core::HeldAt(v.open, now, &held);
  if (!s.ok()) return s.WithContext(v.holds_key);
  core::HoldRecord h = v.record;
  int64_t value = v.value;
  core::HoldStep step;
  s = core::HoldStepOf(call, c, key, id, units, hold_for_ms, v.known,
                       v.is_open, now, &h, &value, &held, &step);
  if (!s.ok()) return s;
  GuardedCall g(v.tag);
  if (HoldWrite(c, key, v, h, step, now, &g)) {
    if (step.take != 0 && (c.flags & kCounterFlagPlainIncrements) == 0) {
      s = RecordPlain(c);  // a take without a marker, as the engine flags it
      if (!s.ok()) return s;
    }
    s = RunGuarded(g, core::ReservationNaming(c, key, id), outcome);
    if (!s.ok() || *outcome != GuardedCall::Outcome::kWritten) return s;
  }
  out->outcome = step.outcome;
  out->state = step.state;
  out->units = h.units;
  out->expires_at_ms = h.expires_at_ms;
  out->value = value;
  out->available = Available(value, held.held);
  return Status::OK();
}

Result<ReservationResult> RedisDb::HoldOne(HoldCall call, CounterRef counter,
                                           std::string_view id, int64_t units,
                                           int64_t hold_for_ms) {
  Status s = CheckWritable();
  if (s.ok()) s = core::CheckHoldCall(call, id, units, hold_for_ms);
  // Twice at most when the counter turns out deleted since it was cached:
  // then by the catalog as it is now (NotFound when the name is gone).
  for (int attempt = 0; s.ok() && attempt < 2; ++attempt) {
    CounterInfo c;
    s = FindHoldCounter(counter, &c);
    for (int stale_rounds = 0; s.ok();) {
      GuardedCall::Outcome outcome;
      ReservationResult r;
      s = HoldRound(call, c, counter.key, id, units, hold_for_ms, &outcome,
                    &r);
      if (!s.ok()) break;
      if (outcome == GuardedCall::Outcome::kWritten) return r;
      if (outcome == GuardedCall::Outcome::kGone) {
        Forget(c.name, c.id);
        s = attempt == 0 ? Status::OK() : core::CounterNotFound(c.name);
        break;
      }
      if (++stale_rounds > kMaxStaleRounds) {
        s = StaleBusy(core::ReservationNaming(c, counter.key, id) + ": the key",
                      "nothing was written, retry the call");
      } else {
        WaitBeforeRound(stale_rounds);
      }
    }
  }
  if (core::IsRefusal(s)) rejected_.fetch_add(1, std::memory_order_relaxed);
  return s;
}

Result<ReservationResult> RedisDb::Reserve(CounterRef counter,
                                           std::string_view reservation_id,
                                           int64_t units,
                                           int64_t hold_for_ms) {
  return HoldOne(HoldCall::kReserve, counter, reservation_id, units,
                 hold_for_ms);
}

Result<ReservationResult> RedisDb::CommitReservation(
    CounterRef counter, std::string_view reservation_id) {
  return HoldOne(HoldCall::kCommit, counter, reservation_id, 0, 0);
}

Result<ReservationResult> RedisDb::ReleaseReservation(
    CounterRef counter, std::string_view reservation_id) {
  return HoldOne(HoldCall::kRelease, counter, reservation_id, 0, 0);
}

// Reads `id`'s record (none: empty) and the key's value and holds, once
// more when the counter turns out deleted since it was cached.
Status RedisDb::ReadHolds(CounterRef ref, std::string_view id, CounterInfo* c,
                          HoldView* v) {
  Status s;
  for (int attempt = 0; attempt < 2; ++attempt) {
    s = FindHoldCounter(ref, c);
    if (s.ok()) s = ReadHoldView(*c, ref.key, id, v);
    if (!s.ok() || v->live) return s;
    Forget(c->name, c->id);
    *v = HoldView();
  }
  return core::CounterNotFound(c->name);
}

Result<ReservationInfo> RedisDb::GetReservation(CounterRef counter,
                                                std::string_view id) {
  CounterInfo c;
  HoldView v;
  Status s = ReadHolds(counter, id, &c, &v);
  if (!s.ok()) return s;
  if (!v.known) {
    return Status::NotFound(core::ReservationNaming(c, counter.key, id) +
                            " not found");
  }
  core::HoldRecord h = v.record;
  const HoldState state = core::HoldStateAt(h, clock_->NowMillis());
  if (state == HoldState::kExpired && v.is_open) {
    h = core::ClosedHold(h, state, 0);  // closed at its own end
  }
  ReservationInfo info;
  info.reservation_id = std::string(id);
  info.state = state;
  info.units = h.units;
  info.created_at_ms = h.created_at_ms;
  info.expires_at_ms = h.expires_at_ms;
  info.closed_at_ms = h.closed_at_ms;
  return info;
}

Result<HeldValue> RedisDb::ReadHeld(CounterRef counter, const ReadOptions&) {
  CounterInfo c;
  HoldView v;
  Status s = ReadHolds(counter, {}, &c, &v);
  if (!s.ok()) return s;
  core::HeldNow held;
  s = core::HeldAt(v.open, clock_->NowMillis(), &held);
  if (!s.ok()) return s.WithContext(v.holds_key);
  HeldValue out;
  out.value = v.value;
  out.held = held.held;
  out.available = Available(v.value, held.held);
  out.open = held.open;
  out.next_expiry_ms = held.next_expiry;
  return out;
}

}  // namespace tally::cluster
