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
  // Owns db.env when Options::env was given; empty when db.env is the
  // process-wide DefaultPrivateEnv(). Keep it alive while the DB is open.
  std::shared_ptr<rocksdb::Env> env;
  // The default family, then every entry of ColumnFamilies(): by Family.
  std::vector<rocksdb::ColumnFamilyDescriptor> families;
};

// `clock` (the engine's, engine/engine_clock.h), when given, gets the
// events family's marker-expiry compaction filter and, with `retention`, the
// shards family's bucket-retention filter (the engine passes its catalog's
// rules). Tools and tests that open a database raw leave them out: their
// compactions keep every marker and bucket, since only the engine knows a
// durable time to judge expiry by.
RocksOptions MakeRocksOptions(
    const Options& options, std::shared_ptr<RetentionRules> retention = nullptr,
    std::shared_ptr<const EngineClock> clock = nullptr);

}  // namespace tally::engine

#endif  // TALLY_ENGINE_ROCKSDB_OPTIONS_H_
