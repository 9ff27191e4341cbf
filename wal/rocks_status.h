// Converts a rocksdb::Status into a tally::Status, prefixing what was being
// done. Lives in wal/ (the lowest layer that talks to RocksDB) so both wal/
// and engine/ share one mapping.

#ifndef TALLY_WAL_ROCKS_STATUS_H_
#define TALLY_WAL_ROCKS_STATUS_H_

#include <rocksdb/status.h>

#include <string_view>

#include "tally/status.h"

namespace tally::wal {

Status FromRocks(const rocksdb::Status& s, std::string_view context);

}  // namespace tally::wal

#endif  // TALLY_WAL_ROCKS_STATUS_H_
