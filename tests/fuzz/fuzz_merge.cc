// Fuzzes the shard merge operator (engine/merge_operator.h) through
// RocksDB's own interface, rocksdb::MergeOperator, with a fuzzer-chosen
// base value and operands (mostly 8 bytes, sometimes another length).
// It checks the rules of docs/format.md against a model computed in
// __int128, not just the absence of crashes:
//  - FullMergeV2 never returns false (that would stop the database's
//    writes) and never points existing_operand at an input;
//  - any value or operand that is not 8 bytes gives the corrupt state
//    (an empty value);
//  - else an INT64_MIN input (the overflowed state) or a sum outside
//    [INT64_MIN+1, INT64_MAX] gives the overflowed state, i64le(INT64_MIN);
//  - else the result is i64le of the exact sum;
//  - PartialMergeMulti folds only all-valid operands whose exact sum fits,
//    and a full merge over its folded operand equals the full merge over
//    the operands it replaced.

#include <fuzzer/FuzzedDataProvider.h>
#include <rocksdb/merge_operator.h>
#include <rocksdb/slice.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/coding.h"
#include "engine/merge_operator.h"
#include "fuzz_check.h"

namespace tally::engine {
namespace {

using Wide = __int128;

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

std::string Int64Bytes(int64_t v) {
  char buf[kValueBytes];
  EncodeInt64(v, buf);
  return std::string(buf, kValueBytes);
}

// An operand or base value: usually a well-formed 8-byte int64 biased
// towards the edges, sometimes bytes of another length.
std::string ConsumeValue(FuzzedDataProvider* fdp) {
  switch (fdp->ConsumeIntegralInRange<int>(0, 7)) {
    case 0:
      return fdp->ConsumeRandomLengthString(12);  // often not 8 bytes
    case 1:
      return Int64Bytes(fdp->PickValueInArray<int64_t>(
          {kMin, kMin + 1, kMax, kMax - 1, -1, 0, 1}));
    case 2:
      return Int64Bytes(fdp->ConsumeIntegralInRange<int64_t>(-1000, 1000));
    default:
      return Int64Bytes(fdp->ConsumeIntegral<int64_t>());
  }
}

// What the stored value must be after folding `values` (base first).
std::string Model(const std::vector<std::string>& values) {
  bool malformed = false;
  bool overflowed = false;
  Wide sum = 0;
  for (const std::string& v : values) {
    int64_t x;
    if (v.size() != static_cast<size_t>(kValueBytes)) {
      malformed = true;
      continue;
    }
    FUZZ_CHECK(DecodeInt64(v, &x));
    if (x == kMin) {
      overflowed = true;
    } else {
      sum += x;
    }
  }
  if (malformed) return std::string();
  if (overflowed || sum <= static_cast<Wide>(kMin) ||
      sum > static_cast<Wide>(kMax)) {
    return Int64Bytes(kOverflowedValue);
  }
  return Int64Bytes(static_cast<int64_t>(sum));
}

std::string FullMerge(const rocksdb::MergeOperator& op,
                      const std::optional<std::string>& base,
                      const std::vector<std::string>& operands) {
  const rocksdb::Slice key("\0\0\0\0\0\0\0\1\0\0\0\0", kShardKeyBytes);
  rocksdb::Slice base_slice;
  if (base) base_slice = rocksdb::Slice(*base);
  std::vector<rocksdb::Slice> slices(operands.begin(), operands.end());
  const rocksdb::MergeOperator::MergeOperationInput in(
      key, base ? &base_slice : nullptr, slices, nullptr);
  std::string new_value = "stale";
  rocksdb::Slice existing_operand(nullptr, 0);
  rocksdb::MergeOperator::MergeOperationOutput out(new_value, existing_operand);
  FUZZ_CHECK(op.FullMergeV2(in, &out));
  FUZZ_CHECK(existing_operand.data() == nullptr);
  return new_value;
}

}  // namespace
}  // namespace tally::engine

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tally::engine;
  static const std::shared_ptr<rocksdb::MergeOperator> op =
      NewInt64AddOperator();
  FuzzedDataProvider fdp(data, size);

  std::optional<std::string> base;
  if (fdp.ConsumeBool()) base = ConsumeValue(&fdp);
  std::vector<std::string> operands;
  const size_t n = fdp.ConsumeIntegralInRange<size_t>(0, 64);
  while (operands.size() < n && fdp.remaining_bytes() > 0) {
    operands.push_back(ConsumeValue(&fdp));
  }

  // Full merge against the model.
  std::vector<std::string> all;
  if (base) all.push_back(*base);
  all.insert(all.end(), operands.begin(), operands.end());
  const std::string full = FullMerge(*op, base, operands);
  FUZZ_CHECK(full == Model(all));

  // Stickiness: folding more operands into a corrupt or overflowed value
  // keeps it so.
  if (full.empty() || full == Int64Bytes(kOverflowedValue)) {
    FUZZ_CHECK(FullMerge(*op, full, {Int64Bytes(1), Int64Bytes(-1)}) == full);
  }

  // Partial merge of a fuzzer-chosen run of the operands.
  if (operands.size() >= 2) {
    const size_t first =
        fdp.ConsumeIntegralInRange<size_t>(0, operands.size() - 2);
    const size_t last =
        fdp.ConsumeIntegralInRange<size_t>(first + 2, operands.size());
    std::deque<rocksdb::Slice> run;
    bool foldable = true;
    Wide sum = 0;
    for (size_t i = first; i < last; ++i) {
      run.emplace_back(operands[i]);
      int64_t v;
      if (!DecodeInt64(operands[i], &v) || v == kOverflowedValue) {
        foldable = false;
      } else {
        sum += v;
      }
    }
    foldable = foldable && sum > static_cast<Wide>(kOverflowedValue) &&
               sum <= static_cast<Wide>(std::numeric_limits<int64_t>::max());
    std::string folded = "stale";
    const bool ok =
        op->PartialMergeMulti(rocksdb::Slice("k"), run, &folded, nullptr);
    FUZZ_CHECK(ok == foldable);
    if (ok) {
      FUZZ_CHECK(folded == Int64Bytes(static_cast<int64_t>(sum)));
      // Replacing the run by its fold changes no full merge.
      std::vector<std::string> replaced(operands.begin(),
                                        operands.begin() + first);
      replaced.push_back(folded);
      replaced.insert(replaced.end(), operands.begin() + last, operands.end());
      FUZZ_CHECK(FullMerge(*op, base, replaced) == full);
    }
  }
  return 0;
}
