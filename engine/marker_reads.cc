// Reading markers back: one event's marker, and pages of a counter's markers
// in event-id order (for operators and for export).

#include <rocksdb/iterator.h>

#include "engine/coding.h"
#include "engine/counter_range.h"
#include "engine/db_impl.h"
#include "engine/marker_expiry.h"
#include "engine/rules.h"
#include "schema/records.h"
#include "tally/limits.h"
#include "util/rocks_status.h"

namespace tally::engine {
namespace {

Status DecodeMarkerAt(std::string_view key, std::string_view value,
                      MarkerInfo* out) {
  schema::MarkerRecord m;
  Status s = schema::DecodeMarker(value, &m);
  if (!s.ok()) {
    return Status::Corruption("marker " + HexKey(key) + ": " + s.message());
  }
  uint64_t id;
  std::string_view counter_key, event_id;
  if (!DecodeAnyMarkerKey(key, &id, &counter_key, &event_id)) {
    return Status::Corruption("marker key " + HexKey(key) + " is malformed");
  }
  out->key = std::string(counter_key);
  out->event_id = std::move(m.event_id);
  out->shard = m.shard;
  out->delta = m.delta;
  out->created_at_ms = m.created_at_ms;
  out->expires_at_ms = m.expires_at_ms;
  out->pinned = m.pinned;
  out->strict = m.strict;
  out->refused = m.answer.refused;
  out->asked = m.answer.asked;
  out->value = m.answer.value;
  out->window_ends_ms = m.answer.window_ends_ms;
  out->remaining = m.answer.remaining;
  out->reset = m.answer.reset;
  out->remaining_kept = m.answer.remaining_kept;
  return Status::OK();
}

}  // namespace

Result<MarkerInfo> DbImpl::GetMarker(CounterRef counter,
                                     std::string_view event_id) {
  Status reads = CheckReads(kReadMarkers, "GetMarker");
  if (!reads.ok()) return reads;
  Status s = ValidateEventId(event_id);
  if (!s.ok()) return s;
  Catalog::Reader catalog(catalog_.get());
  const Catalog::Entry* c = nullptr;
  s = FindCounterRef(catalog, counter, KeyUse::kOneKey, &c);
  if (!s.ok()) return s;
  std::string key;
  EncodeMarkerKeyOf(KeyPrefix(c->id, counter.key), event_id, &key);
  rocksdb::PinnableSlice value;
  rocksdb::Status rs = db_->Get(rocksdb::ReadOptions(), events_, key, &value);
  if (rs.IsNotFound()) {
    return Status::NotFound("event " + Quote(event_id) +
                            " was never counted in counter " + Quote(c->name));
  }
  if (!rs.ok()) return FromRocks(rs, "read marker");
  MarkerInfo info;
  s = DecodeMarkerAt(key, value.ToStringView(), &info);
  if (!s.ok()) return s;
  if (MarkerExpired(info.expires_at_ms, clock_->NowMillis())) {
    return Status::NotFound("event " + Quote(event_id) + "'s marker in counter " +
                            Quote(c->name) + " expired at " +
                            std::to_string(info.expires_at_ms) + " ms");
  }
  return info;
}

Result<std::vector<MarkerInfo>> DbImpl::ListMarkers(
    CounterRef counter, const ListMarkersOptions& options) {
  Status reads = CheckReads(kReadMarkers, "ListMarkers");
  if (!reads.ok()) return reads;
  Status valid = ValidateListMarkers(options);
  if (!valid.ok()) return valid;
  Catalog::Reader catalog(catalog_.get());
  const Catalog::Entry* c = nullptr;
  Status found = FindCounterRef(catalog, counter, KeyUse::kOneKey, &c);
  if (!found.ok()) return found;

  const KeyPrefix prefix(c->id, counter.key);
  std::string start;
  EncodeMarkerKeyOf(prefix, options.start_after, &start);
  CounterRange range(prefix);
  std::unique_ptr<rocksdb::Iterator> it = range.NewIterator(db_.get(), events_);
  std::vector<MarkerInfo> out;
  const int64_t now = clock_->NowMillis();
  it->Seek(start);
  if (it->Valid() && !options.start_after.empty() && it->key() == start) {
    it->Next();  // start_after is exclusive
  }
  for (; it->Valid() && out.size() < options.limit; it->Next()) {
    MarkerInfo info;
    Status s = DecodeMarkerAt(it->key().ToStringView(),
                              it->value().ToStringView(), &info);
    if (!s.ok()) return s;
    if (info.created_at_ms < options.since_ms ||
        MarkerExpired(info.expires_at_ms, now)) {
      continue;
    }
    out.push_back(std::move(info));
  }
  Status s = FromRocks(it->status(), "list markers");
  if (!s.ok()) return s;
  return out;
}

}  // namespace tally::engine
