// CounterRange: the keys of one counter in the shards or events column
// family, [u64be(id), u64be(id + 1)), or of one key of a keyed counter,
// [u64be(id) + key + 0x00, u64be(id) + key + 0x01) (KeyPrefix), and an
// iterator bounded to them.
//
// Ownership: owns the bounds' bytes, which the ReadOptions point into, so it
// cannot be copied and must outlive its iterators. Thread safety: none
// needed; build one per read.

#ifndef TALLY_ENGINE_COUNTER_RANGE_H_
#define TALLY_ENGINE_COUNTER_RANGE_H_

#include <rocksdb/db.h>

#include <memory>
#include <string>

#include "engine/coding.h"

namespace tally::engine {

class CounterRange {
 public:
  explicit CounterRange(uint64_t counter_id,
                        rocksdb::ReadOptions ro = rocksdb::ReadOptions())
      : CounterRange(KeyPrefix(counter_id, {}), ro) {}
  explicit CounterRange(const KeyPrefix& prefix,
                        rocksdb::ReadOptions ro = rocksdb::ReadOptions())
      : begin_(prefix.bytes()), ro_(ro) {
    prefix.End(&end_);
    upper_ = end();
    ro_.iterate_upper_bound = &upper_;
    // Every key of the range shares the 8-byte id prefix (the families'
    // prefix extractor).
    ro_.prefix_same_as_start = true;
  }
  CounterRange(const CounterRange&) = delete;
  CounterRange& operator=(const CounterRange&) = delete;

  rocksdb::Slice begin() const { return begin_; }
  rocksdb::Slice end() const { return end_; }

  // An iterator over the range; not yet positioned.
  std::unique_ptr<rocksdb::Iterator> NewIterator(
      rocksdb::DB* db, rocksdb::ColumnFamilyHandle* family) const {
    return std::unique_ptr<rocksdb::Iterator>(db->NewIterator(ro_, family));
  }

 private:
  std::string begin_;
  std::string end_;
  rocksdb::Slice upper_;
  rocksdb::ReadOptions ro_;
};

}  // namespace tally::engine

#endif  // TALLY_ENGINE_COUNTER_RANGE_H_
