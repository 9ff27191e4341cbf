// BatchConcat: builds one WriteBatch holding the records of many, by
// concatenating their serialized forms ("reps").
//
// RocksDB 7.8.3 serializes a WriteBatch as a 12-byte header (a fixed64
// sequence number, then a fixed32 record count, both little-endian) followed
// by the records (db/write_batch.cc). WriteBatchInternal::Append, which joins
// two batches, is not public; WriteBatch(std::string&&) and Data() are, so
// the group is the first header with the counts summed, then every batch's
// records in order. The sequence number is assigned by DB::Write. This is
// much cheaper than re-adding each record through a WriteBatch::Handler
// (docs/benchmarks.md, "Figures behind code choices");
// tests/wal/batch_concat_test.cc proves a concatenated batch replays
// exactly as its parts do.
//
// Only plain batches may be joined: no save points carried over, no
// per-key protection info (tally sets neither), no two-phase-commit markers.
//
// Ownership: a value; owns the rep under construction, hands it to the
// WriteBatch Finish() returns. Thread safety: one object, one thread.

#ifndef TALLY_WAL_BATCH_CONCAT_H_
#define TALLY_WAL_BATCH_CONCAT_H_

#include <rocksdb/write_batch.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace tally::wal {

// The size of a WriteBatch rep's header (sequence + count).
inline constexpr size_t kBatchHeaderBytes = 12;

class BatchConcat {
 public:
  // Starts an empty group with room for `reserve_bytes` of rep.
  explicit BatchConcat(size_t reserve_bytes = kBatchHeaderBytes);

  // Appends every record of `batch`, in order.
  void Append(const rocksdb::WriteBatch& batch);

  // Records appended so far.
  uint32_t count() const { return count_; }

  // The group as a WriteBatch; the builder is empty afterwards.
  rocksdb::WriteBatch Finish();

 private:
  std::string rep_;
  uint32_t count_ = 0;
};

}  // namespace tally::wal

#endif  // TALLY_WAL_BATCH_CONCAT_H_
