// Reservations (Db::Reserve, CommitReservation, ReleaseReservation,
// GetReservation, ReadHeld): units of a strict counter's key held for a
// while (stock during a checkout), then taken (commit) or given back
// (release, or the hold running out).
//
// A reservation is one record in the holds family (docs/format.md,
// "holds"): at its open key while held, at its closed key once decided. The
// value (the shard) does not move until a commit, which merges -units into
// it in the same WriteBatch that closes the record; a held reservation
// counts only against the minimum: every write of the key reads its open
// holds and checks the value less the units still held (HeldUnits,
// CheckBounds' `held`). So nothing has to happen when a hold runs out: from
// then on it simply no longer counts (by the engine's clock, which never
// steps back, also across restarts), and no crash can leak one past its
// end or give its units back twice (a release writes no value at all).
// The next Reserve of the key closes what ran out (kExpired), so the open
// range a write reads stays small; kMaxOpenHolds bounds it.
//
// Every call runs under the key's lock stripe (StrictKeyLockHash), the one
// every op of a strict key takes: a reservation's check and write, and the
// take that reads the holds, never interleave.
//
// Invariant (Verify checks it): value - held >= min. A take checks it; a
// Reserve checks value - held - units >= min; a commit moves value and held
// by the same units; a release or an end only lowers held; a reset refuses
// a value below min + held.
//
// Cost for a strict counter with reservations: each write of one of its
// keys adds one iterator over the key's open holds (an empty range for a
// key with none). Counters that never had one read nothing: the first
// write of each counter in a process probes the family once (MayHoldUnits).

#include <rocksdb/iterator.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <cassert>

#include "engine/coding.h"
#include "engine/db_impl.h"
#include "engine/format.h"
#include "engine/perf_counters.h"
#include "engine/snapshot_hold.h"
#include "engine/rules.h"
#include "tally/limits.h"
#include "util/rocks_status.h"

namespace tally::engine {
namespace {

// Open holds whose time ran out that one Reserve closes: bounds its batch.
constexpr size_t kMaxExpiredClosed = 64;


}  // namespace

bool DbImpl::MayHoldUnits(const Catalog::Entry& c) {
  if (!c.bounds.has_min || c.bucket != BucketWidth::kNone ||
      holds_ == nullptr) {
    return false;
  }
  int known = c.holds.load(std::memory_order_acquire);
  if (known != Catalog::Entry::kHoldsUnknown) {
    return known == Catalog::Entry::kHoldsMaybe;
  }
  // Any open hold of the counter: [u64be(id) 01, u64be(id) 02).
  std::string begin(kCounterIdBytes + 1, kOpenHoldTag);
  EncodeFixed64BE(c.id, begin.data());
  std::string end = begin;
  end.back() = kClosedHoldTag;
  rocksdb::ReadOptions ro;
  const rocksdb::Slice upper(end);
  ro.iterate_upper_bound = &upper;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, holds_));
  it->Seek(begin);
  // An error reads as "maybe": the write's own read of the holds reports it.
  const int probed = it->Valid() || !it->status().ok()
                         ? Catalog::Entry::kHoldsMaybe
                         : Catalog::Entry::kHoldsNone;
  // A Reserve that set kHoldsMaybe meanwhile wins.
  c.holds.compare_exchange_strong(known, probed, std::memory_order_acq_rel);
  return c.holds.load(std::memory_order_acquire) ==
         Catalog::Entry::kHoldsMaybe;
}

