#include "engine/clean_close.h"

#include <rocksdb/transaction_log.h>

namespace tally::engine {

uint64_t LiveWalBytes(rocksdb::DB* db) {
  rocksdb::VectorLogPtr files;
  if (!db->GetSortedWalFiles(files).ok()) return 0;
  uint64_t bytes = 0;
  for (const auto& f : files) {
    if (f->Type() == rocksdb::kAliveLogFile) bytes += f->SizeFileBytes();
  }
  return bytes;
}

void FlushForCleanClose(
    rocksdb::DB* db,
    const std::vector<rocksdb::ColumnFamilyHandle*>& families) {
  if (LiveWalBytes(db) <= kCloseFlushMinWalBytes) return;
  rocksdb::FlushOptions fo;
  fo.wait = true;
  // Nothing else writes now: a stall would only wait for this flush.
  fo.allow_write_stall = true;
  // Families with an empty memtable are skipped by RocksDB itself.
  db->Flush(fo, families).PermitUncheckedError();
}

}  // namespace tally::engine
