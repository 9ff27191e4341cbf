// Checkpoints: a consistent copy of an open database in a local directory,
// with RocksDB's Checkpoint (hard links where possible). Local by nature:
// the copy is written on the file system of the process holding the Db; a
// backend without a local disk returns NotSupported. For copies kept
// incrementally and checksummed, see tally/backup.h.
//
// Thread safety: may run while other threads use the same Db.
// Ownership: borrows the Db for the call.

#ifndef TALLY_CHECKPOINT_H_
#define TALLY_CHECKPOINT_H_

#include <string>

#include "tally/db.h"
#include "tally/export.h"
#include "tally/status.h"

namespace tally {

// Writes a consistent copy of the database to `dir` (which must not exist).
// The copy opens as an ordinary tally database. Works read-only too (the
// copy then holds what the writer had committed when the instance last
// caught up, its WAL included).
TALLY_EXPORT Status Checkpoint(Db& db, const std::string& dir);

}  // namespace tally

#endif  // TALLY_CHECKPOINT_H_
