// CommitPipeline: the one door through which every tally write reaches
// RocksDB's WAL and memtables.
//
// It applies the durability policy (Options::sync for increments; metadata
// changes are always synced) and latches the first write error, the way
// LevelDB latches bg_error_: once a commit failed with an I/O error or
// corruption, every later commit fails fast with that same error until the
// database is reopened, so no increment is acknowledged on a database in an
// unknown state. RocksDB's own group commit gathers concurrent commits into
// one WAL write (and one fsync when syncing).
//
// Ownership: does not own the rocksdb::DB; the DB must outlive it.
// Thread safety: Commit may be called from many threads at once.

#ifndef TALLY_WAL_COMMIT_PIPELINE_H_
#define TALLY_WAL_COMMIT_PIPELINE_H_

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <atomic>
#include <mutex>

#include "tally/status.h"

namespace tally::wal {

class CommitPipeline {
 public:
  CommitPipeline(rocksdb::DB* db, bool sync);
  CommitPipeline(const CommitPipeline&) = delete;
  CommitPipeline& operator=(const CommitPipeline&) = delete;

  // Commits an increment batch with the configured durability.
  Status Commit(rocksdb::WriteBatch* batch) { return Write(batch, write_); }
  // Commits a metadata change (create, delete): always fsynced.
  Status CommitDurable(rocksdb::WriteBatch* batch) {
    return Write(batch, durable_);
  }

  // The latched error, or OK.
  Status LatchedError() const;

 private:
  Status Write(rocksdb::WriteBatch* batch, const rocksdb::WriteOptions& wo);
  void Latch(const Status& s);

  rocksdb::DB* const db_;
  rocksdb::WriteOptions write_;
  rocksdb::WriteOptions durable_;
  std::atomic<bool> failed_{false};  // fast check on the hot path
  mutable std::mutex mu_;
  Status error_;  // guarded by mu_; set once
};

}  // namespace tally::wal

#endif  // TALLY_WAL_COMMIT_PIPELINE_H_
