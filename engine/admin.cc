// Maintenance: compaction, checkpoints and the pending-operand estimate.

#include <rocksdb/utilities/checkpoint.h>

#include <cstdlib>

#include "engine/coding.h"
#include "engine/db_impl.h"
#include "engine/validate.h"
#include "wal/rocks_status.h"

namespace tally::engine {

Result<uint64_t> DbImpl::PendingOperands(std::string_view counter) {
  Catalog::Reader catalog(catalog_.get());
  const CounterInfo* c = catalog.Find(counter);
  if (c == nullptr) return CounterNotFound(counter);
  uint64_t pending = 0;
  rocksdb::PinnableSlice one;
  rocksdb::GetMergeOperandsOptions opts;
  opts.expected_max_number_of_operands = 1;
  for (uint32_t shard = 0; shard < c->shards; ++shard) {
    char key[kShardKeyBytes];
    EncodeShardKey(c->id, shard, key);
    int n = 0;
    rocksdb::Status rs =
        db_->GetMergeOperands(rocksdb::ReadOptions(), shards_,
                              rocksdb::Slice(key, sizeof key), &one, &opts, &n);
    one.Reset();
    if (rs.IsNotFound()) continue;
    if (!rs.ok() && !rs.IsIncomplete()) {
      return wal::FromRocks(rs, "count pending operands");
    }
    // n counts the stored entries a read folds; one per shard is the floor.
    if (n > 1) pending += static_cast<uint64_t>(n - 1);
  }
  return pending;
}

namespace {

uint64_t IntProperty(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* family,
                     const std::string& name) {
  uint64_t v = 0;
  // A property this RocksDB does not know leaves 0: figures are advisory.
  if (!db->GetIntProperty(family, name, &v)) v = 0;
  return v;
}

FamilyStats FamilyFigures(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* f) {
  FamilyStats out;
  out.sst_bytes = IntProperty(db, f, "rocksdb.live-sst-files-size");
  out.memtable_bytes = IntProperty(db, f, "rocksdb.cur-size-all-mem-tables");
  out.estimated_keys = IntProperty(db, f, "rocksdb.estimate-num-keys");
  std::string l0;
  if (db->GetProperty(f, "rocksdb.num-files-at-level0", &l0)) {
    out.l0_files = std::strtoull(l0.c_str(), nullptr, 10);
  }
  return out;
}

}  // namespace

Result<DbStats> DbImpl::GetDbStats() {
  DbStats out;
  out.engine = GetStats();
  out.meta = FamilyFigures(db_.get(), meta_);
  out.shards = FamilyFigures(db_.get(), shards_);
  out.events = FamilyFigures(db_.get(), events_);
  // The block cache is shared by all families: ask one.
  out.block_cache_usage_bytes =
      IntProperty(db_.get(), shards_, "rocksdb.block-cache-usage");
  out.block_cache_capacity_bytes =
      IntProperty(db_.get(), shards_, "rocksdb.block-cache-capacity");
  out.delayed_write_rate =
      IntProperty(db_.get(), db_->DefaultColumnFamily(),
                  "rocksdb.actual-delayed-write-rate");
  out.writes_stopped = IntProperty(db_.get(), db_->DefaultColumnFamily(),
                                   "rocksdb.is-write-stopped") != 0;
  out.background_errors = IntProperty(db_.get(), db_->DefaultColumnFamily(),
                                      "rocksdb.background-errors");
  out.latched_error = commit_->LatchedError().ToString();
  if (out.latched_error == "OK") out.latched_error.clear();
  return out;
}

Status DbImpl::Compact() {
  Status s = CheckWritable();
  if (!s.ok()) return s;
  rocksdb::CompactRangeOptions co;
  co.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForce;
  for (rocksdb::ColumnFamilyHandle* h : {meta_, shards_, events_}) {
    s = wal::FromRocks(db_->CompactRange(co, h, nullptr, nullptr),
                       "compact " + h->GetName());
    if (!s.ok()) return s;
  }
  return Status::OK();
}

Status DbImpl::Checkpoint(const std::string& dir) {
  if (dir.empty()) return Status::InvalidArgument("checkpoint directory is empty");
  rocksdb::Checkpoint* raw = nullptr;
  rocksdb::Status rs = rocksdb::Checkpoint::Create(db_.get(), &raw);
  std::unique_ptr<rocksdb::Checkpoint> cp(raw);
  if (!rs.ok()) return wal::FromRocks(rs, "checkpoint " + dir);
  return wal::FromRocks(cp->CreateCheckpoint(dir), "checkpoint " + dir);
}

}  // namespace tally::engine
