// The counter's merge operator: adds 8-byte little-endian int64 operands.
//
// It never fails a flush or compaction (in RocksDB 7.8.3 a false return from
// FullMergeV2 there makes the database refuse every later write):
//  - a sum outside int64 is stored as kOverflowedValue, which is sticky and
//    which reads report as OutOfRange;
//  - a malformed operand or base value (not 8 bytes) yields an empty value,
//    also sticky, which reads report as Corruption naming the key.
// PartialMergeMulti returns false (RocksDB then keeps the operands as they
// are) when it cannot fold them exactly, so a partial fold never invents an
// overflow that the full sum would not have.
//
// Thread safety: stateless; RocksDB calls it from many threads.

#ifndef TALLY_ENGINE_MERGE_OPERATOR_H_
#define TALLY_ENGINE_MERGE_OPERATOR_H_

#include <rocksdb/merge_operator.h>

#include <memory>

namespace tally::engine {

std::shared_ptr<rocksdb::MergeOperator> NewInt64AddOperator();

}  // namespace tally::engine

#endif  // TALLY_ENGINE_MERGE_OPERATOR_H_
