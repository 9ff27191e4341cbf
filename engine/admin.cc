// Maintenance: compaction, checkpoints and the pending-operand estimate.

#include <rocksdb/utilities/checkpoint.h>

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
