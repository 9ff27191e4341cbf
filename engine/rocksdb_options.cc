#include "engine/rocksdb_options.h"

#include <rocksdb/cache.h>

#include <algorithm>
#include <thread>

#include "engine/private_fs.h"

namespace tally::engine {
namespace {

// A block too large for one shard of an LRU cache is evicted as soon as it
// is released, so every lookup reads and checksums it again. A 64 MiB marker
// file has a ~1.2 MiB filter, over the 512 KiB shards RocksDB picks for a
// 32 MiB cache. Shards of at least 8 MiB (4 for the default cache) keep
// whole filters cached, which beat partitioned filters, whose two-level
// index costs every hit (docs/benchmarks.md, "Figures behind code choices").
int CacheShardBits(size_t capacity) {
  constexpr size_t kMinShardBytes = size_t{8} << 20;
  int bits = 0;
  while (bits < 6 && (capacity >> (bits + 1)) >= kMinShardBytes) ++bits;
  return bits;
}

}  // namespace

RocksOptions MakeRocksOptions(const Options& options, rocksdb::Env* base_env,
                              std::shared_ptr<RetentionRules> retention,
                              std::shared_ptr<const EngineClock> clock) {
  RocksOptions r;
  if (base_env == nullptr) {
    r.db.env = DefaultPrivateEnv();
  } else {
    r.env = NewPrivateEnv(base_env);
    r.db.env = r.env.get();
  }
  r.db.create_if_missing = options.create_if_missing;
  // Also for an existing database: families added since it was made (rollups)
  // are created by its first writable open. CheckPath has already refused
  // anything that is not a tally database.
  r.db.create_missing_column_families = true;
  // A crash may leave a torn last record: tolerated. Damage anywhere else
  // refuses the open (RocksDB's point-in-time mode would silently drop every
  // later acknowledged write) unless the caller asks to salvage.
  r.db.wal_recovery_mode =
      options.salvage_wal ? rocksdb::WALRecoveryMode::kPointInTimeRecovery
                          : rocksdb::WALRecoveryMode::kTolerateCorruptedTailRecords;
  r.db.max_background_jobs = 2;
  // RocksDB loads a family's table files at open on max_file_opening_threads
  // threads, and starts all of them but one for every family, also one with
  // no file and for every secondary instance (each read-only Refresh): its
  // default of 16 meant ~135 thread starts per open of tally's nine
  // families, most of the open of a small database (docs/design.md, "The
  // write path beyond RocksDB's defaults"). One per core, up to RocksDB's
  // 16, keeps the load of a large database's files as parallel as the
  // machine.
  r.db.max_file_opening_threads = static_cast<int>(
      std::clamp(std::thread::hardware_concurrency(), 1u, 16u));
  // The bound on the log left to replay (Options::max_wal_bytes). RocksDB
  // 7.8.3 checks it before each write (PreprocessWrite) whenever the
  // database has more than one column family, which a tally database always
  // has, and then flushes every family with data in the oldest live log
  // (SwitchWAL), also the only written family when it alone passes the
  // bound: no per-family equivalent is needed. RocksDB's own default, 4x
  // the memtables of all families (~768 MiB here), left 180 MB of logs
  // after 2M single-line commits (docs/durability.md, "Recovery time").
  r.db.max_total_wal_size = options.max_wal_bytes;
  r.db.keep_log_file_num = 4;

  auto cache = rocksdb::NewLRUCache(options.block_cache_bytes,
                                    CacheShardBits(options.block_cache_bytes));

  rocksdb::ColumnFamilyOptions base;
  base.write_buffer_size = options.write_buffer_bytes;
  base.table_factory.reset(NewTallyTableFactory(cache));
  r.families.emplace_back(rocksdb::kDefaultColumnFamilyName, base);
  const FamilyTuning tuning{options, cache, std::move(retention),
                            std::move(clock)};
  for (const ColumnFamily& f : ColumnFamilies()) {
    rocksdb::ColumnFamilyOptions cf = base;
    f.tune(tuning, &cf);
    r.families.emplace_back(f.name, cf);
  }
  return r;
}

}  // namespace tally::engine
