// One RocksDB snapshot held for the length of a read: the rollup scans
// (engine/rollups.cc), the keyed reads (engine/keyed_reads.cc) and Verify
// (engine/verify.cc) all take theirs here, so there is one place that
// acquires and releases them.

#ifndef TALLY_ENGINE_SNAPSHOT_HOLD_H_
#define TALLY_ENGINE_SNAPSHOT_HOLD_H_

#include <rocksdb/db.h>

namespace tally::engine {

// Holds one snapshot of `db`, released when the hold goes out of scope. A
// read-only (secondary) instance takes none and get() is null: RocksDB
// refuses snapshots there, and its view only moves at a Refresh, which
// waits for reads in progress (docs/design.md, "Readers in other
// processes").
//
// Ownership: borrows `db`, which must outlive the hold; owns the snapshot.
// Thread safety: one hold belongs to one thread; any number of threads may
// hold snapshots of one database at once (RocksDB serialises them).
class SnapshotHold {
 public:
  SnapshotHold(rocksdb::DB* db, bool read_only);
  ~SnapshotHold();
  SnapshotHold(const SnapshotHold&) = delete;
  SnapshotHold& operator=(const SnapshotHold&) = delete;

  // Null on a read-only instance.
  const rocksdb::Snapshot* get() const { return s_; }

 private:
  rocksdb::DB* db_;
  const rocksdb::Snapshot* s_;
};

}  // namespace tally::engine

#endif  // TALLY_ENGINE_SNAPSHOT_HOLD_H_
