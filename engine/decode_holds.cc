// The holds family's records (docs/format.md, "holds"): reservations
// (Db::Reserve), open while held, closed once decided.

#include "engine/family_record.h"
#include "tally/types.h"

namespace tally::engine {

std::string DecodeHoldsKey(std::string_view key, FamilyRecord* out) {
  out->kind = RecordKind::kHold;
  std::string_view counter_key, id;
  if (!DecodeHoldKey(key, &out->counter_id, &out->hold_tag, &counter_key,
                     &id)) {
    return "a hold key is a counter id, the tag 01 (held) or 02 (closed), a "
           "key (empty for a named counter) closed by 0x00 and a non-empty "
           "reservation id";
  }
  out->counter_key = std::string(counter_key);
  out->event_id = std::string(id);
  return "";
}

std::string DecodeHoldsValue(std::string_view value, FamilyRecord* out) {
  Status s = schema::DecodeHold(value, &out->hold);
  if (!s.ok()) return s.ToString();
  if (out->hold.counter_id != out->counter_id ||
      out->hold.reservation_id != out->event_id) {
    return "the reservation's counter or id differs from its key's";
  }
  const bool held = out->hold.state == static_cast<uint8_t>(HoldState::kHeld);
  if (held != (out->hold_tag == kOpenHoldTag)) {
    return held ? "a held reservation under a closed key"
                : "a closed reservation under an open key";
  }
  return "";
}

std::string RenderHolds(WriteKind write, const FamilyRecord& rec,
                        DumpOp* out) {
  if (write == WriteKind::kMerge) return "unexpected write to a hold key";
  const bool open = rec.hold_tag == kOpenHoldTag;
  out->op = write == WriteKind::kDelete
                ? (open ? "hold-delete" : "reservation-delete")
                : (open ? "hold" : "reservation");
  out->fields = {CounterField(rec.counter_id)};
  if (!rec.counter_key.empty()) {
    out->fields.push_back(TextField("key", rec.counter_key));
  }
  out->fields.push_back(
      TextField("reservation", rec.event_id, "reservation_id"));
  if (write == WriteKind::kDelete) return "";
  out->fields.push_back(WordField(
      "state", HoldStateName(static_cast<HoldState>(rec.hold.state))));
  out->fields.push_back(IntField("units", rec.hold.units));
  out->fields.push_back(TimeField("created_at", rec.hold.created_at_ms));
  out->fields.push_back(TimeField("expires_at", rec.hold.expires_at_ms));
  if (rec.hold.closed_at_ms != 0) {
    out->fields.push_back(TimeField("closed_at", rec.hold.closed_at_ms));
  }
  return "";
}

}  // namespace tally::engine
