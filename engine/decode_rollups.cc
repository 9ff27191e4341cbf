// The rollups family's records (docs/format.md, "rollups"): one cached
// total per counter, keyed by its 8-byte id prefix.

#include "engine/family_record.h"
#include "engine/top_keys.h"

namespace tally::engine {

std::string DecodeRollupsKey(std::string_view key, FamilyRecord* out) {
  out->kind = RecordKind::kRollup;
  if (key.size() == kTopListKeyBytes && key.back() == kTopListTag) {
    out->kind = RecordKind::kTopList;
  } else if (key.size() != static_cast<size_t>(kCounterIdBytes)) {
    return "a roll-up key is 8 bytes, or 9 ending in 0x01 (a top list)";
  }
  out->counter_id = DecodeFixed64BE(key.data());
  return "";
}

std::string DecodeRollupsValue(std::string_view value, FamilyRecord* out) {
  if (out->kind == RecordKind::kTopList) {
    if (DecodeTopList(value, &out->top)) return "";
    return "malformed top list (" + std::to_string(value.size()) + " bytes)";
  }
  if (DecodeRollup(value, &out->rollup)) return "";
  return "malformed roll-up value (" + std::to_string(value.size()) +
         " bytes, expected " + std::to_string(kRollupBytes) + ")";
}

std::string RenderRollups(WriteKind write, const FamilyRecord& rec,
                          DumpOp* out) {
  if (write == WriteKind::kMerge) return "unexpected write to a roll-up key";
  const bool top = rec.kind == RecordKind::kTopList;
  out->op = write == WriteKind::kDelete ? (top ? "top-delete" : "rollup-delete")
                                        : (top ? "top" : "rollup");
  out->fields = {CounterField(rec.counter_id)};
  if (write == WriteKind::kDelete) return "";
  if (top) {
    out->fields.push_back(UintField("keys", rec.top.key_count));
    out->fields.push_back(IntField("total", rec.top.total));
    out->fields.push_back(UintField("listed", rec.top.keys.size()));
    out->fields.push_back(UintField("as_of_seq", rec.top.sequence));
    out->fields.push_back(TimeField("as_of", rec.top.as_of_ms));
    return "";
  }
  out->fields.push_back(IntField("value", rec.rollup.value));
  out->fields.push_back(UintField("as_of_seq", rec.rollup.sequence));
  out->fields.push_back(TimeField("as_of", rec.rollup.as_of_ms));
  return "";
}

}  // namespace tally::engine
