// Fuzzes every entry of the table of column families
// (engine/column_families.h): its key decoder, value decoder and WAL
// renderer on arbitrary bytes, as a damaged database or WAL could hold
// them, and the whole-batch WAL decoder (tally::DecodeWalBatch). The
// target walks the table, so a family added to it is fuzzed without a
// change here. Properties:
//  - no decoder crashes, reads out of bounds (ASAN) or hits undefined
//    behaviour (UBSAN); each answers "" or a reason;
//  - the answer does not depend on the bytes' alignment;
//  - a renderer of a decoded record names an op (or a reason);
//  - an outbox entry built from fuzzer-chosen fields (a keyed counter's key
//    among them), under its seq's key, decodes to the same fields (outbox
//    records had no fuzzing before).
// Input: the first byte picks the split between key and value.
// The batch decoder gets batches that rocksdb::WriteBatch built from
// fuzzer-chosen ops, not the raw bytes: RocksDB's log reader hands on only
// checksummed batches RocksDB wrote, and Debian's librocksdb (built with
// assertions) aborts inside WriteBatch::Iterate on some malformed ones (an
// empty key), which no WAL RocksDB wrote holds.

#include <fuzzer/FuzzedDataProvider.h>
#include <rocksdb/comparator.h>
#include <rocksdb/options.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "engine/coding.h"
#include "engine/column_families.h"
#include "engine/family_record.h"
#include "fuzz_check.h"
#include "schema/records.h"
#include "tally/dump.h"

namespace tally::engine {
namespace {

// A copy at an address that is not 8-aligned, exactly as long as `bytes`.
struct Misaligned {
  explicit Misaligned(std::string_view bytes)
      : storage_(new char[bytes.size() + 1]) {
    std::memcpy(storage_.get() + 1, bytes.data(), bytes.size());
    view = std::string_view(storage_.get() + 1, bytes.size());
  }
  std::string_view view;

 private:
  std::unique_ptr<char[]> storage_;
};

// Decodes and renders (key, value) in family `f`; returns the reason, if
// any, the record is not what tally writes.
std::string DecodeAll(const ColumnFamily& f, std::string_view key,
                      std::string_view value) {
  FamilyRecord rec;
  std::string bad = f.decode_key(key, &rec);
  if (!bad.empty()) return bad;
  DumpOp deleted;  // a delete carries no value
  if (f.render(WriteKind::kDelete, rec, &deleted).empty()) {
    FUZZ_CHECK(!deleted.op.empty());
  }
  bad = f.decode_value(value, &rec);
  if (!bad.empty()) return bad;
  for (WriteKind w : {WriteKind::kPut, WriteKind::kMerge}) {
    DumpOp op;
    if (f.render(w, rec, &op).empty()) FUZZ_CHECK(!op.op.empty());
  }
  return "";
}

void CheckFamilies(std::string_view key, std::string_view value) {
  const Misaligned k(key), v(value);
  for (const ColumnFamily& f : ColumnFamilies()) {
    FUZZ_CHECK(DecodeAll(f, key, value) == DecodeAll(f, k.view, v.view));
  }
}

void CheckOutboxRoundTrip(const uint8_t* data, size_t size) {
  FuzzedDataProvider fdp(data, size);
  schema::OutboxFields in;
  in.seq = fdp.ConsumeIntegralInRange<uint64_t>(1, UINT64_MAX);
  in.settled = fdp.ConsumeIntegralInRange<uint64_t>(0, in.seq - 1);
  in.delta = fdp.ConsumeIntegral<int64_t>();
  in.time_ms = fdp.ConsumeIntegral<int64_t>();
  in.origin_seq = fdp.ConsumeIntegral<uint64_t>();
  const std::string origin = fdp.ConsumeBool() ? std::string(32, 'f') : "";
  in.origin = origin;
  const std::string counter = fdp.ConsumeRandomLengthString(64);
  in.counter = counter;
  const std::string counter_key = fdp.ConsumeRandomLengthString(kMaxKeyBytes);
  in.key = counter_key;  // a keyed counter's key (format 4), or empty
  const std::string event_id = fdp.ConsumeRemainingBytesAsString();
  in.event_id = event_id;
  std::string value;
  schema::EncodeOutbox(in, &value);
  char key[8];
  EncodeFixed64BE(in.seq, key);
  FamilyRecord rec;
  FUZZ_CHECK(DecodeOutboxKey(std::string_view(key, 8), &rec).empty());
  FUZZ_CHECK(DecodeOutboxValue(Misaligned(value).view, &rec).empty());
  const schema::OutboxRecord& out = rec.outbox;
  FUZZ_CHECK(out.seq == in.seq && out.settled == in.settled &&
             out.delta == in.delta && out.time_ms == in.time_ms &&
             out.origin_seq == in.origin_seq && out.origin == in.origin &&
             out.counter == in.counter && out.key == in.key &&
             out.event_id == in.event_id);
}

// A column family handle with only an id: enough for WriteBatch to record
// which family an op is for.
class IdHandle final : public rocksdb::ColumnFamilyHandle {
 public:
  explicit IdHandle(uint32_t id) : id_(id) {}
  const std::string& GetName() const override { return name_; }
  uint32_t GetID() const override { return id_; }
  rocksdb::Status GetDescriptor(rocksdb::ColumnFamilyDescriptor*) override {
    return rocksdb::Status::NotSupported("fuzz handle");
  }
  const rocksdb::Comparator* GetComparator() const override {
    return rocksdb::BytewiseComparator();
  }

 private:
  uint32_t id_;
  std::string name_ = "fuzz";
};

// Up to 16 ops of fuzzer-chosen kind, family (0..6: one past the table),
// key (never empty, as RocksDB requires) and value.
std::string FuzzedBatch(const uint8_t* data, size_t size) {
  FuzzedDataProvider fdp(data, size);
  rocksdb::WriteBatch batch;
  for (int i = 0; i < 16 && fdp.remaining_bytes() > 0; ++i) {
    IdHandle cf(fdp.ConsumeIntegralInRange<uint32_t>(0, 6));
    std::string key = fdp.ConsumeRandomLengthString(64);
    if (key.empty()) key.push_back('\0');
    const std::string value = fdp.ConsumeRandomLengthString(64);
    rocksdb::Status s;
    switch (fdp.ConsumeIntegralInRange<int>(0, 3)) {
      case 0: s = batch.Put(&cf, key, value); break;
      case 1: s = batch.Merge(&cf, key, value); break;
      case 2: s = batch.Delete(&cf, key); break;
      default: s = batch.DeleteRange(&cf, key, value.empty() ? key : value);
    }
    FUZZ_CHECK(s.ok());
  }
  return batch.Data();
}

}  // namespace
}  // namespace tally::engine

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view all(reinterpret_cast<const char*>(data), size);
  if (!all.empty()) {
    const size_t split =
        std::min<size_t>(static_cast<uint8_t>(all[0]), all.size() - 1);
    tally::engine::CheckFamilies(all.substr(1, split), all.substr(1 + split));
  }
  // A WAL batch built from the same bytes, every family known by id.
  static const std::map<uint32_t, std::string> families = {
      {0, "default"}, {1, "meta"},    {2, "shards"},
      {3, "events"},  {4, "rollups"}, {5, "outbox"}};
  static const std::map<uint64_t, std::string> counters = {{1, "c"}};
  const tally::DumpBatch batch = tally::DecodeWalBatch(
      7, tally::engine::FuzzedBatch(data, size), families, counters);
  FUZZ_CHECK(batch.seq == 7);
  tally::engine::CheckOutboxRoundTrip(data, size);
  return 0;
}
