#include "engine/snapshot_hold.h"

namespace tally::engine {

SnapshotHold::SnapshotHold(rocksdb::DB* db, bool read_only)
    : db_(db), s_(read_only ? nullptr : db->GetSnapshot()) {}

// Out of line and never inlined: tests/tsan.supp names this function,
// whose body is only the call into RocksDB (see the comment there).
__attribute__((noinline)) SnapshotHold::~SnapshotHold() {
  if (s_ != nullptr) db_->ReleaseSnapshot(s_);
}

}  // namespace tally::engine
