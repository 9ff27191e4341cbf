// What a clean close of a writer does before RocksDB's Close: flush the
// families still holding data, so the next open (Db::Open or a read-only
// open) has next to nothing to replay (docs/durability.md, "Recovery time").

#ifndef TALLY_ENGINE_CLEAN_CLOSE_H_
#define TALLY_ENGINE_CLEAN_CLOSE_H_

#include <rocksdb/db.h>

#include <cstdint>
#include <vector>

namespace tally::engine {

// A close leaves a live log at most this large unflushed: replaying 1 MiB
// costs the next open ~60-90 ms of CPU on the shared test machine
// (docs/durability.md, "Recovery time"),
// while a flush per close would make each short writer (a `counterctl
// apply` of a few lines) add up to three small table files for compaction
// to merge.
inline constexpr uint64_t kCloseFlushMinWalBytes = uint64_t{1} << 20;

// The bytes of the live (not yet obsolete) write-ahead log files of `db`;
// 0 when they cannot be listed.
uint64_t LiveWalBytes(rocksdb::DB* db);

// Flushes every family of `families` whose memtable holds data, waiting for
// the flushes, when the live log is over kCloseFlushMinWalBytes. Called from
// the destructor, so a failure has nowhere to go: it is not reported and
// loses nothing (the log still holds every acknowledged write and the next
// open replays it).
void FlushForCleanClose(
    rocksdb::DB* db, const std::vector<rocksdb::ColumnFamilyHandle*>& families);

}  // namespace tally::engine

#endif  // TALLY_ENGINE_CLEAN_CLOSE_H_
