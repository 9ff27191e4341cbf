// The meta family's records (docs/format.md, "meta"): the header, counter
// records, the outbox cursor, the time mark and unfinished-import notes.

#include "engine/family_record.h"
#include "engine/format.h"
#include "tally/types.h"

namespace tally::engine {
namespace {

std::string EightBytes(std::string_view value, const char* what) {
  if (value.size() == 8) return "";
  return std::string("malformed ") + what + " (" +
         std::to_string(value.size()) + " bytes, expected 8)";
}

const char* WidthName(uint8_t bucket) {
  return bucket <= static_cast<uint8_t>(BucketWidth::kDay)
             ? BucketWidthName(static_cast<BucketWidth>(bucket))
             : "unknown";
}

}  // namespace

std::string DecodeMetaKey(std::string_view key, FamilyRecord* out) {
  if (key == std::string_view(kHeaderKey)) {
    out->kind = RecordKind::kHeader;
  } else if (key.size() >= 2 && key[0] == kCounterKeyTag) {
    out->kind = RecordKind::kCounter;
    out->name = std::string(key.substr(1));
  } else if (key == std::string_view(kOutboxAckedKey)) {
    out->kind = RecordKind::kOutboxCursor;
  } else if (key == std::string_view(kTimeMarkKey)) {
    out->kind = RecordKind::kTimeMark;
  } else if (DecodeImportMetaKey(key, &out->counter_id)) {
    out->kind = RecordKind::kImportNote;
  } else {
    return "unknown meta key";
  }
  return "";
}

std::string DecodeMetaValue(std::string_view value, FamilyRecord* out) {
  switch (out->kind) {
    case RecordKind::kHeader: {
      Status s = schema::DecodeHeader(value, &out->header);
      return s.ok() ? "" : "header: " + s.ToString();
    }
    case RecordKind::kCounter: {
      Status s = schema::DecodeCounter(value, &out->counter);
      if (!s.ok()) return s.ToString();
      if (out->counter.name != out->name) {
        return "the record's name differs from its key's";
      }
      return "";
    }
    case RecordKind::kOutboxCursor: {
      std::string bad = EightBytes(value, "outbox cursor");
      if (bad.empty()) out->word = DecodeFixed64BE(value.data());
      return bad;
    }
    case RecordKind::kTimeMark: {
      std::string bad = EightBytes(value, "time mark");
      if (bad.empty()) out->word = DecodeFixed64BE(value.data());
      return bad;
    }
    case RecordKind::kImportNote:
      if (value.empty()) return "an import note holds its counter's name";
      out->import_name = std::string(value);
      return "";
    default:
      return "not a meta record";
  }
}

std::string RenderMeta(WriteKind write, const FamilyRecord& rec, DumpOp* out) {
  const bool put = write == WriteKind::kPut;
  const bool del = write == WriteKind::kDelete;
  switch (rec.kind) {
    case RecordKind::kHeader:
      if (!put) return "unexpected write to the header key";
      out->op = "header";
      out->fields = {WordField("action", "put"),
                     UintField("format_version", rec.header.format_version),
                     UintField("next_counter_id", rec.header.next_counter_id)};
      return "";
    case RecordKind::kCounter:
      out->op = "counter-meta";
      if (del) {
        out->fields = {WordField("action", "delete"),
                       TextField("name", rec.name)};
        return "";
      }
      if (!put) return "unexpected write to a counter's meta key";
      out->fields = {WordField("action", "put"), TextField("name", rec.name),
                     UintField("id", rec.counter.id),
                     UintField("shards", rec.counter.shard_count),
                     UintField("flags", rec.counter.flags)};
      if (rec.counter.bucket != 0) {
        out->fields.push_back(
            TextField("bucket_width", WidthName(rec.counter.bucket)));
      }
      if (rec.counter.dedupe_window_ms != 0) {
        out->fields.push_back(
            IntField("dedupe_window_ms", rec.counter.dedupe_window_ms));
      }
      if (rec.counter.retention_ms != 0) {
        out->fields.push_back(
            IntField("retention_ms", rec.counter.retention_ms));
      }
      if (rec.counter.outbox) out->fields.push_back(UintField("outbox", 1));
      if (rec.counter.keyed) out->fields.push_back(UintField("keyed", 1));
      return "";
    case RecordKind::kOutboxCursor:
      if (!put) return "unexpected write to the outbox cursor";
      out->op = "outbox-cursor";
      out->fields = {WordField("action", "put"),
                     UintField("acked_through", rec.word)};
      return "";
    case RecordKind::kTimeMark:
      if (!put) return "unexpected write to the time mark";
      out->op = "time-mark";
      out->fields = {WordField("action", "put"),
                     TimeField("at", static_cast<int64_t>(rec.word))};
      return "";
    case RecordKind::kImportNote:
      out->op = "import-note";
      if (del) {
        out->fields = {WordField("action", "delete"),
                       UintField("id", rec.counter_id)};
        return "";
      }
      if (!put) return "unexpected write to an import note";
      out->fields = {WordField("action", "put"),
                     UintField("id", rec.counter_id),
                     TextField("name", rec.import_name)};
      return "";
    default:
      return "not a meta record";
  }
}

}  // namespace tally::engine
