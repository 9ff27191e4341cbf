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

// True when no write-ahead log can have been deleted between the two
// listings, seen or unseen: every log of `before` is still in `after`, and
// either the MANIFEST is unchanged or no log was created in between (the
// newest log is the same). A log created after `before` and deleted before
// `after` shows in neither listing; its deletion needs a flush recorded in
// the MANIFEST after its creation, and a newer log to replace it as the
// current one (RocksDB never deletes the current log), so either condition
// rules it out. (RocksDB 7.8.3 deletes obsolete logs newest first,
// PurgeObsoleteFiles' CompareCandidateFile, so the older logs of `before`
// may outlive such a log for a while: checking them alone missed it, and a
// fresh instance then lacked that log's data in the families that had not
// flushed it: issue 28, item 12.)
bool LogsKept(const WriterFiles& before, const WriterFiles& after);

}  // namespace tally::engine

#endif  // TALLY_ENGINE_WRITER_FILES_H_
