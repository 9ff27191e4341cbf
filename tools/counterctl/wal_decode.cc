#include "wal_decode.h"

#include <rocksdb/slice.h>
#include <rocksdb/status.h>

#include <utility>

#include "common.h"
#include "engine/coding.h"
#include "engine/format.h"
#include "schema/records.h"
#include "tally/status.h"
#include "tally/types.h"

namespace counterctl {
namespace {

namespace engine = tally::engine;
namespace schema = tally::schema;

// Printable() without a length cut: names and event ids are short, and a
// debugging dump should show them whole.
std::string Text(std::string_view s) { return Printable(s, s.size() * 4 + 4); }

std::string Signed(int64_t v) {
  return (v >= 0 ? "+" : "") + std::to_string(v);
}

const char* WidthName(uint8_t bucket) {
  return bucket <= static_cast<uint8_t>(tally::BucketWidth::kDay)
             ? tally::BucketWidthName(static_cast<tally::BucketWidth>(bucket))
             : "unknown";
}

// Builds one op's text line and JSON object side by side, so the two always
// carry the same facts in the same order.
class OpBuilder {
 public:
  explicit OpBuilder(const std::string& kind) : text_(kind) {
    json_ = Json::object();
    json_["op"] = kind;
  }
  // A word of the text with no key ("put" in "counter-meta put"), also
  // stored in JSON under `json_key`.
  OpBuilder& Word(const std::string& json_key, const std::string& word) {
    text_ += " " + word;
    json_[json_key] = word;
    return *this;
  }
  OpBuilder& Str(const std::string& key, std::string_view value) {
    return Str(key, key, value);
  }
  OpBuilder& Str(const std::string& text_key, const std::string& json_key,
                 std::string_view value) {
    text_ += " " + text_key + "=" + Text(value);
    json_[json_key] = std::string(value);
    return *this;
  }
  OpBuilder& Quoted(const std::string& key, std::string_view value) {
    text_ += " " + key + "=\"" + Text(value) + "\"";
    json_[key] = std::string(value);
    return *this;
  }
  OpBuilder& Int(const std::string& key, int64_t value) {
    text_ += " " + key + "=" + std::to_string(value);
    json_[key] = value;
    return *this;
  }
  OpBuilder& Uint(const std::string& key, uint64_t value) {
    text_ += " " + key + "=" + std::to_string(value);
    json_[key] = value;
    return *this;
  }
  // A delta as "+5" / "-3" in text, a number in JSON.
  OpBuilder& Delta(int64_t value) {
    text_ += " delta=" + Signed(value);
    json_["delta"] = value;
    return *this;
  }
  // A time: ISO-8601 UTC in text; "<key>_ms" and "<key>" in JSON.
  OpBuilder& Time(const std::string& key, int64_t ms) {
    text_ += " " + key + "=" + FormatUtcMillis(ms);
    SetTime(&json_, key, ms);
    return *this;
  }
  // Bytes in hex: "<key>=ab01" in text, "<key>_hex" in JSON.
  OpBuilder& Bytes(const std::string& key, std::string_view bytes) {
    text_ += " " + key + "=" + Hex(bytes);
    json_[key + "_hex"] = Hex(bytes);
    return *this;
  }
  // The counter a key belongs to: "counter=NAME", or "id=N" when the
  // catalog no longer (or never) had it; JSON has both, counter null then.
  OpBuilder& Counter(const WalNames& names, uint64_t id) {
    auto it = names.counters.find(id);
    if (it != names.counters.end()) {
      text_ += " counter=" + Text(it->second);
      json_["counter"] = it->second;
    } else {
      text_ += " id=" + std::to_string(id);
      json_["counter"] = nullptr;
    }
    json_["counter_id"] = id;
    return *this;
  }
  WalOp Done() { return WalOp{std::move(text_), std::move(json_)}; }

 private:
  std::string text_;
  Json json_;
};

std::string_view View(const rocksdb::Slice& s) {
  return std::string_view(s.data(), s.size());
}

// What kind of write an entry is, as raw entries name it.
enum class Type { kPut, kMerge, kDelete, kSingleDelete };

const char* TypeName(Type t) {
  switch (t) {
    case Type::kPut:
      return "put";
    case Type::kMerge:
      return "merge";
    case Type::kDelete:
      return "delete";
    case Type::kSingleDelete:
      return "single-delete";
  }
  return "unknown";
}

class Decoder : public rocksdb::WriteBatch::Handler {
 public:
  Decoder(const WalNames& names, std::vector<WalOp>* ops)
      : names_(names), ops_(ops) {}

