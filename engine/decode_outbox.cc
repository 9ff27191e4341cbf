// The outbox family's records (docs/format.md, "outbox"): entries at
// u64be(seq >= 1) and the settled watermark at u64be(0).

#include "engine/family_record.h"
#include "engine/format.h"
#include "util/random_id.h"

namespace tally::engine {

std::string DecodeOutboxKey(std::string_view key, FamilyRecord* out) {
  if (key.size() != 8) return "an outbox key is 8 bytes";
  out->seq = DecodeFixed64BE(key.data());
  out->kind = out->seq == kOutboxSettledSeq ? RecordKind::kOutboxSettled
                                            : RecordKind::kOutboxEntry;
  return "";
}

std::string DecodeOutboxValue(std::string_view value, FamilyRecord* out) {
  if (out->kind == RecordKind::kOutboxSettled) {
    if (value.size() != 8) {
      return "malformed settled watermark (" + std::to_string(value.size()) +
             " bytes, expected 8)";
    }
    out->word = DecodeFixed64BE(value.data());
    return "";
  }
  schema::OutboxRecord& rec = out->outbox;
  Status s = schema::DecodeOutbox(value, &rec);
  if (!s.ok()) return s.ToString();
  if (rec.seq != out->seq) return "its key does not hold its seq";
  if (!rec.origin.empty() && !IsHexId(rec.origin)) {
    return "its origin is not 32 lowercase hex characters";
  }
  if (rec.settled >= rec.seq) {
    return "its settled watermark " + std::to_string(rec.settled) +
           " is not below its seq";
  }
  return "";
}

std::string RenderOutbox(WriteKind write, const FamilyRecord& rec,
                         DumpOp* out) {
  if (write == WriteKind::kMerge) return "unexpected write to an outbox key";
  const bool del = write == WriteKind::kDelete;
  if (rec.kind == RecordKind::kOutboxSettled) {
    if (del) return "unexpected delete of the settled watermark";
    out->op = "outbox-settled";
    out->fields = {UintField("through", rec.word)};
    return "";
  }
  out->op = del ? "outbox-delete" : "outbox-entry";
  out->fields = {UintField("seq", rec.seq)};
  if (del) return "";
  const schema::OutboxRecord& e = rec.outbox;
  out->fields.push_back(TextField("counter", e.counter));
  if (!e.key.empty()) out->fields.push_back(TextField("key", e.key));
  if (!e.event_id.empty()) {
    out->fields.push_back(TextField("event", e.event_id, "event_id"));
  }
  out->fields.push_back(DeltaField(e.delta));
  out->fields.push_back(TimeField("time", e.time_ms));
  if (!e.origin.empty()) out->fields.push_back(TextField("origin", e.origin));
  if (e.origin_seq != 0) {
    out->fields.push_back(UintField("origin_seq", e.origin_seq));
  }
  out->fields.push_back(UintField("settled", e.settled));
  return "";
}

}  // namespace tally::engine
