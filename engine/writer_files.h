// WriterFiles: what a read-only instance can see of the writer's state on
// disk without opening it: the current MANIFEST (name and size) and the
// write-ahead logs present. A secondary RocksDB instance reads the MANIFEST
// and then the logs; comparing two listings taken around that read tells
// whether the writer changed its version (a flush or compaction appended to
// the MANIFEST) or deleted a log in between (docs/design.md, "readers in
// other processes").

#ifndef TALLY_ENGINE_WRITER_FILES_H_
#define TALLY_ENGINE_WRITER_FILES_H_

#include <rocksdb/env.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tally/status.h"

namespace tally::engine {

struct WriterFiles {
  std::string manifest;         // CURRENT's file name, e.g. MANIFEST-000005
  uint64_t manifest_bytes = 0;  // its size
  std::vector<uint64_t> logs;   // numbers of the *.log files, ascending
};

// Lists the writer's files of the database at `path` through `env`.
Status ListWriterFiles(rocksdb::Env* env, const std::string& path,
                       WriterFiles* out);

// True when the MANIFEST is the same file with the same size in both: the
// writer recorded no version change between the two listings.
bool SameManifest(const WriterFiles& a, const WriterFiles& b);

// True when every log of `before` is still in `after`: the writer deleted
// no log between the two listings. (RocksDB deletes obsolete logs oldest
// first, so a log deleted after `before` takes the oldest of `before` too.)
bool LogsKept(const WriterFiles& before, const WriterFiles& after);

}  // namespace tally::engine

#endif  // TALLY_ENGINE_WRITER_FILES_H_
