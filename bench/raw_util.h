// What the benchmark binaries that drive raw RocksDB with the engine's key
// coding share (strategies_bench, tally_bench, tally_durability_bench):
// opening a database with the engine's options (OpenRocks) or with RocksDB's
// defaults (OpenDefaultRocks), closing it, and summing a counter's shards
// for the after-run check.

#ifndef TALLY_BENCH_RAW_UTIL_H_
#define TALLY_BENCH_RAW_UTIL_H_

#include <rocksdb/db.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/coding.h"
#include "engine/format.h"
#include "engine/merge_operator.h"
#include "engine/rocksdb_options.h"

namespace tally::bench {

// Adds `value`, an int64 in the engine's coding, to *sum; Corruption if it
// does not decode.
inline rocksdb::Status AddValue(const rocksdb::Slice& value, int64_t* sum) {
  int64_t v = 0;
  if (!engine::DecodeInt64(std::string_view(value.data(), value.size()), &v)) {
    return rocksdb::Status::Corruption("bad shard value");
  }
  *sum += v;
  return rocksdb::Status::OK();
}

// The sum of shards 0..shards-1 of counter `counter_id` (a missing shard
// counts 0).
inline rocksdb::Status SumShards(rocksdb::DB* db,
                                 rocksdb::ColumnFamilyHandle* cf,
                                 uint64_t counter_id, uint32_t shards,
                                 int64_t* sum) {
  *sum = 0;
  for (uint32_t shard = 0; shard < shards; ++shard) {
    char key[engine::kShardKeyBytes];
    engine::EncodeShardKey(counter_id, shard, key);
    rocksdb::PinnableSlice value;
    rocksdb::Status s = db->Get(rocksdb::ReadOptions(), cf,
                                rocksdb::Slice(key, sizeof(key)), &value);
    if (s.IsNotFound()) continue;
    if (s.ok()) s = AddValue(value, sum);
    if (!s.ok()) return s;
  }
  return rocksdb::Status::OK();
}

// Opens (creating) a raw RocksDB database at `path` with the engine's
// options and column families; *db owns it afterwards (also on error, when
// it may be null).
inline rocksdb::Status OpenRocks(
    const std::string& path, std::vector<rocksdb::ColumnFamilyHandle*>* handles,
    std::unique_ptr<rocksdb::DB>* db) {
  engine::RocksOptions ro = engine::MakeRocksOptions(Options());
  ro.db.create_if_missing = true;
  ro.db.create_missing_column_families = true;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s =
      rocksdb::DB::Open(ro.db, path, ro.families, handles, &raw);
  db->reset(raw);
  return s;
}

// Opens (creating) a raw RocksDB database at `path` as a user following
// RocksDB's documentation would: default DBOptions and ColumnFamilyOptions,
// the engine's families by name (so handles[engine::kShards] and
// handles[engine::kEvents] index as for OpenRocks), and on `shards` only the
// int64 merge operator a counter needs. The reference of issue 14's "beyond
// RocksDB's defaults" ratios (tally_bench's BM_Raw*). *db owns the database
// afterwards (also on error, when it may be null).
inline rocksdb::Status OpenDefaultRocks(
    const std::string& path, std::vector<rocksdb::ColumnFamilyHandle*>* handles,
    std::unique_ptr<rocksdb::DB>* db) {
  rocksdb::DBOptions options;
  options.create_if_missing = true;
  options.create_missing_column_families = true;
  const engine::RocksOptions ro = engine::MakeRocksOptions(Options());
  std::vector<rocksdb::ColumnFamilyDescriptor> families;
  for (const rocksdb::ColumnFamilyDescriptor& f : ro.families) {
    rocksdb::ColumnFamilyOptions cf;
    if (f.name == engine::kShardsFamily) {
      cf.merge_operator = engine::NewInt64AddOperator();
    }
    families.emplace_back(f.name, cf);
  }
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(options, path, families, handles, &raw);
  db->reset(raw);
  return s;
}

// Releases the column family handles, then closes `db` (nothing to do
// about an error there). The caller deletes db afterwards.
inline void CloseRocks(
    rocksdb::DB* db, const std::vector<rocksdb::ColumnFamilyHandle*>& handles) {
  if (db == nullptr) return;
  for (rocksdb::ColumnFamilyHandle* h : handles) {
    db->DestroyColumnFamilyHandle(h).PermitUncheckedError();
  }
  db->Close().PermitUncheckedError();
}

}  // namespace tally::bench

#endif  // TALLY_BENCH_RAW_UTIL_H_
