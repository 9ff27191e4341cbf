#include "cluster/records.h"

#include <algorithm>
#include <cassert>
#include <charconv>
#include <cstdint>
#include <vector>

#include "core/validate.h"
#include "tally/limits.h"

namespace tally::cluster {
namespace {

constexpr std::string_view kCounterVersion = "c1";
constexpr uint32_t kCounterVersionNumber = 1;  // CounterInfo::schema_version
constexpr std::string_view kMarkerVersion = "m1";
constexpr std::string_view kForwardVersion = "f1";
constexpr std::string_view kHoldVersion = "r1";
constexpr std::string_view kOpenHoldsVersion = "h1";
constexpr size_t kHoldFields = 6;
constexpr std::string_view kClaimVersion = "k1";
constexpr std::string_view kRollupVersion = "u1";
constexpr size_t kRollupNumbers = 6;  // the version and 5 decimal fields
constexpr size_t kClaimNumbers = 9;  // the version and 8 decimal fields
constexpr size_t kCounterFields = 16;
constexpr size_t kMarkerFields = 14;
constexpr size_t kForwardFields = 2;

// Splits `record` at single spaces into exactly `n` fields, the first
// `version`, each of the others a decimal int64; false otherwise.
bool Fields(std::string_view record, std::string_view version, size_t n,
            std::vector<int64_t>* out) {
  out->clear();
  size_t field = 0;
  size_t start = 0;
  while (start <= record.size()) {
    size_t end = record.find(' ', start);
    if (end == std::string_view::npos) end = record.size();
    const std::string_view part = record.substr(start, end - start);
    if (field == 0) {
      if (part != version) return false;
    } else {
      int64_t v = 0;
      const char* last = part.data() + part.size();
      auto [ptr, ec] = std::from_chars(part.data(), last, v);
      if (part.empty() || ec != std::errc() || ptr != last) return false;
      out->push_back(v);
    }
    ++field;
    start = end + 1;
  }
  return field == n;
}

void Put(std::string* s, int64_t v) {
  // to_chars into the stack: no temporary string per field.
  char buf[24];
  buf[0] = ' ';
  const char* end = std::to_chars(buf + 1, buf + sizeof(buf), v).ptr;
  s->append(buf, static_cast<size_t>(end - buf));
}

// ' x' and `bytes` in lower-case hex.
void PutHex(std::string* s, std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  s->append(" x");
  for (const char c : bytes) {
    const auto b = static_cast<uint8_t>(c);
    s->push_back(kDigits[b >> 4]);
    s->push_back(kDigits[b & 15]);
  }
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// PutHex's field (without its space) back into bytes; false when it is not
// one.
bool TakeHex(std::string_view field, std::string* out) {
  if (field.empty() || field[0] != 'x' || field.size() % 2 != 1) return false;
  out->clear();
  for (size_t i = 1; i < field.size(); i += 2) {
    const int hi = HexDigit(field[i]);
    const int lo = HexDigit(field[i + 1]);
    if (hi < 0 || lo < 0) return false;
    out->push_back(static_cast<char>(hi * 16 + lo));
  }
  return true;
}

bool Flag(int64_t v) { return v == 1; }
bool IsFlag(int64_t v) { return v == 0 || v == 1; }

}  // namespace

std::string EncodeCounter(const CounterInfo& c) {
  std::string s(kCounterVersion);
  for (const int64_t v :
       {static_cast<int64_t>(c.id), int64_t{c.shards},
        static_cast<int64_t>(c.policy), c.created_at_ms, int64_t{c.flags},
        c.dedupe_window_ms, static_cast<int64_t>(c.bucket), c.retention_ms,
        int64_t{c.outbox}, int64_t{c.keyed}, int64_t{c.bounds.has_min},
        c.bounds.min, int64_t{c.bounds.has_max}, c.bounds.max,
        int64_t{c.sliding}}) {
    Put(&s, v);
  }
  return s;
}

Status DecodeCounter(std::string_view name, std::string_view record,
                     CounterInfo* c) {
  std::vector<int64_t> f;
  const bool ok = Fields(record, kCounterVersion, kCounterFields, &f) &&
                  f[0] > 0 && f[1] >= 1 && f[1] <= int64_t{kMaxShards} &&
                  (f[2] == 0 || f[2] == 1) && f[4] >= 0 && f[4] <= 1 &&
                  f[6] >= 0 && f[6] <= 3 && IsFlag(f[8]) && IsFlag(f[9]) &&
                  IsFlag(f[10]) && IsFlag(f[12]) && IsFlag(f[14]);
  if (!ok) {
    return Status::Corruption("catalog record of counter " +
                              core::Quote(name) + " is malformed: " +
                              core::Quote(record));
  }
  *c = CounterInfo();
  c->name = std::string(name);
  c->schema_version = kCounterVersionNumber;
  c->id = static_cast<uint64_t>(f[0]);
  c->shards = static_cast<uint32_t>(f[1]);
  c->policy = static_cast<ShardPolicy>(f[2]);
  c->created_at_ms = f[3];
  c->flags = static_cast<uint32_t>(f[4]);
  c->dedupe_window_ms = f[5];
  c->bucket = static_cast<BucketWidth>(f[6]);
  c->retention_ms = f[7];
  c->outbox = Flag(f[8]);
  c->keyed = Flag(f[9]);
  c->bounds = CounterBounds{Flag(f[10]), f[11], Flag(f[12]), f[13]};
  c->sliding = Flag(f[14]);
  return Status::OK();
}

std::string EncodeMarker(const MarkerInfo& m) {
  std::string s;
  s.reserve(64);  // a new event's record is ~45 bytes: one allocation
  EncodeMarkerInto(m, &s);
  return s;
}

void EncodeMarkerInto(const MarkerInfo& m, std::string* out) {
  // Formatted on the stack and copied once: every once-op writes one.
  constexpr size_t kFields = 13;
  static_assert(kFields + 1 == kMarkerFields, "the version, then the fields");
  char buf[kMarkerVersion.size() + kFields * 21];
  char* at = std::copy(kMarkerVersion.begin(), kMarkerVersion.end(), buf);
  for (const int64_t v :
       {int64_t{m.shard}, m.delta, m.created_at_ms, m.expires_at_ms,
        int64_t{m.pinned}, int64_t{m.strict}, int64_t{m.refused}, m.asked,
        m.value, m.window_ends_ms, m.remaining, int64_t{m.reset},
        int64_t{m.remaining_kept}}) {
    *at++ = ' ';
    at = std::to_chars(at, buf + sizeof(buf), v).ptr;
  }
  out->assign(buf, static_cast<size_t>(at - buf));
}

Status DecodeMarker(std::string_view what, std::string_view record,
                    MarkerInfo* m) {
  std::vector<int64_t> f;
  const bool ok = Fields(record, kMarkerVersion, kMarkerFields, &f) &&
                  f[0] >= 0 && f[0] < int64_t{kMaxShards} && IsFlag(f[4]) &&
                  IsFlag(f[5]) && IsFlag(f[6]) && IsFlag(f[11]) &&
                  IsFlag(f[12]);
  if (!ok) {
    return Status::Corruption("marker " + core::Quote(what) +
                              " is malformed: " + core::Quote(record));
  }
  m->shard = static_cast<uint32_t>(f[0]);
  m->delta = f[1];
  m->created_at_ms = f[2];
  m->expires_at_ms = f[3];
  m->pinned = Flag(f[4]);
  m->strict = Flag(f[5]);
  m->refused = Flag(f[6]);
  m->asked = f[7];
  m->value = f[8];
  m->window_ends_ms = f[9];
  m->remaining = f[10];
  m->reset = Flag(f[11]);
  m->remaining_kept = Flag(f[12]);
  return Status::OK();
}

core::FoundMarker FoundOf(const MarkerInfo& m) {
  core::FoundMarker f;
  f.found = true;
  f.delta = m.delta;
  f.shard = m.shard;
  f.strict = m.strict;
  f.refused = m.refused;
  f.asked = m.asked;
  f.value = m.value;
  f.window_ends = m.window_ends_ms;
  f.remaining = m.remaining;
  f.reset = m.reset;
  f.remaining_kept = m.remaining_kept;
  return f;
}

MarkerInfo InfoOf(const core::FoundMarker& f) {
  MarkerInfo m;
  m.delta = f.delta;
  m.shard = f.shard;
  m.strict = f.strict;
  m.refused = f.refused;
  m.asked = f.asked;
  m.value = f.value;
  m.window_ends_ms = f.window_ends;
  m.remaining = f.remaining;
  m.reset = f.reset;
  m.remaining_kept = f.remaining_kept;
  return m;
}

std::string EncodeHold(const core::HoldRecord& h) {
  std::string s(kHoldVersion);
  for (const int64_t v : {h.units, h.created_at_ms, h.expires_at_ms,
                          int64_t{h.state}, h.closed_at_ms}) {
    Put(&s, v);
  }
  return s;
}

Status DecodeHold(std::string_view what, std::string_view record,
                  uint64_t counter_id, core::HoldRecord* h) {
  std::vector<int64_t> f;
  const bool ok = Fields(record, kHoldVersion, kHoldFields, &f) &&
                  f[0] >= 1 && f[1] >= 0 && f[2] > f[1] && f[3] >= 0 &&
                  f[3] <= static_cast<int64_t>(HoldState::kRefused) &&
                  (f[3] == 0) == (f[4] == 0);
  if (!ok) {
    return Status::Corruption("reservation " + core::Quote(what) +
                              " is malformed: " + core::Quote(record));
  }
  *h = core::HoldRecord{};
  h->counter_id = counter_id;
  h->units = f[0];
  h->created_at_ms = f[1];
  h->expires_at_ms = f[2];
  h->state = static_cast<uint8_t>(f[3]);
  h->closed_at_ms = f[4];
  return Status::OK();
}

std::string EncodeOpenHolds(const std::vector<core::HoldRecord>& open) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s(kOpenHoldsVersion);
  for (const core::HoldRecord& h : open) {
    s.push_back(' ');
    for (const unsigned char b : h.reservation_id) {
      s.push_back(kHex[b >> 4]);
      s.push_back(kHex[b & 15]);
    }
    Put(&s, h.units);
    Put(&s, h.expires_at_ms);
  }
  return s;
}

Status DecodeOpenHolds(std::string_view what, std::string_view record,
                       uint64_t counter_id,
                       std::vector<core::HoldRecord>* open) {
  open->clear();
  const Status bad = Status::Corruption("open reservations " +
                                        core::Quote(what) + " are malformed");
  if (record.substr(0, kOpenHoldsVersion.size()) != kOpenHoldsVersion) {
    return bad;
  }
  std::string_view rest = record.substr(kOpenHoldsVersion.size());
  // Each entry: " HEX UNITS EXPIRES".
  while (!rest.empty()) {
    std::string_view part[3];
    for (std::string_view& p : part) {
      if (rest.empty() || rest[0] != ' ') return bad;
      const size_t end = rest.find(' ', 1);
      p = rest.substr(1, end == std::string_view::npos ? end : end - 1);
      rest = end == std::string_view::npos ? std::string_view()
                                           : rest.substr(end);
    }
    core::HoldRecord h;
    h.counter_id = counter_id;
    if (part[0].empty() || part[0].size() % 2 != 0 ||
        open->size() >= kMaxOpenHolds) {
      return bad;
    }
    for (size_t i = 0; i < part[0].size(); i += 2) {
      uint8_t b = 0;
      const auto [ptr, ec] =
          std::from_chars(part[0].data() + i, part[0].data() + i + 2, b, 16);
      if (ec != std::errc() || ptr != part[0].data() + i + 2) return bad;
      h.reservation_id.push_back(static_cast<char>(b));
    }
    const auto [p1, e1] = std::from_chars(
        part[1].data(), part[1].data() + part[1].size(), h.units);
    const auto [p2, e2] = std::from_chars(
        part[2].data(), part[2].data() + part[2].size(), h.expires_at_ms);
    if (e1 != std::errc() || p1 != part[1].data() + part[1].size() ||
        e2 != std::errc() || p2 != part[2].data() + part[2].size() ||
        h.units < 1 || part[1].empty() || part[2].empty()) {
      return bad;
    }
    open->push_back(std::move(h));
  }
  return open->empty() ? bad : Status::OK();
}

std::string EncodeForward(uint32_t shard) {
  std::string s(kForwardVersion);
  Put(&s, int64_t{shard});
  return s;
}

bool IsForward(std::string_view record) {
  return record.substr(0, kForwardVersion.size()) == kForwardVersion &&
         (record.size() == kForwardVersion.size() ||
          record[kForwardVersion.size()] == ' ');
}

Status DecodeForward(std::string_view what, std::string_view record,
                     uint32_t shards, uint32_t* shard) {
  std::vector<int64_t> f;
  if (!Fields(record, kForwardVersion, kForwardFields, &f) || f[0] < 0 ||
      f[0] >= int64_t{shards}) {
    return Status::Corruption("forward " + core::Quote(what) +
                              " is malformed: " + core::Quote(record));
  }
  *shard = static_cast<uint32_t>(f[0]);
  return Status::OK();
}

std::string EncodeClaim(const StoredClaim& c) {
  std::string s(kClaimVersion);
  for (const int64_t v :
       {int64_t{c.rec.state}, static_cast<int64_t>(c.rec.token),
        c.rec.granted_at_ms, c.rec.lease_until_ms, c.rec.ended_at_ms,
        int64_t{c.completing}, static_cast<int64_t>(c.attempt),
        static_cast<int64_t>(c.counts)}) {
    Put(&s, v);
  }
  PutHex(&s, c.rec.holder);
  PutHex(&s, c.rec.result);
  return s;
}

Status DecodeClaim(std::string_view what, std::string_view record,
                   StoredClaim* c) {
  // The decimal fields end at the space before the holder.
  size_t end = 0;
  for (size_t n = 0; n < kClaimNumbers && end != std::string_view::npos; ++n) {
    end = record.find(' ', end == 0 ? 0 : end + 1);
  }
  std::vector<int64_t> f;
  bool ok = end != std::string_view::npos &&
            Fields(record.substr(0, end), kClaimVersion, kClaimNumbers, &f);
  const auto state = ok ? f[0] : -1;
  ok = ok && (state == 0 || state == 2 || state == 3) && f[1] >= 1 &&
       IsFlag(f[5]) && (f[5] == 0 || state == 3) && f[6] >= 0;
  const std::string_view rest = ok ? record.substr(end + 1) : "";
  const size_t space = rest.find(' ');
  ok = ok && space != std::string_view::npos &&
       TakeHex(rest.substr(0, space), &c->rec.holder) &&
       TakeHex(rest.substr(space + 1), &c->rec.result);
  if (!ok) {
    return Status::Corruption("claim record " + core::Quote(what) +
                              " is malformed: " + core::Quote(record));
  }
  c->rec.state = static_cast<uint8_t>(f[0]);
  c->rec.token = static_cast<uint64_t>(f[1]);
  c->rec.granted_at_ms = f[2];
  c->rec.lease_until_ms = f[3];
  c->rec.ended_at_ms = f[4];
  c->completing = Flag(f[5]);
  c->attempt = static_cast<uint64_t>(f[6]);
  c->counts = static_cast<uint64_t>(f[7]);
  return Status::OK();
}

std::string EncodeRollup(const TopKeysResult& top) {
  assert(top.keys.size() <= kMaxTopKeys);
  std::string s(kRollupVersion);
  for (const int64_t v :
       {top.as_of_ms, static_cast<int64_t>(top.key_count), top.total,
        static_cast<int64_t>(top.out_of_range_keys),
        static_cast<int64_t>(top.keys.size())}) {
    Put(&s, v);
  }
  PutHex(&s, top.first_out_of_range_key);
  for (const KeyValue& kv : top.keys) {
    Put(&s, kv.value);
    PutHex(&s, kv.key);
  }
  return s;
}

Status DecodeRollup(std::string_view what, std::string_view record,
                    TopKeysResult* top) {
  std::vector<std::string_view> parts;
  for (size_t start = 0; start <= record.size();) {
    size_t end = record.find(' ', start);
    if (end == std::string_view::npos) end = record.size();
    parts.push_back(record.substr(start, end - start));
    start = end + 1;
  }
  const size_t head = record.find(" x");  // the first hex field's space
  std::vector<int64_t> f;
  bool ok = parts.size() >= kRollupNumbers + 1 &&
            Fields(record.substr(0, head), kRollupVersion, kRollupNumbers,
                   &f) &&
            f[1] >= 0 && f[3] >= 0 && f[4] >= 0 &&
            f[4] <= static_cast<int64_t>(kMaxTopKeys) &&
            parts.size() == kRollupNumbers + 1 + 2 * static_cast<size_t>(f[4]) &&
            TakeHex(parts[kRollupNumbers], &top->first_out_of_range_key);
  top->keys.clear();
  for (size_t i = kRollupNumbers + 1; ok && i < parts.size(); i += 2) {
    KeyValue kv;
    const char* last = parts[i].data() + parts[i].size();
    auto [ptr, ec] = std::from_chars(parts[i].data(), last, kv.value);
    ok = !parts[i].empty() && ec == std::errc() && ptr == last &&
         TakeHex(parts[i + 1], &kv.key) && !kv.key.empty();
    top->keys.push_back(std::move(kv));
  }
  if (!ok) {
    return Status::Corruption("roll-up record " + core::Quote(what) +
                              " is malformed: " + core::Quote(record));
  }
  top->as_of_ms = f[0];
  top->key_count = static_cast<uint64_t>(f[1]);
  top->total = f[2];
  top->out_of_range_keys = static_cast<uint64_t>(f[3]);
  return Status::OK();
}

}  // namespace tally::cluster
