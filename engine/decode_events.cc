// The events family's records (docs/format.md, "events"): once-increment
// markers, keyed by counter id and event id.

#include "engine/family_record.h"

namespace tally::engine {

std::string DecodeEventsKey(std::string_view key, FamilyRecord* out) {
  out->kind = RecordKind::kMarker;
  std::string_view counter_key, event_id;
  if (!DecodeAnyMarkerKey(key, &out->counter_id, &counter_key, &event_id)) {
    return "a marker key is a counter id, a key closed by 0x00 (keyed "
           "counters) and a non-empty event id";
  }
  out->counter_key = std::string(counter_key);
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
  out->fields = {CounterField(rec.counter_id)};
  if (!rec.counter_key.empty()) {
    out->fields.push_back(TextField("key", rec.counter_key));
  }
  out->fields.push_back(TextField("event", rec.event_id, "event_id"));
  if (write == WriteKind::kDelete) return "";
  out->fields.push_back(UintField("shard", rec.marker.shard));
  out->fields.push_back(IntField("delta", rec.marker.delta));
  out->fields.push_back(TimeField("created_at", rec.marker.created_at_ms));
  if (rec.marker.expires_at_ms != 0) {
    out->fields.push_back(TimeField("expires_at", rec.marker.expires_at_ms));
  }
  if (rec.marker.strict) {  // a strict counter's answer (format 5)
    out->fields.push_back(UintField("refused", rec.marker.answer.refused));
    out->fields.push_back(IntField("asked", rec.marker.answer.asked));
    out->fields.push_back(IntField("value", rec.marker.answer.value));
    if (rec.marker.answer.window_ends_ms != 0) {  // a quota's (format 6)
      out->fields.push_back(
          TimeField("window_ends", rec.marker.answer.window_ends_ms));
    }
  }
  return "";
}

}  // namespace tally::engine
