// The merge operator, called directly and through a real database.
#include "engine/merge_operator.h"

#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include <deque>
#include <limits>

#include "engine/coding.h"
#include "testutil/testutil.h"

namespace tally::engine {
namespace {

std::string Enc(int64_t v) {
  char b[8];
  EncodeInt64(v, b);
  return std::string(b, 8);
}

std::string FullMerge(const rocksdb::MergeOperator& op, const std::string* base,
                      const std::vector<std::string>& operands, bool* ok) {
  rocksdb::Slice base_slice;
  if (base) base_slice = *base;
  std::vector<rocksdb::Slice> ops(operands.begin(), operands.end());
  std::string out;
  rocksdb::Slice existing;
  rocksdb::MergeOperator::MergeOperationInput in(
      "k", base ? &base_slice : nullptr, ops, nullptr);
  rocksdb::MergeOperator::MergeOperationOutput o(out, existing);
  *ok = op.FullMergeV2(in, &o);
  return out;
}

TEST(MergeOperator, AddsBaseAndOperands) {
  auto op = NewInt64AddOperator();
  bool ok;
  std::string base = Enc(10);
  EXPECT_EQ(FullMerge(*op, &base, {Enc(5), Enc(-3)}, &ok), Enc(12));
  EXPECT_TRUE(ok);
  EXPECT_EQ(FullMerge(*op, nullptr, {Enc(1)}, &ok), Enc(1));
}

// A malformed operand must never read as 0 and must never fail (a false
// return bricks RocksDB 7.8.3 when it happens in compaction): it yields the
// empty "corrupt" value, which reads report as Corruption.
TEST(MergeOperator, MalformedOperandYieldsCorruptValueNotZero) {
  auto op = NewInt64AddOperator();
  bool ok;
  std::string base = Enc(10);
  EXPECT_EQ(FullMerge(*op, &base, {Enc(5), "abc"}, &ok), "");
  EXPECT_TRUE(ok);
  std::string bad_base = "123456789";
  EXPECT_EQ(FullMerge(*op, &bad_base, {Enc(5)}, &ok), "");
  // Corrupt is sticky: folding more operands onto it keeps it corrupt.
  std::string corrupt;
  EXPECT_EQ(FullMerge(*op, &corrupt, {Enc(5)}, &ok), "");
}

std::string Wide(ShardSum v) {
  std::string out;
  EncodeShardValue(v, &out);
  return out;
}

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

TEST(MergeOperator, OverflowIsStickyState) {
  auto op = NewInt64AddOperator();
  bool ok;
  std::string over = Enc(kOverflowedValue);
  EXPECT_EQ(FullMerge(*op, &over, {Enc(-5)}, &ok), Enc(kOverflowedValue));
  EXPECT_TRUE(ok);
  // A transient excursion inside one fold is exact: max + 1 - 1 = max.
  std::string base = Enc(kMax);
  EXPECT_EQ(FullMerge(*op, &base, {Enc(1), Enc(-1)}, &ok), Enc(kMax));
  // Only a sum beyond 128 bits overflows.
  const ShardSum top = ~static_cast<unsigned __int128>(0) >> 1;
  std::string near = Wide(top);
  EXPECT_EQ(FullMerge(*op, &near, {Enc(1)}, &ok), Enc(kOverflowedValue));
  EXPECT_EQ(FullMerge(*op, &near, {Enc(-1), Enc(1)}, &ok), Wide(top));
}

// Item 15: a sum past int64 between two folds (a compaction between two
// increments) is kept exactly, in 16 bytes, and comes back to 8 bytes.
TEST(MergeOperator, Item15_IntermediateSumBeyondInt64IsKeptExactly) {
  auto op = NewInt64AddOperator();
  bool ok;
  std::string base = Enc(kMax);
  const std::string wide = FullMerge(*op, &base, {Enc(1)}, &ok);
  EXPECT_TRUE(ok);
  EXPECT_EQ(wide.size(), 16u);
  EXPECT_EQ(wide, Wide(static_cast<ShardSum>(kMax) + 1));
  ShardSum v;
  ASSERT_EQ(DecodeShardValue(wide, &v), ShardValue::kExact);
  EXPECT_TRUE(v == static_cast<ShardSum>(kMax) + 1);
  EXPECT_EQ(FullMerge(*op, &wide, {Enc(-kMax)}, &ok), Enc(1));
  // INT64_MIN itself, a real sum, is wide too (8-byte INT64_MIN is the
  // overflowed state).
  std::string low = Enc(-kMax);
  const std::string min = FullMerge(*op, &low, {Enc(-1)}, &ok);
  EXPECT_EQ(min, Wide(kOverflowedValue));
  EXPECT_EQ(min.size(), 16u);
}

// Item 15: partial merges of any run, in any grouping, then a full merge,
// give the sum of everything, whatever the intermediate sums.
TEST(MergeOperator, Item15_OutOfOrderPartialMergesAreExact) {
  auto op = NewInt64AddOperator();
  const std::vector<std::string> operands = {Enc(kMax),  Enc(kMax),  Enc(1),
                                             Enc(-kMax), Enc(-kMax), Enc(5)};
  // Fold each split point's left and right runs, then merge the two folds
  // (either order) onto an empty base.
  for (size_t split = 1; split < operands.size(); ++split) {
    std::deque<rocksdb::Slice> left(operands.begin(), operands.begin() + split);
    std::deque<rocksdb::Slice> right(operands.begin() + split, operands.end());
    std::string l = operands[0], r = operands.back();
    if (left.size() >= 2) {
      ASSERT_TRUE(op->PartialMergeMulti("k", left, &l, nullptr));
    }
    if (right.size() >= 2) {
      ASSERT_TRUE(op->PartialMergeMulti("k", right, &r, nullptr));
    }
    bool ok;
    EXPECT_EQ(FullMerge(*op, nullptr, {l, r}, &ok), Enc(6)) << split;
    EXPECT_EQ(FullMerge(*op, &r, {l}, &ok), Enc(6)) << split;
    EXPECT_EQ(FullMerge(*op, &l, {r}, &ok), Enc(6)) << split;
  }
}

TEST(MergeOperator, PartialMergeFoldsOrDeclines) {
  auto op = NewInt64AddOperator();
  std::string out;
  std::deque<rocksdb::Slice> ops;
  std::string a = Enc(4), b = Enc(-9), bad = "x";
  ops = {a, b};
  ASSERT_TRUE(op->PartialMergeMulti("k", ops, &out, nullptr));
  EXPECT_EQ(out, Enc(-5));
  ops = {a, bad};
  EXPECT_FALSE(op->PartialMergeMulti("k", ops, &out, nullptr));
  std::string over = Enc(kOverflowedValue);
  ops = {a, over};
  EXPECT_FALSE(op->PartialMergeMulti("k", ops, &out, nullptr))
      << "the overflowed state is the full merge's to keep";
  std::string big = Enc(kMax);
  ops = {big, a};
  ASSERT_TRUE(op->PartialMergeMulti("k", ops, &out, nullptr));
  EXPECT_EQ(out, Wide(static_cast<ShardSum>(kMax) + 4)) << "exact, wide";
}

// Through RocksDB: many operands, flushed and compacted, fold exactly, and an
// overflowing shard does not stop later writes (the 7.8.3 trap).
TEST(MergeOperator, CompactionOfOverflowKeepsDatabaseWritable) {
  test::TempDir dir;
  rocksdb::Options o;
  o.create_if_missing = true;
  o.merge_operator = NewInt64AddOperator();
  rocksdb::DB* raw;
  ASSERT_TRUE(rocksdb::DB::Open(o, dir.path(), &raw).ok());
  std::unique_ptr<rocksdb::DB> db(raw);
  rocksdb::WriteOptions wo;
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(db->Merge(wo, "sum", Enc(3)).ok());
  ASSERT_TRUE(
      db->Merge(wo, "over", Enc(std::numeric_limits<int64_t>::max())).ok());
  ASSERT_TRUE(db->Merge(wo, "over", Enc(1)).ok());
  ASSERT_TRUE(db->Merge(wo, "bad", "zz").ok());
  ASSERT_TRUE(db->Flush(rocksdb::FlushOptions()).ok());
  ASSERT_TRUE(
      db->CompactRange(rocksdb::CompactRangeOptions(), nullptr, nullptr).ok());
  std::string v;
  ASSERT_TRUE(db->Get(rocksdb::ReadOptions(), "sum", &v).ok());
  EXPECT_EQ(v, Enc(3000));
  ASSERT_TRUE(db->Get(rocksdb::ReadOptions(), "over", &v).ok());
  EXPECT_EQ(v, Wide(static_cast<ShardSum>(kMax) + 1)) << "kept exactly";
  ASSERT_TRUE(db->Merge(wo, "over", Enc(-kMax)).ok());
  ASSERT_TRUE(db->Get(rocksdb::ReadOptions(), "over", &v).ok());
  EXPECT_EQ(v, Enc(1));
  ASSERT_TRUE(db->Get(rocksdb::ReadOptions(), "bad", &v).ok());
  EXPECT_EQ(v, "");
  EXPECT_TRUE(db->Merge(wo, "sum", Enc(1)).ok())
      << "database must stay writable";
  ASSERT_TRUE(db->Get(rocksdb::ReadOptions(), "sum", &v).ok());
  EXPECT_EQ(v, Enc(3001));
}

}  // namespace
}  // namespace tally::engine