Status DbImpl::ReadHolds(const CounterInfo& c, std::string_view key,
                         int64_t now, const rocksdb::ReadOptions& base,
                         bool collect_expired, HoldsNow* out) {
  *out = HoldsNow{};
  if (holds_ == nullptr) return Status::OK();
  std::string begin, end;
  HoldRange(c.id, kOpenHoldTag, key, &begin, &end);
  rocksdb::ReadOptions ro = base;
  const rocksdb::Slice upper(end);
  ro.iterate_upper_bound = &upper;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, holds_));
  __int128 held = 0;
  size_t seen = 0;
  for (it->Seek(begin); it->Valid(); it->Next()) {
    HoldRecord h;
    Status s = schema::DecodeHold(it->value().ToStringView(), &h);
    if (s.ok() && (h.counter_id != c.id ||
                   h.state != static_cast<uint8_t>(HoldState::kHeld))) {
      s = Status::Corruption("not a held reservation of this key");
    }
    if (!s.ok()) {
      return Status::Corruption("hold " + HexKey(it->key().ToStringView()) +
                                " of counter " + Quote(c.name) + ": " +
                                s.message());
    }
    if (++seen > kMaxOpenHolds) {
      // Past what Reserve lets in (it adds a record only while fewer than
      // kMaxOpenHolds are held, and closes one that ran out for each it
      // adds while any has): a damaged range.
      return Status::Corruption("counter " + Quote(c.name) + " key " +
                                Quote(key) + " has more open holds than " +
                                "kMaxOpenHolds allows");
    }
    if (now >= h.expires_at_ms) {
      if (collect_expired && out->expired.size() < kMaxExpiredClosed) {
        out->expired.emplace_back(it->key().ToString(), std::move(h));
      }
      continue;
    }
    held += h.units;
    ++out->open;
    if (out->next_expiry == 0 || h.expires_at_ms < out->next_expiry) {
      out->next_expiry = h.expires_at_ms;
    }
  }
  Status s = FromRocks(it->status(), "read holds");
  if (!s.ok()) return s;
  if (held > kMaxDelta) {
    return Status::Corruption("counter " + Quote(c.name) +
                              " holds more units than int64 in reservations");
  }
  out->held = static_cast<int64_t>(held);
  return Status::OK();
}

Status DbImpl::HeldUnits(const Catalog::Entry& c, std::string_view key,
                         int64_t now, int64_t* held) {
  *held = 0;
  if (!MayHoldUnits(c)) return Status::OK();
  HoldsNow holds;
  Status s = ReadHolds(c, key, now, rocksdb::ReadOptions(), false, &holds);
  if (s.ok()) *held = holds.held;
  return s;
}

Status DbImpl::FindHoldCounter(const Catalog::Reader& catalog,
                               CounterRef counter,
                               const Catalog::Entry** out) {
  Status s = FindCounterRef(catalog, counter, KeyUse::kOneKey, out);
  if (!s.ok()) return s;
  return CheckTakesHolds(**out);
}

Result<ReservationResult> DbImpl::Reserve(CounterRef counter,
                                          std::string_view reservation_id,
                                          int64_t units,
                                          int64_t hold_for_ms) {
  Result<ReservationResult> r =
      HoldOne(HoldCall::kReserve, counter, reservation_id, units, hold_for_ms);
  CountRefusal(r.status());
  return r;
}

Result<ReservationResult> DbImpl::CommitReservation(
    CounterRef counter, std::string_view reservation_id) {
  Result<ReservationResult> r =
      HoldOne(HoldCall::kCommit, counter, reservation_id, 0, 0);
  CountRefusal(r.status());
  return r;
}

Result<ReservationResult> DbImpl::ReleaseReservation(
    CounterRef counter, std::string_view reservation_id) {
  Result<ReservationResult> r =
      HoldOne(HoldCall::kRelease, counter, reservation_id, 0, 0);
  CountRefusal(r.status());
  return r;
}

Status DbImpl::ReadHold(const CounterInfo& c, std::string_view key,
                        std::string_view id, HoldRecord* h, bool* known,
                        bool* is_open) {
  *known = *is_open = false;
  if (holds_ == nullptr) return Status::OK();  // an old read-only database
  std::string k;
  for (const char tag : {kOpenHoldTag, kClosedHoldTag}) {
    EncodeHoldKey(c.id, tag, key, id, &k);
    rocksdb::PinnableSlice v;
    rocksdb::Status rs = db_->Get(rocksdb::ReadOptions(), holds_, k, &v);
    if (rs.IsNotFound()) continue;
    if (!rs.ok()) return FromRocks(rs, "read reservation");
    Status s = schema::DecodeHold(v.ToStringView(), h);
    if (!s.ok()) {
      return Status::Corruption(ReservationNaming(c, key, id) + ": " + s.message());
    }
    *is_open = tag == kOpenHoldTag;
    *known = true;
    break;
  }
  return Status::OK();
}

