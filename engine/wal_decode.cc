// tally::DecodeWalBatch: one RocksDB write batch decoded into tally records
// by the decoders and renderers of the table of column families
// (engine/column_families.h). Never fails: what tally does not write there
// becomes a raw op with its bytes and the reason.

#include <rocksdb/slice.h>
#include <rocksdb/status.h>
#include <rocksdb/write_batch.h>

#include <utility>

#include "engine/coding.h"
#include "engine/column_families.h"
#include "engine/family_record.h"
#include "tally/dump.h"

namespace tally {
namespace {

using engine::ColumnFamily;
using engine::FamilyRecord;
using engine::WriteKind;

std::string_view View(const rocksdb::Slice& s) {
  return std::string_view(s.data(), s.size());
}

DumpField Bytes(std::string key, std::string_view bytes) {
  DumpField f;
  f.kind = DumpField::Kind::kBytes;
  f.key = std::move(key);
  f.text = std::string(bytes);
  return f;
}

DumpField Quoted(std::string key, std::string text) {
  DumpField f;
  f.kind = DumpField::Kind::kQuoted;
  f.key = std::move(key);
  f.text = std::move(text);
  return f;
}

class Decoder : public rocksdb::WriteBatch::Handler {
 public:
  Decoder(const std::map<uint32_t, std::string>& families,
          const std::map<uint64_t, std::string>& counters,
          std::vector<DumpOp>* ops)
      : families_(families), counters_(counters), ops_(ops) {}

  rocksdb::Status PutCF(uint32_t cf, const rocksdb::Slice& key,
                        const rocksdb::Slice& value) override {
    Entry(cf, WriteKind::kPut, "put", View(key), View(value));
    return rocksdb::Status::OK();
  }
  rocksdb::Status MergeCF(uint32_t cf, const rocksdb::Slice& key,
                          const rocksdb::Slice& value) override {
    Entry(cf, WriteKind::kMerge, "merge", View(key), View(value));
    return rocksdb::Status::OK();
  }
  rocksdb::Status DeleteCF(uint32_t cf, const rocksdb::Slice& key) override {
    Entry(cf, WriteKind::kDelete, "delete", View(key), {});
    return rocksdb::Status::OK();
  }
  rocksdb::Status SingleDeleteCF(uint32_t cf,
                                 const rocksdb::Slice& key) override {
    Entry(cf, WriteKind::kDelete, "single-delete", View(key), {});
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
    ops_->push_back(DumpOp{"log-data", "", {Bytes("blob", View(blob))}});
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
    auto it = families_.find(cf);
    return it == families_.end() ? std::string() : it->second;
  }

  // "family=NAME", or "family_id=N" when the id is unknown.
  void AddFamily(uint32_t cf, DumpOp* op) const {
    op->family = Family(cf);
    if (op->family.empty()) {
      op->fields.push_back(engine::UintField("family_id", cf));
    } else {
      op->fields.push_back(engine::TextField("family", op->family));
    }
  }

  // Names the counter fields the catalog knows.
  void Name(DumpOp* op) const {
    for (DumpField& f : op->fields) {
      if (f.kind != DumpField::Kind::kCounter) continue;
      auto it = counters_.find(f.u);
      f.named = it != counters_.end();
      if (f.named) f.text = it->second;
    }
  }

  void Raw(uint32_t cf, const char* type, std::string_view key,
           std::string_view value, std::string reason) {
    DumpOp op{"raw", "", {}};
    AddFamily(cf, &op);
    op.fields.push_back(engine::TextField("type", type));
    op.fields.push_back(Bytes("key", key));
    if (!value.empty()) op.fields.push_back(Bytes("value", value));
    op.fields.push_back(Quoted("reason", std::move(reason)));
    ops_->push_back(std::move(op));
  }

  rocksdb::Status Marker(const char* type, std::string_view xid) {
    DumpOp op{"raw", "", {engine::TextField("type", type)}};
    if (!xid.empty()) op.fields.push_back(Bytes("xid", xid));
    op.fields.push_back(Quoted("reason", "transaction marker"));
    ops_->push_back(std::move(op));
    return rocksdb::Status::OK();
  }

