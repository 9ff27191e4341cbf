#include "util/rocks_status.h"

#include <string>

namespace tally {

Status FromRocks(const rocksdb::Status& s, std::string_view context) {
  if (s.ok()) return Status::OK();
  std::string msg(context);
  msg += ": ";
  msg += s.ToString();
  switch (s.code()) {
    case rocksdb::Status::kNotFound: return Status::NotFound(msg);
    case rocksdb::Status::kCorruption: return Status::Corruption(msg);
    case rocksdb::Status::kInvalidArgument:
      return Status::InvalidArgument(msg);
    case rocksdb::Status::kNotSupported: return Status::NotSupported(msg);
    case rocksdb::Status::kBusy:
    case rocksdb::Status::kTryAgain: return Status::Busy(msg);
    default: return Status::IOError(msg);
  }
}

}  // namespace tally
