#include "engine/column_families.h"

#include <rocksdb/filter_policy.h>
#include <rocksdb/slice_transform.h>
#include <rocksdb/table.h>

#include <cassert>

#include "engine/bucket_retention.h"
#include "engine/counter_range.h"
#include "engine/format.h"
#include "engine/marker_expiry.h"
#include "engine/merge_operator.h"

namespace tally::engine {
namespace {

rocksdb::TableFactory* Tables(const std::shared_ptr<rocksdb::Cache>& cache,
                              bool bloom) {
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
  return rocksdb::NewBlockBasedTableFactory(t);
}

// meta, rollups, outbox, holds and claims: the options every family
// starts from.
void Plain(const FamilyTuning&, rocksdb::ColumnFamilyOptions*) {}

void TuneShards(const FamilyTuning& t, rocksdb::ColumnFamilyOptions* cf) {
  cf->merge_operator = NewInt64AddOperator();
  cf->max_successive_merges = t.options.max_pending_operands;
  // All shards of one counter share the 8-byte id prefix: an exact read is
  // one prefix scan.
  cf->prefix_extractor.reset(rocksdb::NewFixedPrefixTransform(kCounterIdBytes));
  // Bucketed counters: compaction drops buckets past their retention, and
  // every shard file is compacted at least once per expiry_sweep_seconds.
  if (t.retention != nullptr && t.clock != nullptr) {
    cf->compaction_filter_factory =
        NewBucketRetentionFilterFactory(t.clock, t.retention);
  }
  if (t.options.expiry_sweep_seconds != 0) {
    cf->periodic_compaction_seconds = t.options.expiry_sweep_seconds;
  }
}

void TuneEvents(const FamilyTuning& t, rocksdb::ColumnFamilyOptions* cf) {
  cf->table_factory.reset(Tables(t.cache, /*bloom=*/true));
  cf->prefix_extractor.reset(rocksdb::NewFixedPrefixTransform(kCounterIdBytes));
  // Lookups in the memtable miss too: a memtable bloom on whole keys.
  cf->memtable_prefix_bloom_size_ratio = 0.1;
  cf->memtable_whole_key_filtering = true;
  cf->optimize_filters_for_hits = false;
  // Dedupe windows: compaction drops expired markers, and every marker file
  // is compacted at least once per expiry_sweep_seconds.
  if (t.clock != nullptr) {
    cf->compaction_filter_factory = NewMarkerExpiryFilterFactory(t.clock);
  }
  if (t.options.expiry_sweep_seconds != 0) {
    cf->periodic_compaction_seconds = t.options.expiry_sweep_seconds;
  }
}

constexpr std::array<ColumnFamily, kTallyFamilyCount> kTable = {{
    {kMeta, kMetaFamily, false, Plain, DecodeMetaKey, DecodeMetaValue,
     RenderMeta, OnCounterDelete::kRecordKey},
    {kShards, kShardsFamily, false, TuneShards, DecodeShardsKey,
     DecodeShardsValue, RenderShards, OnCounterDelete::kCounterRange},
    {kEvents, kEventsFamily, false, TuneEvents, DecodeEventsKey,
     DecodeEventsValue, RenderEvents, OnCounterDelete::kCounterRange},
    {kRollups, kRollupsFamily, true, Plain, DecodeRollupsKey,
     DecodeRollupsValue, RenderRollups, OnCounterDelete::kCounterRange},
    {kOutbox, kOutboxFamily, true, Plain, DecodeOutboxKey, DecodeOutboxValue,
     RenderOutbox, OnCounterDelete::kKept},
    {kHolds, kHoldsFamily, true, Plain, DecodeHoldsKey, DecodeHoldsValue,
     RenderHolds, OnCounterDelete::kCounterRange},
    {kClaims, kClaimsFamily, true, Plain, DecodeClaimsKey, DecodeClaimsValue,
     RenderClaims, OnCounterDelete::kKept},
}};

constexpr bool InFamilyOrder() {
  for (size_t i = 0; i < kTable.size(); ++i) {
    if (kTable[i].index != static_cast<int>(i) + 1) return false;
  }
  return true;
}
static_assert(InFamilyOrder(), "kTable[i] is Family i + 1");

}  // namespace

rocksdb::TableFactory* NewTallyTableFactory(
    const std::shared_ptr<rocksdb::Cache>& cache) {
  return Tables(cache, /*bloom=*/false);
}

const std::array<ColumnFamily, kTallyFamilyCount>& ColumnFamilies() {
  return kTable;
}

const ColumnFamily* FindFamily(std::string_view name) {
  for (const ColumnFamily& f : kTable) {
    if (name == f.name) return &f;
  }
  return nullptr;
}

FamilyHandles HandlesOf(const std::vector<rocksdb::ColumnFamilyHandle*>& v) {
  FamilyHandles out{};
  assert(v.size() <= out.size());
  for (size_t i = 0; i < v.size() && i < out.size(); ++i) out[i] = v[i];
  return out;
}

rocksdb::Status DeleteCounterRanges(const FamilyHandles& handles, uint64_t id,
                                    rocksdb::WriteBatch* wb) {
  const CounterRange range(id);
  for (const ColumnFamily& f : kTable) {
    if (f.on_delete != OnCounterDelete::kCounterRange) continue;
    if (handles[f.index] == nullptr) continue;
    rocksdb::Status rs =
        wb->DeleteRange(handles[f.index], range.begin(), range.end());
    if (!rs.ok()) return rs;
  }
  return rocksdb::Status::OK();
}

}  // namespace tally::engine