Status DbImpl::WriteHoldStep(const Catalog::Entry& c, std::string_view key,
                             const HoldRecord& h, const HoldStep& step,
                             const HoldsNow& holds, int64_t now,
                             bool* first_plain) {
  rocksdb::WriteBatch wb;
  rocksdb::Status rs;
  std::string bytes, at, closed;
  // The open record at `at` goes; `rec` is stored at its closed key.
  auto close = [&](const HoldRecord& rec) {
    EncodeHoldKey(c.id, kClosedHoldTag, key, rec.reservation_id, &closed);
    schema::EncodeHold(rec, &bytes);
    if (rs.ok()) rs = wb.Delete(holds_, at);
    if (rs.ok()) rs = wb.Put(holds_, closed, bytes);
  };
  EncodeHoldKey(c.id, kOpenHoldTag, key, h.reservation_id, &at);
  const std::string found_open = at;
  if (step.close_found) close(step.closed);
  if (step.put_new) {
    const bool open = h.state == static_cast<uint8_t>(HoldState::kHeld);
    if (!open) EncodeHoldKey(c.id, kClosedHoldTag, key, h.reservation_id, &at);
    schema::EncodeHold(h, &bytes);
    rs = wb.Put(holds_, at, bytes);
  }
  if (step.take != 0 && rs.ok()) {
    rs = AddShardMerge(&wb, shards_, c, key, kNoBucket, 0, -step.take);
    // A take without a marker: from now on Verify no longer compares the
    // counter's value with its markers (kCounterFlagPlainIncrements).
    *first_plain = !c.plain_recorded.load(std::memory_order_acquire);
    if (rs.ok() && *first_plain) rs = AddPlainFlag(&wb, meta_, c, &bytes);
  }
  // Open holds whose time ran out: closed while this write is made anyway
  // (a Reserve), so the range every take reads stays small.
  for (const auto& [open_key, rec] : holds.expired) {
    if (open_key == found_open) continue;
    at = open_key;
    close(ClosedHold(rec, HoldState::kExpired, now));
  }
  Status s = FromRocks(rs, "write reservation");
  if (s.ok() && wb.Count() > 0) s = commit_->Commit(&wb);
  return s;
}

Result<ReservationResult> DbImpl::HoldOne(HoldCall call, CounterRef counter,
                                          std::string_view id, int64_t units,
                                          int64_t hold_for_ms) {
  const PerfCountersOff perf_off;
  Status s = CheckWritable();
  if (s.ok()) s = CheckHoldCall(call, id, units, hold_for_ms);
  if (!s.ok()) return s;
  const Catalog::Entry* found = nullptr;
  if (call == HoldCall::kReserve) {
    // The first reservation raises the format: only for one not refused.
    s = RaiseFormatOnFirstUse(kFormatHolds, [&](const Catalog::Reader& r) {
      return FindHoldCounter(r, counter, &found);
    });
    if (!s.ok()) return s;
  }
  Catalog::Reader catalog(catalog_.get());
  s = FindHoldCounter(catalog, counter, &found);
  if (!s.ok()) return s;
  const Catalog::Entry& c = *found;
  EventLocks::Guard guard(&event_locks_, event_locks_.StripeOf(
                                             c.id, StrictKeyLockHash(counter.key)));
  HoldRecord h;
  bool known = false, is_open = false;
  s = ReadHold(c, counter.key, id, &h, &known, &is_open);
  if (!s.ok()) return s;
  // The clock after the lookups, as for markers.
  const int64_t now = clock_->NowMillis();
  int64_t value = 0;
  HoldsNow holds;
  if (known || call == HoldCall::kReserve) {
    s = ReadStrictValue(c, counter.key, kNoBucket, &value);
    if (s.ok() && (MayHoldUnits(c) || call == HoldCall::kReserve)) {
      s = ReadHolds(c, counter.key, now, rocksdb::ReadOptions(),
                    call == HoldCall::kReserve, &holds);
    }
    if (!s.ok()) return s;
  }
  HoldStep step;
  s = HoldStepOf(call, c, counter.key, id, units, hold_for_ms, known, is_open,
                 now, &h, &value, &holds, &step);
  if (!s.ok()) return s;
  if (step.put_new && step.state == HoldState::kHeld) {
    // Before the commit: a take of this key waits on the stripe and then
    // reads the holds; a take of another key that probes now finds this
    // flag and reads its (empty) range.
    c.holds.store(Catalog::Entry::kHoldsMaybe, std::memory_order_release);
  }
  bool first_plain = false;
  s = WriteHoldStep(c, counter.key, h, step, holds, now, &first_plain);
  if (!s.ok()) return s;
  if (step.take != 0) Applied(c, first_plain, 1);  // the roll-up is stale now
  ReservationResult r;
  r.outcome = step.outcome;
  r.state = step.state;
  r.units = h.units;
  r.expires_at_ms = h.expires_at_ms;
  r.value = value;
  r.available = static_cast<int64_t>(
      std::max<__int128>(static_cast<__int128>(value) - holds.held,
                         std::numeric_limits<int64_t>::min() + 1));
  return r;
}

