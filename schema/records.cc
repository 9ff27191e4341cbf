#include "schema/records.h"

#include <flatbuffers/flatbuffers.h>

#include <cstring>
#include <vector>

#include "schema/file_ids.h"
#include "tally_generated.h"

namespace tally::schema {
namespace {

// Records are small; a verifier depth/table bound well above what they need
// keeps a hostile buffer from costing much.
constexpr flatbuffers::uoffset_t kMaxDepth = 8;
constexpr flatbuffers::uoffset_t kMaxTables = 16;

void Finish(flatbuffers::FlatBufferBuilder& fbb, std::string* out) {
  out->assign(reinterpret_cast<const char*>(fbb.GetBufferPointer()),
              fbb.GetSize());
}

// FlatBuffers reads scalars in place, so the buffer must be aligned for the
// widest one (int64). RocksDB hands out values at any address: copy a
// misaligned one into per-thread aligned scratch first. The returned root
// points into that scratch and is valid until this thread's next call.
const uint8_t* Aligned(std::string_view bytes) {
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  // An empty buffer is read from nowhere, so it needs no copy (and
  // memcpy into the still-empty scratch, a null pointer, would be UB).
  if (bytes.empty() ||
      reinterpret_cast<uintptr_t>(data) % alignof(uint64_t) == 0) {
    return data;
  }
  thread_local std::vector<uint64_t> scratch;
  scratch.resize((bytes.size() + 7) / 8);
  std::memcpy(scratch.data(), bytes.data(), bytes.size());
  return reinterpret_cast<const uint8_t*>(scratch.data());
}

template <typename T>
const T* Verified(std::string_view bytes, const char* ident) {
  const uint8_t* data = Aligned(bytes);
  flatbuffers::Verifier verifier(data, bytes.size(), kMaxDepth, kMaxTables);
  if (!verifier.VerifyBuffer<T>(ident)) return nullptr;
  return flatbuffers::GetRoot<T>(data);
}

std::string Describe(const char* what, std::string_view bytes) {
  return std::string(what) + " record failed verification (" +
         std::to_string(bytes.size()) + " bytes)";
}

// A verified marker with its required event id, or null.
const EventMarker* VerifiedMarker(std::string_view bytes) {
  const EventMarker* m = Verified<EventMarker>(bytes, kMarkerId);
  return m == nullptr || m->event_id() == nullptr ? nullptr : m;
}

}  // namespace

void EncodeHeader(const HeaderRecord& rec, std::string* out) {
  flatbuffers::FlatBufferBuilder fbb(128);
  auto db_id = fbb.CreateString(rec.db_id);
  auto root = CreateDbHeader(fbb, rec.format_version, rec.next_counter_id,
                             rec.created_at_ms, db_id);
  fbb.Finish(root, kHeaderId);
  Finish(fbb, out);
}

void EncodeCounter(const CounterRecord& rec, std::string* out) {
  flatbuffers::FlatBufferBuilder fbb(256);
  auto name = fbb.CreateString(rec.name);
  auto root = CreateCounterMeta(fbb, rec.id, name, rec.shard_count,
                                static_cast<ShardPolicy>(rec.policy),
                                rec.schema_version, rec.created_at_ms,
                                rec.flags, rec.dedupe_window_ms, rec.bucket,
                                rec.retention_ms, rec.outbox, rec.keyed,
                                rec.has_min, rec.min_value, rec.has_max,
                                rec.max_value, rec.sliding);
  fbb.Finish(root, kCounterId);
  Finish(fbb, out);
}

// EncodeMarker is in marker_writer.cc: the builder's bytes, without it.

void EncodeOutbox(const OutboxFields& f, std::string* out) {
  thread_local flatbuffers::FlatBufferBuilder fbb(512);
  fbb.Clear();
  auto name = fbb.CreateString(f.counter.data(), f.counter.size());
  flatbuffers::Offset<flatbuffers::String> id, origin, key;
  if (!f.event_id.empty()) {
    id = fbb.CreateString(f.event_id.data(), f.event_id.size());
  }
  if (!f.origin.empty()) {
    origin = fbb.CreateString(f.origin.data(), f.origin.size());
  }
  if (!f.key.empty()) key = fbb.CreateString(f.key.data(), f.key.size());
  auto root = CreateOutboxEntry(fbb, f.seq, name, id, f.delta, f.time_ms,
                                origin, f.origin_seq, f.settled, key);
  fbb.Finish(root, kOutboxId);
  Finish(fbb, out);
}

void EncodeHold(const HoldRecord& r, std::string* out) {
  flatbuffers::FlatBufferBuilder fbb(128);
  auto id = fbb.CreateString(r.reservation_id);
  auto root = CreateHold(fbb, id, r.counter_id, r.units, r.created_at_ms,
                         r.expires_at_ms, r.state, r.closed_at_ms);
  fbb.Finish(root, kHoldId);
  Finish(fbb, out);
}

Status DecodeHold(std::string_view bytes, HoldRecord* rec) {
  const Hold* h = Verified<Hold>(bytes, kHoldId);
  if (h == nullptr || h->reservation_id() == nullptr) {
    return Status::Corruption(Describe("reservation", bytes));
  }
  if (h->state() > 4 || h->units() <= 0) {
    return Status::Corruption("reservation with state " +
                              std::to_string(h->state()) + " and units " +
                              std::to_string(h->units()));
  }
  rec->reservation_id = h->reservation_id()->str();
  rec->counter_id = h->counter_id();
  rec->units = h->units();
  rec->created_at_ms = h->created_at_ms();
  rec->expires_at_ms = h->expires_at_ms();
  rec->state = h->state();
  rec->closed_at_ms = h->closed_at_ms();
  return Status::OK();
}

void EncodeClaim(const ClaimRecord& r, std::string* out) {
  flatbuffers::FlatBufferBuilder fbb(128 + r.result.size());
  auto holder = fbb.CreateString(r.holder);
  auto result = r.result.empty() ? 0 : fbb.CreateString(r.result);
  auto root = CreateClaim(fbb, r.state, r.token, holder, r.granted_at_ms,
                          r.lease_until_ms, r.ended_at_ms, result);
  fbb.Finish(root, kClaimId);
  Finish(fbb, out);
}

Status DecodeClaim(std::string_view bytes, ClaimRecord* rec) {
  const Claim* c = Verified<Claim>(bytes, kClaimId);
  if (c == nullptr || c->holder() == nullptr || c->holder()->size() == 0) {
    return Status::Corruption(Describe("claim", bytes));
  }
  const uint8_t state = c->state();
  const bool held = state == 0;
  const bool done = state == 3;
  std::string bad;
  if (state != 0 && state != 2 && !done) {
    bad = "state " + std::to_string(state);
  } else if (c->token() == 0) {
    bad = "token 0";
  } else if (c->lease_until_ms() <= c->granted_at_ms()) {
    bad = "a lease ending at " + std::to_string(c->lease_until_ms()) +
          ", not after its grant at " + std::to_string(c->granted_at_ms());
  } else if (held != (c->ended_at_ms() == 0)) {
    bad = held ? "an end while held" : "no end once released or done";
  } else if (!done && c->result() != nullptr) {
    bad = "a result while not done";
  }
  if (!bad.empty()) return Status::Corruption("claim with " + bad);
  rec->state = state;
  rec->token = c->token();
  rec->holder = c->holder()->str();
  rec->granted_at_ms = c->granted_at_ms();
  rec->lease_until_ms = c->lease_until_ms();
  rec->ended_at_ms = c->ended_at_ms();
  rec->result = c->result() != nullptr ? c->result()->str() : std::string();
  return Status::OK();
}

Status DecodeHeader(std::string_view bytes, HeaderRecord* rec) {
  const DbHeader* h = Verified<DbHeader>(bytes, kHeaderId);
  if (h == nullptr || h->db_id() == nullptr) {
    return Status::Corruption(Describe("database header", bytes));
  }
  rec->format_version = h->format_version();
  rec->next_counter_id = h->next_counter_id();
  rec->created_at_ms = h->created_at_ms();
  rec->db_id = h->db_id()->str();
  return Status::OK();
}

Status DecodeCounter(std::string_view bytes, CounterRecord* rec) {
  const CounterMeta* m = Verified<CounterMeta>(bytes, kCounterId);
  if (m == nullptr || m->name() == nullptr) {
    return Status::Corruption(Describe("counter metadata", bytes));
  }
  rec->id = m->id();
  rec->name = m->name()->str();
  rec->shard_count = m->shard_count();
  rec->policy = static_cast<uint8_t>(m->policy());
  rec->schema_version = m->schema_version();
  rec->created_at_ms = m->created_at_ms();
  rec->flags = m->flags();
  rec->dedupe_window_ms = m->dedupe_window_ms();
  rec->bucket = m->bucket();
  rec->retention_ms = m->retention_ms();
  rec->outbox = m->outbox();
  rec->keyed = m->keyed();
  rec->has_min = m->has_min();
  rec->min_value = m->min_value();
  rec->has_max = m->has_max();
  rec->max_value = m->max_value();
  rec->sliding = m->sliding();
  return Status::OK();
}

Status DecodeMarker(std::string_view bytes, MarkerRecord* rec) {
  const EventMarker* m = VerifiedMarker(bytes);
  if (m == nullptr) return Status::Corruption(Describe("event marker", bytes));
  rec->event_id = m->event_id()->str();
  rec->counter_id = m->counter_id();
  rec->shard = m->shard();
  rec->delta = m->delta();
  rec->created_at_ms = m->created_at_ms();
  rec->expires_at_ms = m->expires_at_ms();
  rec->pinned = m->pinned();
  rec->strict = m->strict();
  rec->answer = StrictAnswer{m->refused(),        m->asked(),
                             m->value(),          m->window_ends_ms(),
                             m->remaining(),      m->reset(),
                             m->remaining_kept()};
  if (rec->answer.reset && !rec->strict) {
    return Status::Corruption("event marker of a reset without its answer");
  }
  return Status::OK();
}

Status DecodeOutbox(std::string_view bytes, OutboxRecord* rec) {
  const OutboxEntry* e = Verified<OutboxEntry>(bytes, kOutboxId);
  if (e == nullptr || e->counter() == nullptr) {
    return Status::Corruption(Describe("outbox entry", bytes));
  }
  rec->seq = e->seq();
  rec->counter = e->counter()->str();
  rec->event_id = e->event_id() == nullptr ? std::string() : e->event_id()->str();
  rec->delta = e->delta();
  rec->time_ms = e->time_ms();
  rec->origin = e->origin() == nullptr ? std::string() : e->origin()->str();
  rec->origin_seq = e->origin_seq();
  rec->settled = e->settled();
  rec->key = e->key() == nullptr ? std::string() : e->key()->str();
  return Status::OK();
}

Status DecodeMarkerAnswer(std::string_view bytes, MarkerAnswer* out) {
  const EventMarker* m = VerifiedMarker(bytes);
  if (m == nullptr) return Status::Corruption(Describe("event marker", bytes));
  out->delta = m->delta();
  out->shard = m->shard();
  out->strict = m->strict();
  out->answer = StrictAnswer{m->refused(),        m->asked(),
                             m->value(),          m->window_ends_ms(),
                             m->remaining(),      m->reset(),
                             m->remaining_kept()};
  if (out->answer.reset && !out->strict) {
    return Status::Corruption("event marker of a reset without its answer");
  }
  return Status::OK();
}

Status DecodeMarkerExpiry(std::string_view bytes, int64_t* expires_at_ms) {
  const EventMarker* m = VerifiedMarker(bytes);
  if (m == nullptr) return Status::Corruption(Describe("event marker", bytes));
  *expires_at_ms = m->expires_at_ms();
  return Status::OK();
}

}  // namespace tally::schema
