// CounterRange: the keys of one counter in the shards or events column
// family, [u64be(id), u64be(id + 1)), and an iterator bounded to them.
//
// Ownership: owns the bound's bytes, which the ReadOptions point into, so it
// cannot be copied and must outlive its iterators. Thread safety: none
// needed; build one per read.

#ifndef TALLY_ENGINE_COUNTER_RANGE_H_
#define TALLY_ENGINE_COUNTER_RANGE_H_

#include <rocksdb/db.h>

#include <memory>

#include "engine/coding.h"

namespace tally::engine {

class CounterRange {
 public:
  explicit CounterRange(uint64_t counter_id,
                        rocksdb::ReadOptions ro = rocksdb::ReadOptions())
      : ro_(ro) {
    EncodeCounterPrefix(counter_id, begin_);
    EncodeCounterPrefix(counter_id + 1, end_);
    upper_ = end();
    ro_.iterate_upper_bound = &upper_;
    ro_.prefix_same_as_start = true;
  }
  CounterRange(const CounterRange&) = delete;
  CounterRange& operator=(const CounterRange&) = delete;

  rocksdb::Slice begin() const { return {begin_, kCounterIdBytes}; }
  rocksdb::Slice end() const { return {end_, kCounterIdBytes}; }

  // An iterator over the range; not yet positioned.
  std::unique_ptr<rocksdb::Iterator> NewIterator(
      rocksdb::DB* db, rocksdb::ColumnFamilyHandle* family) const {
    return std::unique_ptr<rocksdb::Iterator>(db->NewIterator(ro_, family));
  }

 private:
  char begin_[kCounterIdBytes];
  char end_[kCounterIdBytes];
  rocksdb::Slice upper_;
  rocksdb::ReadOptions ro_;
};

}  // namespace tally::engine

#endif  // TALLY_ENGINE_COUNTER_RANGE_H_
