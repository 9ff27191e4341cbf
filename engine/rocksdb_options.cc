#include "engine/rocksdb_options.h"

#include <rocksdb/cache.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/slice_transform.h>
#include <rocksdb/table.h>

#include "engine/bucket_retention.h"
#include "engine/format.h"
#include "engine/marker_expiry.h"
#include "engine/merge_operator.h"
#include "engine/private_fs.h"

namespace tally::engine {
namespace {

rocksdb::BlockBasedTableOptions TableOptions(
    const std::shared_ptr<rocksdb::Cache>& cache, bool bloom) {
  rocksdb::BlockBasedTableOptions t;
  t.block_cache = cache;
  t.cache_index_and_filter_blocks = true;
  t.pin_l0_filter_and_index_blocks_in_cache = true;
  if (bloom) {
    // Most marker lookups miss (a new event): a whole-key bloom filter
    // answers them without touching data blocks.
    t.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
    t.whole_key_filtering = true;
    // Filters and indexes outlive data blocks in the cache.
    t.cache_index_and_filter_blocks_with_high_priority = true;
  }
  return t;
}

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

RocksOptions MakeRocksOptions(const Options& options,
                              std::shared_ptr<RetentionRules> retention,
                              std::shared_ptr<const EngineClock> clock) {
  RocksOptions r;
  if (options.env == nullptr) {
    r.db.env = DefaultPrivateEnv();
  } else {
    r.env = NewPrivateEnv(options.env);
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
  r.db.keep_log_file_num = 4;

  auto cache = rocksdb::NewLRUCache(options.block_cache_bytes,
                                    CacheShardBits(options.block_cache_bytes));

  rocksdb::ColumnFamilyOptions base;
  base.write_buffer_size = options.write_buffer_bytes;
  base.table_factory.reset(
      rocksdb::NewBlockBasedTableFactory(TableOptions(cache, false)));

  rocksdb::ColumnFamilyOptions meta = base;

  rocksdb::ColumnFamilyOptions shards = base;
  shards.merge_operator = NewInt64AddOperator();
  shards.max_successive_merges = options.max_pending_operands;
  // All shards of one counter share the 8-byte id prefix: an exact read is
  // one prefix scan.
  shards.prefix_extractor.reset(
      rocksdb::NewFixedPrefixTransform(kCounterIdBytes));
  // Bucketed counters: compaction drops buckets past their retention, and
  // every shard file is compacted at least once per expiry_sweep_seconds.
  if (retention != nullptr && clock != nullptr) {
    shards.compaction_filter_factory =
        NewBucketRetentionFilterFactory(clock, std::move(retention));
  }
  if (options.expiry_sweep_seconds != 0) {
    shards.periodic_compaction_seconds = options.expiry_sweep_seconds;
  }

  rocksdb::ColumnFamilyOptions events = base;
  events.table_factory.reset(
      rocksdb::NewBlockBasedTableFactory(TableOptions(cache, true)));
  events.prefix_extractor.reset(
      rocksdb::NewFixedPrefixTransform(kCounterIdBytes));
  // Lookups in the memtable miss too: a memtable bloom on whole keys.
  events.memtable_prefix_bloom_size_ratio = 0.1;
  events.memtable_whole_key_filtering = true;
  events.optimize_filters_for_hits = false;
  // Dedupe windows: compaction drops expired markers, and every marker file
  // is compacted at least once per expiry_sweep_seconds.
  if (clock != nullptr) {
    events.compaction_filter_factory =
        NewMarkerExpiryFilterFactory(std::move(clock));
  }
  if (options.expiry_sweep_seconds != 0) {
    events.periodic_compaction_seconds = options.expiry_sweep_seconds;
  }

  r.families.emplace_back(rocksdb::kDefaultColumnFamilyName, base);
  r.families.emplace_back(kMetaFamily, meta);
  r.families.emplace_back(kShardsFamily, shards);
  r.families.emplace_back(kEventsFamily, events);
  r.families.emplace_back(kRollupsFamily, base);
  r.families.emplace_back(kOutboxFamily, base);
  return r;
}

}  // namespace tally::engine
