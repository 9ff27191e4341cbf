// Converts a rocksdb::Status into a tally::Status, prefixing what was being
// done. Lives in util/ (the lowest layer) so wal/, schema/ and engine/
// share one mapping.

#ifndef TALLY_UTIL_ROCKS_STATUS_H_
#define TALLY_UTIL_ROCKS_STATUS_H_

#include <rocksdb/status.h>

#include <string_view>

#include "tally/status.h"

namespace tally {

Status FromRocks(const rocksdb::Status& s, std::string_view context);

}  // namespace tally

#endif  // TALLY_UTIL_ROCKS_STATUS_H_