  rocksdb::Status PutCF(uint32_t cf, const rocksdb::Slice& key,
                        const rocksdb::Slice& value) override {
    Entry(cf, Type::kPut, View(key), View(value));
    return rocksdb::Status::OK();
  }
  rocksdb::Status MergeCF(uint32_t cf, const rocksdb::Slice& key,
                          const rocksdb::Slice& value) override {
    Entry(cf, Type::kMerge, View(key), View(value));
    return rocksdb::Status::OK();
  }
  rocksdb::Status DeleteCF(uint32_t cf, const rocksdb::Slice& key) override {
    Entry(cf, Type::kDelete, View(key), {});
    return rocksdb::Status::OK();
  }
  rocksdb::Status SingleDeleteCF(uint32_t cf,
                                 const rocksdb::Slice& key) override {
    Entry(cf, Type::kSingleDelete, View(key), {});
    return rocksdb::Status::OK();
  }
  rocksdb::Status DeleteRangeCF(uint32_t cf, const rocksdb::Slice& begin,
                                const rocksdb::Slice& end) override {
    DeleteRange(cf, View(begin), View(end));
    return rocksdb::Status::OK();
  }
  // Nothing tally writes: kept visible as raw entries.
  rocksdb::Status PutEntityCF(uint32_t cf, const rocksdb::Slice& key,
                              const rocksdb::Slice& entity) override {
    Raw(cf, "put-entity", View(key), View(entity), "wide-column entity");
    return rocksdb::Status::OK();
  }
  rocksdb::Status PutBlobIndexCF(uint32_t cf, const rocksdb::Slice& key,
                                 const rocksdb::Slice& value) override {
    Raw(cf, "put-blob-index", View(key), View(value), "blob index");
    return rocksdb::Status::OK();
  }
  void LogData(const rocksdb::Slice& blob) override {
    ops_->push_back(OpBuilder("log-data").Bytes("blob", View(blob)).Done());
  }
  rocksdb::Status MarkBeginPrepare(bool) override {
    return Marker("begin-prepare", {});
  }
  rocksdb::Status MarkEndPrepare(const rocksdb::Slice& xid) override {
    return Marker("end-prepare", View(xid));
  }
  rocksdb::Status MarkNoop(bool) override { return Marker("noop", {}); }
  rocksdb::Status MarkRollback(const rocksdb::Slice& xid) override {
    return Marker("rollback", View(xid));
  }
  rocksdb::Status MarkCommit(const rocksdb::Slice& xid) override {
    return Marker("commit", View(xid));
  }
  rocksdb::Status MarkCommitWithTimestamp(const rocksdb::Slice& xid,
                                          const rocksdb::Slice&) override {
    return Marker("commit-with-timestamp", View(xid));
  }

 private:
  // The family's name, or empty when the id is unknown.
  std::string Family(uint32_t cf) const {
    auto it = names_.families.find(cf);
    return it == names_.families.end() ? std::string() : it->second;
  }

  void Raw(uint32_t cf, const char* type, std::string_view key,
           std::string_view value, std::string_view reason) {
    OpBuilder op("raw");
    const std::string family = Family(cf);
    if (family.empty()) {
      op.Uint("family_id", cf);
    } else {
      op.Str("family", family);
    }
    op.Str("type", type).Bytes("key", key);
    if (!value.empty()) op.Bytes("value", value);
    op.Quoted("reason", reason);
    ops_->push_back(op.Done());
  }

  rocksdb::Status Marker(const char* type, std::string_view xid) {
    OpBuilder op("raw");
    op.Str("type", type);
    if (!xid.empty()) op.Bytes("xid", xid);
    op.Quoted("reason", "transaction marker");
    ops_->push_back(op.Done());
    return rocksdb::Status::OK();
  }

  void Entry(uint32_t cf, Type type, std::string_view key,
             std::string_view value) {
    const std::string family = Family(cf);
    std::string reason;
    if (family == engine::kMetaFamily) {
      reason = Meta(type, key, value);
    } else if (family == engine::kShardsFamily) {
      reason = Shard(type, key, value);
    } else if (family == engine::kEventsFamily) {
      reason = Event(type, key, value);
    } else if (family == engine::kRollupsFamily) {
      reason = Rollup(type, key, value);
    } else {
      reason = family.empty() ? "unknown column family"
                              : "not a family this version decodes";
    }
    if (!reason.empty()) Raw(cf, TypeName(type), key, value, reason);
  }

