// The counter's merge operator: adds shard values and operands exactly
// (docs/format.md, "wide shard values"). Operands the engine writes are
// 8-byte little-endian int64; the sum is kept in 128 bits and stored as 8
// bytes when it fits int64 (above INT64_MIN), else as 16, so merges folded
// in any order (a compaction between two increments included) never lose an
// intermediate sum: only a read whose result is outside int64 reports it.
//
// It never fails a flush or compaction (in RocksDB 7.8.3 a false return from
// FullMergeV2 there makes the database refuse every later write):
//  - a sum outside 128 bits (more than 2^64 operands of the largest
//    magnitude: unreachable in practice) is stored as kOverflowedValue,
//    which is sticky and which reads report as OutOfRange; so is an 8-byte
//    INT64_MIN a tally before wide values stored past int64;
//  - a malformed operand or base value (neither 8 nor 16 bytes) yields an
//    empty value, also sticky, which reads report as Corruption naming the
//    key.
// PartialMergeMulti folds any run of exact operands into one (8 or 16
// bytes); it returns false (RocksDB then keeps the operands as they are)
// only for an overflowed or malformed operand, or a sum beyond 128 bits.
//
// Thread safety: stateless; RocksDB calls it from many threads.

#ifndef TALLY_ENGINE_MERGE_OPERATOR_H_
#define TALLY_ENGINE_MERGE_OPERATOR_H_

#include <rocksdb/merge_operator.h>

#include <memory>

namespace tally::engine {

// The name RocksDB records in a database's OPTIONS file.
inline constexpr char kInt64AddName[] = "tally.Int64Add.v1";

std::unique_ptr<rocksdb::MergeOperator> NewInt64AddOperator();

}  // namespace tally::engine

#endif  // TALLY_ENGINE_MERGE_OPERATOR_H_
