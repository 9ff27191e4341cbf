#include "engine/merge_operator.h"

#include <string_view>

#include "engine/coding.h"

namespace tally::engine {
namespace {

using Wide = __int128;

bool FitsShard(Wide v) {
  return v > static_cast<Wide>(kOverflowedValue) &&
         v <= static_cast<Wide>(std::numeric_limits<int64_t>::max());
}

void PutInt64(int64_t v, std::string* out) {
  char buf[kValueBytes];
  EncodeInt64(v, buf);
  out->assign(buf, kValueBytes);
}

std::string_view View(const rocksdb::Slice& s) { return {s.data(), s.size()}; }

class Int64AddOperator final : public rocksdb::MergeOperator {
 public:
  const char* Name() const override { return "tally.Int64Add.v1"; }

  bool FullMergeV2(const MergeOperationInput& in,
                   MergeOperationOutput* out) const override {
    Wide sum = 0;
    bool overflowed = false;
    bool malformed = false;
    auto add = [&](const rocksdb::Slice& s) {
      int64_t v;
      if (!DecodeInt64(View(s), &v)) {
        malformed = true;
      } else if (v == kOverflowedValue) {
        overflowed = true;
      } else {
        sum += v;
      }
    };
    if (in.existing_value != nullptr) add(*in.existing_value);
    for (const rocksdb::Slice& op : in.operand_list) add(op);

    if (malformed) {
      // Corruption is data: keep the key readable-as-corrupt instead of
      // failing the compaction (see the header comment).
      out->new_value.clear();
    } else if (overflowed || !FitsShard(sum)) {
      PutInt64(kOverflowedValue, &out->new_value);
    } else {
      PutInt64(static_cast<int64_t>(sum), &out->new_value);
    }
    return true;
  }

  bool PartialMergeMulti(const rocksdb::Slice& /*key*/,
                         const std::deque<rocksdb::Slice>& operands,
                         std::string* new_value,
                         rocksdb::Logger* /*logger*/) const override {
    Wide sum = 0;
    for (const rocksdb::Slice& op : operands) {
      int64_t v;
      if (!DecodeInt64(View(op), &v) || v == kOverflowedValue) return false;
      sum += v;
    }
    if (!FitsShard(sum)) return false;
    PutInt64(static_cast<int64_t>(sum), new_value);
    return true;
  }
};

}  // namespace

std::shared_ptr<rocksdb::MergeOperator> NewInt64AddOperator() {
  return std::make_shared<Int64AddOperator>();
}

}  // namespace tally::engine