  void Entry(uint32_t cf, WriteKind write, const char* type,
             std::string_view key, std::string_view value) {
    const std::string family = Family(cf);
    const ColumnFamily* f = engine::FindFamily(family);
    if (f == nullptr) {
      Raw(cf, type, key, value,
          family.empty() ? "unknown column family"
                         : "not a family this version decodes");
      return;
    }
    FamilyRecord rec;
    std::string bad = f->decode_key(key, &rec);
    if (bad.empty() && write != WriteKind::kDelete) {
      bad = f->decode_value(value, &rec);
    }
    DumpOp op;
    op.family = family;
    if (bad.empty()) bad = f->render(write, rec, &op);
    if (!bad.empty()) {
      Raw(cf, type, key, value, std::move(bad));
      return;
    }
    Name(&op);
    ops_->push_back(std::move(op));
  }

  // A counter's whole range, [u64be(id), u64be(id+1)), in a family that a
  // counter delete clears by range, is how tally deletes a counter, and one
  // key's range (engine::DecodeKeyRange) how it deletes a key of a keyed
  // counter; any other range (an outbox acknowledgement: seqs) is shown by
  // its bounds.
  void DeleteRange(uint32_t cf, std::string_view begin, std::string_view end) {
    DumpOp op{"delete-range", "", {}};
    AddFamily(cf, &op);
    const ColumnFamily* f = engine::FindFamily(op.family);
    const bool by_counter =
        f != nullptr && f->on_delete == engine::OnCounterDelete::kCounterRange;
    uint64_t id = 0;
    std::string_view key;
    // One key's reservations, held or closed (DeleteKey): holds keys carry
    // a tag before the key (engine::HoldRange).
    char tag = 0;
    std::string_view none;
    // A hold key with a one-byte id stands for the range's begin.
    const std::string probe = std::string(begin) + "-";
    std::string range_begin, range_end;
    if (op.family == engine::kHoldsFamily &&
        engine::DecodeHoldKey(probe, &id, &tag, &key, &none) &&
        (engine::HoldRange(id, tag, key, &range_begin, &range_end),
         range_begin == begin && range_end == end)) {
      op.fields.push_back(engine::CounterField(id));
      op.fields.push_back(engine::WordField(
          "holds", tag == engine::kOpenHoldTag ? "held" : "closed"));
      if (!key.empty()) {
        op.fields.push_back(engine::TextField("key", std::string(key)));
      }
      Name(&op);
      ops_->push_back(std::move(op));
      return;
    }
    if (by_counter && engine::DecodeKeyRange(begin, end, &id, &key)) {
      op.fields.push_back(engine::CounterField(id));
      op.fields.push_back(engine::TextField("key", std::string(key)));
      Name(&op);
      ops_->push_back(std::move(op));
      return;
    }
    constexpr size_t kId = engine::kCounterIdBytes;
    if (by_counter && begin.size() == kId && end.size() == kId) {
      const uint64_t b = engine::DecodeFixed64BE(begin.data());
      const uint64_t e = engine::DecodeFixed64BE(end.data());
      if (b != UINT64_MAX && e == b + 1) {
        op.fields.push_back(engine::CounterField(b));
        Name(&op);
        ops_->push_back(std::move(op));
        return;
      }
    }
    op.fields.push_back(Bytes("begin", begin));
    op.fields.push_back(Bytes("end", end));
    ops_->push_back(std::move(op));
  }

  const std::map<uint32_t, std::string>& families_;
  const std::map<uint64_t, std::string>& counters_;
  std::vector<DumpOp>* ops_;
};

DumpOp RawBatch(std::string_view bytes, std::string reason) {
  return DumpOp{"raw",
                "",
                {engine::TextField("type", "batch"), Bytes("value", bytes),
                 Quoted("reason", std::move(reason))}};
}

}  // namespace

DumpBatch DecodeWalBatch(uint64_t seq, std::string_view batch_bytes,
                         const std::map<uint32_t, std::string>& families,
                         const std::map<uint64_t, std::string>& counters) {
  DumpBatch out;
  out.seq = seq;
  // A batch starts with a 12-byte header (sequence, count); the WAL reader
  // never returns a shorter one, but Count() would read past it.
  constexpr size_t kBatchHeaderBytes = 12;
  if (batch_bytes.size() < kBatchHeaderBytes) {
    out.ops.push_back(RawBatch(batch_bytes, "shorter than a batch header"));
    return out;
  }
  rocksdb::WriteBatch batch{std::string(batch_bytes)};
  out.count = batch.Count();
  Decoder decoder(families, counters, &out.ops);
  rocksdb::Status rs = batch.Iterate(&decoder);
  if (!rs.ok()) out.ops.push_back(RawBatch(batch_bytes, rs.ToString()));
  return out;
}

}  // namespace tally