  // Each family's decoder appends one op and returns "", or returns why the
  // entry is not what tally writes there (the caller prints it raw).
  std::string Meta(Type type, std::string_view key, std::string_view value) {
    if (key == std::string_view(engine::kHeaderKey) && type == Type::kPut) {
      schema::HeaderRecord rec;
      tally::Status s = schema::DecodeHeader(value, &rec);
      if (!s.ok()) return s.ToString();
      ops_->push_back(OpBuilder("header")
                          .Word("action", "put")
                          .Uint("format_version", rec.format_version)
                          .Uint("next_counter_id", rec.next_counter_id)
                          .Done());
      return "";
    }
    if (key == std::string_view(engine::kTimeMarkKey) && type == Type::kPut) {
      if (value.size() != 8) return "malformed time mark";
      ops_->push_back(
          OpBuilder("time-mark")
              .Word("action", "put")
              .Time("at",
                    static_cast<int64_t>(engine::DecodeFixed64BE(value.data())))
              .Done());
      return "";
    }
    if (key.size() < 2 || key[0] != engine::kCounterKeyTag) {
      return "unknown meta key";
    }
    const std::string_view name = key.substr(1);
    if (type == Type::kDelete || type == Type::kSingleDelete) {
      ops_->push_back(OpBuilder("counter-meta")
                          .Word("action", "delete")
                          .Str("name", name)
                          .Done());
      return "";
    }
    if (type != Type::kPut) return "unexpected write to a counter's meta key";
    schema::CounterRecord rec;
    tally::Status s = schema::DecodeCounter(value, &rec);
    if (!s.ok()) return s.ToString();
    if (rec.name != name) return "the record's name differs from its key's";
    OpBuilder op("counter-meta");
    op.Word("action", "put")
        .Str("name", name)
        .Uint("id", rec.id)
        .Uint("shards", rec.shard_count)
        .Uint("flags", rec.flags);
    if (rec.bucket != 0) op.Str("bucket_width", WidthName(rec.bucket));
    if (rec.dedupe_window_ms != 0) {
      op.Int("dedupe_window_ms", rec.dedupe_window_ms);
    }
    if (rec.retention_ms != 0) op.Int("retention_ms", rec.retention_ms);
    ops_->push_back(op.Done());
    return "";
  }

  std::string Shard(Type type, std::string_view key, std::string_view value) {
    uint64_t id = 0;
    uint32_t shard = 0;
    int64_t bucket_ms = 0;
    bool bucketed = false;
    if (key.size() == engine::kShardKeyBytes) {
      if (!engine::DecodeShardKey(key, &id, &shard)) return "bad shard key";
    } else if (key.size() == engine::kBucketShardKeyBytes) {
      if (!engine::DecodeBucketShardKey(key, &id, &bucket_ms, &shard)) {
        return "bad bucket shard key";
      }
      bucketed = true;
    } else {
      return "a shard key is 12 or 20 bytes";
    }
    int64_t v = 0;
    if (type != Type::kDelete && type != Type::kSingleDelete &&
        !engine::DecodeInt64(value, &v)) {
      return "a shard value or operand is 8 bytes";
    }
    const char* kind = type == Type::kMerge ? "merge"
                       : type == Type::kPut ? "shard-put"
                                            : "shard-delete";
    OpBuilder op(kind);
    op.Counter(names_, id);
    if (bucketed) op.Time("bucket", bucket_ms);
    op.Uint("shard", shard);
    if (type == Type::kMerge) op.Delta(v);
    if (type == Type::kPut) op.Int("value", v);
    ops_->push_back(op.Done());
    return "";
  }

  std::string Event(Type type, std::string_view key, std::string_view value) {
    uint64_t id = 0;
    std::string_view event_id;
    if (!engine::DecodeMarkerKey(key, &id, &event_id)) return "bad marker key";
    if (type == Type::kDelete || type == Type::kSingleDelete) {
      ops_->push_back(OpBuilder("marker-delete")
                          .Counter(names_, id)
                          .Str("event", "event_id", event_id)
                          .Done());
      return "";
    }
    if (type != Type::kPut) return "unexpected write to a marker key";
    schema::MarkerRecord rec;
    tally::Status s = schema::DecodeMarker(value, &rec);
    if (!s.ok()) return s.ToString();
    if (rec.counter_id != id || rec.event_id != event_id) {
      return "the marker's counter or event id differs from its key's";
    }
    OpBuilder op("marker");
    op.Counter(names_, id)
        .Str("event", "event_id", event_id)
        .Uint("shard", rec.shard)
        .Int("delta", rec.delta)
        .Time("created_at", rec.created_at_ms);
    if (rec.expires_at_ms != 0) op.Time("expires_at", rec.expires_at_ms);
    ops_->push_back(op.Done());
    return "";
  }

