// The RocksDB configuration of a tally database, in one place, so the engine,
// tools that open a database another way and the benchmarks' raw baselines
// all use the same column families, merge operator and filters.

#ifndef TALLY_ENGINE_ROCKSDB_OPTIONS_H_
#define TALLY_ENGINE_ROCKSDB_OPTIONS_H_

#include <rocksdb/db.h>
#include <rocksdb/options.h>

#include <memory>
#include <vector>

#include "engine/column_families.h"
#include "tally/options.h"

namespace tally::engine {

struct RocksOptions {
  rocksdb::DBOptions db;
  // Owns db.env when a base Env was given; empty when db.env is the
  // process-wide DefaultPrivateEnv(). Keep it alive while the DB is open.
  std::shared_ptr<rocksdb::Env> env;
  // The default family, then every entry of ColumnFamilies(): by Family.
  std::vector<rocksdb::ColumnFamilyDescriptor> families;
};

// `base_env`, when given, is the Env whose FileSystem holds the files (not
// owned; engine/open_on_env.h); nullptr: rocksdb::Env::Default()'s. Either
// is wrapped so files are created 0600 and directories 0700 (private_fs.h).
// `clock` (the engine's, engine/engine_clock.h), when given, gets the
// events family's marker-expiry compaction filter and, with `retention`, the
// shards family's bucket-retention filter (the engine passes its catalog's
// rules). Tools and tests that open a database raw leave them out: their
// compactions keep every marker and bucket, since only the engine knows a
// durable time to judge expiry by.
RocksOptions MakeRocksOptions(
    const Options& options, rocksdb::Env* base_env = nullptr,
    std::shared_ptr<RetentionRules> retention = nullptr,
    std::shared_ptr<const EngineClock> clock = nullptr);

}  // namespace tally::engine

#endif  // TALLY_ENGINE_ROCKSDB_OPTIONS_H_
