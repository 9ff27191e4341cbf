// Creation: makes a new database so that, from the user's point of view,
// it appears whole or not at all.
//
// RocksDB creates a database in steps (the directory, the default column
// family, then each of tally's families, then tally writes its header); a
// kill between two steps used to leave a directory every later open
// refused. Now the creating open first writes and fsyncs the marker file
// kCreatingMarker into the (empty) directory, before RocksDB makes any file,
// and removes it (fsyncing the directory) once the header is durable. A
// directory holding the marker is an unfinished creation: opens without
// create_if_missing and read-only opens answer NotFound, and the next
// creating open discards its contents and creates the database afresh
// (nothing in it was ever acknowledged: Db::Open had not returned).
//
// Creators exclude one another with an flock(2) on the database directory,
// held from before they look at its contents until the marker is gone: a
// second creator gets Busy, and a creator never looks at (or discards) a
// directory another live creator is working in. A creator killed midway
// drops its flock with its process.
//
// Ownership: holds the directory's lock (a file descriptor) until destroyed.
// Thread safety: one thread uses a Creation.

#ifndef TALLY_ENGINE_CREATION_H_
#define TALLY_ENGINE_CREATION_H_

#include <rocksdb/env.h>

#include <memory>
#include <string>

#include "tally/options.h"
#include "tally/status.h"

namespace tally::engine {

class Creation {
 public:
  // Called when CheckPath found no database at `path` (missing, empty, or
  // an unfinished creation) and create_if_missing is set: makes the
  // directory if missing, takes its lock (Busy when another creator holds
  // it), looks again under the lock and either leaves *creation null (a
  // complete database is there now: open it as usual) or prepares the
  // directory (discarding an unfinished creation, writing the marker) and
  // sets *creation. `env` is the database's (private) Env.
  static Status Begin(const Options& options, const std::string& path,
                      rocksdb::Env* env, std::unique_ptr<Creation>* creation);

  // Once the database and its header are durable: removes the marker and
  // fsyncs the directory. Until then, a failure leaves an unfinished
  // creation for the next creating open.
  Status Finish();

  ~Creation();  // releases the lock
  Creation(const Creation&) = delete;
  Creation& operator=(const Creation&) = delete;

 private:
  Creation(std::string path, rocksdb::Env* env, int lock_fd)
      : path_(std::move(path)), env_(env), lock_fd_(lock_fd) {}

  const std::string path_;
  rocksdb::Env* const env_;
  const int lock_fd_;
};

}  // namespace tally::engine

#endif  // TALLY_ENGINE_CREATION_H_