  std::string Rollup(Type type, std::string_view key, std::string_view value) {
    if (key.size() != static_cast<size_t>(engine::kCounterIdBytes)) {
      return "a roll-up key is 8 bytes";
    }
    const uint64_t id = engine::DecodeFixed64BE(key.data());
    if (type == Type::kDelete || type == Type::kSingleDelete) {
      ops_->push_back(OpBuilder("rollup-delete").Counter(names_, id).Done());
      return "";
    }
    if (type != Type::kPut) return "unexpected write to a roll-up key";
    engine::RollupRecord rec;
    if (!engine::DecodeRollup(value, &rec)) {
      return "a roll-up value is 24 bytes";
    }
    ops_->push_back(OpBuilder("rollup")
                        .Counter(names_, id)
                        .Int("value", rec.value)
                        .Uint("as_of_seq", rec.sequence)
                        .Time("as_of", rec.as_of_ms)
                        .Done());
    return "";
  }

  // A counter's whole range, [u64be(id), u64be(id+1)), is how tally deletes
  // a counter; any other range is shown by its bounds.
  void DeleteRange(uint32_t cf, std::string_view begin, std::string_view end) {
    OpBuilder op("delete-range");
    const std::string family = Family(cf);
    if (family.empty()) {
      op.Uint("family_id", cf);
    } else {
      op.Str("family", family);
    }
    constexpr size_t kId = engine::kCounterIdBytes;
    if (begin.size() == kId && end.size() == kId) {
      const uint64_t b = engine::DecodeFixed64BE(begin.data());
      const uint64_t e = engine::DecodeFixed64BE(end.data());
      if (b != UINT64_MAX && e == b + 1) {
        ops_->push_back(op.Counter(names_, b).Done());
        return;
      }
    }
    ops_->push_back(op.Bytes("begin", begin).Bytes("end", end).Done());
  }

  const WalNames& names_;
  std::vector<WalOp>* ops_;
};

}  // namespace

std::string Hex(std::string_view bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) {
    const auto b = static_cast<uint8_t>(c);
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 0xf]);
  }
  return out;
}

WalBatch DecodeWalBatch(uint64_t seq, const rocksdb::WriteBatch& batch,
                        const WalNames& names) {
  WalBatch out;
  out.seq = seq;
  // A batch starts with a 12-byte header (sequence, count); the WAL reader
  // never returns a shorter one, but Count() would read past it.
  constexpr size_t kBatchHeaderBytes = 12;
  if (batch.GetDataSize() < kBatchHeaderBytes) {
    out.ops.push_back(OpBuilder("raw")
                          .Str("type", "batch")
                          .Bytes("value", View(batch.Data()))
                          .Quoted("reason", "shorter than a batch header")
                          .Done());
    return out;
  }
  out.count = batch.Count();
  Decoder decoder(names, &out.ops);
  rocksdb::Status rs = batch.Iterate(&decoder);
  if (!rs.ok()) {
    out.ops.push_back(OpBuilder("raw")
                          .Str("type", "batch")
                          .Bytes("value", View(batch.Data()))
                          .Quoted("reason", rs.ToString())
                          .Done());
  }
  return out;
}

std::string WalBatchText(const WalBatch& batch) {
  std::string out = "batch seq=" + std::to_string(batch.seq) +
                    " ops=" + std::to_string(batch.count) + "\n";
  for (const WalOp& op : batch.ops) out += "  " + op.text + "\n";
  return out;
}

Json WalBatchJson(const WalBatch& batch) {
  Json ops = Json::array();
  for (const WalOp& op : batch.ops) ops.push_back(op.json);
  return Json{{"seq", batch.seq}, {"count", batch.count}, {"ops", ops}};
}

bool FindWalGap(uint64_t prev_seq, uint32_t prev_count, uint64_t next_seq,
                WalGap* gap) {
  const uint64_t expected = prev_seq + prev_count;
  if (next_seq <= expected) return false;
  gap->from = expected;
  gap->to = next_seq - 1;
  return true;
}

std::string WalGapText(const WalGap& gap) {
  return "gap from=" + std::to_string(gap.from) +
         " to=" + std::to_string(gap.to) + "\n";
}

Json WalGapJson(const WalGap& gap) {
  return Json{{"gap_from", gap.from}, {"gap_to", gap.to}};
}

}  // namespace counterctl
