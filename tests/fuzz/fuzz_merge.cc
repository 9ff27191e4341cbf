// Fuzzes the shard merge operator (engine/merge_operator.h) through
// RocksDB's own interface, rocksdb::MergeOperator, with a fuzzer-chosen
// base value and operands (mostly 8 bytes, sometimes 16-byte wide values or
// another length). It checks the rules of docs/format.md against a model
// computed in checked __int128, not just the absence of crashes:
//  - FullMergeV2 never returns false (that would stop the database's
//    writes) and never points existing_operand at an input;
//  - any value or operand that is neither 8 nor 16 bytes gives the corrupt
//    state (an empty value);
//  - else an 8-byte INT64_MIN input (the overflowed state) or an exact
//    total beyond 128 bits (whatever the order) gives the overflowed state,
//    i64le(INT64_MIN);
//  - else the result is the exact sum: i64le when it lies in
//    [INT64_MIN+1, INT64_MAX], else i128le;
//  - PartialMergeMulti folds exactly the runs of exact operands whose total
//    lies within 128 bits, into that encoding, and a full merge over its
//    folded operand equals the full merge over the operands it replaced.

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

std::string WideBytes(Wide v) {
  std::string out;
  EncodeShardValue(v, &out);
  return out;
}

constexpr Wide kWideMax =
    static_cast<Wide>(~static_cast<unsigned __int128>(0) >> 1);

// An operand or base value: usually a well-formed 8-byte int64 biased
// towards the edges, sometimes a wide value or bytes of another length.
std::string ConsumeValue(FuzzedDataProvider* fdp) {
  switch (fdp->ConsumeIntegralInRange<int>(0, 8)) {
    case 0:
      return fdp->ConsumeRandomLengthString(18);  // often neither 8 nor 16
    case 8: {
      // 16 raw bytes, biased to the edges of 128 bits.
      const Wide w = fdp->ConsumeBool()
                         ? (fdp->ConsumeBool() ? kWideMax : -kWideMax - 1)
                         : static_cast<Wide>(fdp->ConsumeIntegral<int64_t>()) *
                               fdp->ConsumeIntegral<int64_t>();
      char buf[kWideValueBytes];
      auto u = static_cast<unsigned __int128>(w);
      for (char& b : buf) {
        b = static_cast<char>(u & 0xff);
        u >>= 8;
      }
      return std::string(buf, sizeof buf);
    }
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
  // The exact total, in 128 bits plus however many the additions need
  // (checked against ExactSum's carry word independently: each value is
  // split into its top and bottom 64 bits).
  Wide top = 0;                  // sum of the values' signed top halves
  unsigned __int128 bottom = 0;  // sum of their unsigned bottom halves
  auto add = [&](Wide w) {
    top += w >> 64;  // arithmetic shift: floor(w / 2^64)
    bottom += static_cast<uint64_t>(static_cast<unsigned __int128>(w));
  };
  for (const std::string& v : values) {
    if (v.size() == static_cast<size_t>(kValueBytes)) {
      int64_t x;
      FUZZ_CHECK(DecodeInt64(v, &x));
      if (x == kMin) {
        overflowed = true;
      } else {
        add(x);
      }
    } else if (v.size() == static_cast<size_t>(kWideValueBytes)) {
      unsigned __int128 u = 0;
      for (int i = kWideValueBytes - 1; i >= 0; --i) {
        u = (u << 8) | static_cast<uint8_t>(v[i]);
      }
      add(static_cast<Wide>(u));
    } else {
      malformed = true;
    }
  }
  if (malformed) return std::string();
  // total = top * 2^64 + bottom (at most 65 values: no term overflows).
  top += static_cast<Wide>(bottom >> 64);
  const uint64_t low = static_cast<uint64_t>(bottom);
  // Within 128 bits iff top fits a signed 64-bit word.
  if (overflowed || top < static_cast<Wide>(kMin) ||
      top > static_cast<Wide>(kMax)) {
    return Int64Bytes(kOverflowedValue);
  }
  const Wide sum =
      static_cast<Wide>((static_cast<unsigned __int128>(top) << 64) | low);
  if (sum > static_cast<Wide>(kMin) && sum <= static_cast<Wide>(kMax)) {
    return Int64Bytes(static_cast<int64_t>(sum));
  }
  std::string out = WideBytes(sum);
  FUZZ_CHECK(out.size() == static_cast<size_t>(kWideValueBytes));
  return out;
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
    std::vector<std::string> run_values;
    for (size_t i = first; i < last; ++i) {
      run.emplace_back(operands[i]);
      run_values.push_back(operands[i]);
    }
    // Foldable: every operand exact and the sum within 128 bits, i.e. the
    // model neither corrupt nor overflowed; the fold is the model's value.
    const std::string expected = Model(run_values);
    const bool foldable =
        !expected.empty() && expected != Int64Bytes(kOverflowedValue);
    std::string folded = "stale";
    const bool ok =
        op->PartialMergeMulti(rocksdb::Slice("k"), run, &folded, nullptr);
    FUZZ_CHECK(ok == foldable);
    if (ok) {
      FUZZ_CHECK(folded == expected);
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
