// The events family's records (docs/format.md, "events"): once-increment
// markers, keyed by counter id and event id.

#include "engine/family_record.h"

namespace tally::engine {

std::string DecodeEventsKey(std::string_view key, FamilyRecord* out) {
  out->kind = RecordKind::kMarker;
  std::string_view event_id;
  if (!DecodeMarkerKey(key, &out->counter_id, &event_id)) {
    return "a marker key is a counter id and a non-empty event id";
  }
  out->event_id = std::string(event_id);
  return "";
}

std::string DecodeEventsValue(std::string_view value, FamilyRecord* out) {
  Status s = schema::DecodeMarker(value, &out->marker);
  if (!s.ok()) return s.ToString();
  if (out->marker.counter_id != out->counter_id ||
      out->marker.event_id != out->event_id) {
    return "the marker's counter or event id differs from its key's";
  }
  return "";
}

std::string RenderEvents(WriteKind write, const FamilyRecord& rec,
                         DumpOp* out) {
  if (write == WriteKind::kMerge) return "unexpected write to a marker key";
  out->op = write == WriteKind::kDelete ? "marker-delete" : "marker";
  out->fields = {CounterField(rec.counter_id),
                 TextField("event", rec.event_id, "event_id")};
  if (write == WriteKind::kDelete) return "";
  out->fields.push_back(UintField("shard", rec.marker.shard));
  out->fields.push_back(IntField("delta", rec.marker.delta));
  out->fields.push_back(TimeField("created_at", rec.marker.created_at_ms));
  if (rec.marker.expires_at_ms != 0) {
    out->fields.push_back(TimeField("expires_at", rec.marker.expires_at_ms));
  }
  return "";
}

}  // namespace tally::engine