Result<ReservationInfo> DbImpl::GetReservation(CounterRef counter,
                                               std::string_view id) {
  Status s = CheckReads(kReadValues, "GetReservation");
  if (!s.ok()) return s;
  Catalog::Reader catalog(catalog_.get());
  const Catalog::Entry* c = nullptr;
  s = FindHoldCounter(catalog, counter, &c);
  if (!s.ok()) return s;
  if (holds_ != nullptr) {
    for (char tag : {kOpenHoldTag, kClosedHoldTag}) {
      std::string k;
      EncodeHoldKey(c->id, tag, counter.key, id, &k);
      rocksdb::PinnableSlice v;
      rocksdb::Status rs = db_->Get(rocksdb::ReadOptions(), holds_, k, &v);
      if (rs.IsNotFound()) continue;
      if (!rs.ok()) return FromRocks(rs, "read reservation");
      HoldRecord h;
      s = schema::DecodeHold(v.ToStringView(), &h);
      if (!s.ok()) {
        return Status::Corruption(ReservationNaming(*c, counter.key, id) + ": " +
                                  s.message());
      }
      ReservationInfo info;
      info.reservation_id = std::move(h.reservation_id);
      info.state = HoldStateAt(h, clock_->NowMillis());
      info.units = h.units;
      info.created_at_ms = h.created_at_ms;
      info.expires_at_ms = h.expires_at_ms;
      info.closed_at_ms = info.state == HoldState::kExpired && h.closed_at_ms == 0
                              ? h.expires_at_ms
                              : h.closed_at_ms;
      return info;
    }
  }
  return Status::NotFound(ReservationNaming(*c, counter.key, id) + " not found");
}

Result<HeldValue> DbImpl::ReadHeld(CounterRef counter,
                                   const ReadOptions& options) {
  Status s = CheckReads(kReadValues, "ReadHeld");
  if (!s.ok()) return s;
  Catalog::Reader catalog(catalog_.get());
  const Catalog::Entry* c = nullptr;
  s = FindHoldCounter(catalog, counter, &c);
  if (!s.ok()) return s;
  // One view of the value and the holds (a read-only instance's view only
  // moves at Refresh).
  SnapshotHold snapshot(db_.get(), options_.read_only);
  rocksdb::ReadOptions ro;
  ro.verify_checksums = options.verify_checksums;
  ro.snapshot = snapshot.get();
  std::vector<int64_t> values;
  s = ReadStrictValues(*c, {StrictSlot{counter.key, kNoBucket}}, &values, ro);
  if (!s.ok()) return s;
  HoldsNow holds;
  s = ReadHolds(*c, counter.key, clock_->NowMillis(), ro, false, &holds);
  if (!s.ok()) return s;
  HeldValue out;
  out.value = values[0];
  out.held = holds.held;
  out.available = static_cast<int64_t>(
      std::max<__int128>(static_cast<__int128>(out.value) - holds.held,
                         std::numeric_limits<int64_t>::min() + 1));
  out.open = holds.open;
  out.next_expiry_ms = holds.next_expiry;
  return out;
}

}  // namespace tally::engine
