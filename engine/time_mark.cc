// The time mark: the engine clock's high-water mark persisted in meta
// (docs/design.md, "Time: a clock that never steps back"; docs/format.md,
// meta). Loaded at every open and Refresh; advanced by writers at open, by
// the tick (kTimeMarkIntervalMs) and before tally::Compact, never per
// increment.

#include <rocksdb/write_batch.h>

#include "engine/coding.h"
#include "engine/db_impl.h"
#include "engine/format.h"
#include "tally/limits.h"
#include "util/rocks_status.h"

namespace tally::engine {

Status DbImpl::LoadTimeMark() {
  std::string value;
  rocksdb::Status rs =
      db_->Get(rocksdb::ReadOptions(), meta_, kTimeMarkKey, &value);
  if (rs.IsNotFound()) return Status::OK();
  if (!rs.ok()) return FromRocks(rs, "read the time mark");
  const uint64_t mark = value.size() == 8 ? DecodeFixed64BE(value.data()) : 0;
  if (value.size() != 8 || mark > static_cast<uint64_t>(kMaxEventTimeMs)) {
    return Status::Corruption(
        "database " + path_ + ": the time mark (meta key " +
        HexKey(kTimeMarkKey) + ") is malformed (" +
        std::to_string(value.size()) + " bytes holding " +
        std::to_string(mark) + ", expected 8 holding a time in 0.." +
        std::to_string(kMaxEventTimeMs) + ")");
  }
  {
    MutexLock lock(&time_mark_mu_);
    time_mark_stored_ = true;
  }
  // What was read back from disk is durable: a drop judged with it stays
  // judged that way.
  clock_->SetDurable(static_cast<int64_t>(mark));
  return Status::OK();
}

Status DbImpl::AdvanceTimeMark() {
  MutexLock lock(&time_mark_mu_);
  const int64_t now = clock_->NowMillis();
  if (time_mark_stored_ && now <= clock_->Durable()) return Status::OK();
  char value[8];
  EncodeFixed64BE(static_cast<uint64_t>(now), value);
  rocksdb::WriteBatch wb;
  rocksdb::Status rs =
      wb.Put(meta_, kTimeMarkKey, rocksdb::Slice(value, sizeof value));
  if (!rs.ok()) return FromRocks(rs, "write the time mark");
  // The first mark of a database raises its format (format.h); later ones
  // are a plain synced write that takes no catalog lock.
  Status s = time_mark_stored_
                 ? commit_->CommitDurable(&wb)
                 : catalog_->CommitRaisingFormat(kTimeMarkFormatVersion, &wb);
  if (!s.ok()) return s;
  time_mark_stored_ = true;
  clock_->SetDurable(now);
  return Status::OK();
}

}  // namespace tally::engine
