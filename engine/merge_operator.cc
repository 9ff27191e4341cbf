#include "engine/merge_operator.h"

#include <string_view>

#include "engine/coding.h"

namespace tally::engine {
namespace {

std::string_view View(const rocksdb::Slice& s) { return {s.data(), s.size()}; }

class Int64AddOperator final : public rocksdb::MergeOperator {
 public:
  // The name is recorded in the OPTIONS file, which only RocksDB's own
  // tools read (counterctl ldb); the value format is docs/format.md's.
  const char* Name() const override { return kInt64AddName; }

  bool FullMergeV2(const MergeOperationInput& in,
                   MergeOperationOutput* out) const override {
    ExactSum sum;
    bool overflowed = false;
    bool malformed = false;
    auto add = [&](const rocksdb::Slice& s) {
      ShardSum v;
      switch (DecodeShardValue(View(s), &v)) {
        case ShardValue::kMalformed:
          malformed = true;
          break;
        case ShardValue::kOverflowed:
          overflowed = true;
          break;
        case ShardValue::kExact:
          sum.Add(v);
          break;
      }
    };
    if (in.existing_value != nullptr) add(*in.existing_value);
    for (const rocksdb::Slice& op : in.operand_list) add(op);

    if (malformed) {
      // Corruption is data: keep the key readable-as-corrupt instead of
      // failing the compaction (see the header comment).
      out->new_value.clear();
    } else if (overflowed || !sum.Fits()) {
      char buf[kValueBytes];
      EncodeInt64(kOverflowedValue, buf);
      out->new_value.assign(buf, kValueBytes);
    } else {
      EncodeShardValue(sum.value(), &out->new_value);
    }
    return true;
  }

  bool PartialMergeMulti(const rocksdb::Slice& /*key*/,
                         const std::deque<rocksdb::Slice>& operands,
                         std::string* new_value,
                         rocksdb::Logger* /*logger*/) const override {
    ExactSum sum;
    for (const rocksdb::Slice& op : operands) {
      ShardSum v;
      if (DecodeShardValue(View(op), &v) != ShardValue::kExact) {
        return false;  // kept as they are; the full merge decides
      }
      sum.Add(v);
    }
    if (!sum.Fits()) return false;
    EncodeShardValue(sum.value(), new_value);
    return true;
  }
};

}  // namespace

std::unique_ptr<rocksdb::MergeOperator> NewInt64AddOperator() {
  return std::make_unique<Int64AddOperator>();
}

}  // namespace tally::engine
