#include "wal/commit_pipeline.h"

#include <cassert>
#include <utility>

#include "util/rocks_status.h"

namespace tally::wal {

CommitPipeline::CommitPipeline(rocksdb::DB* db, bool sync,
                               const GroupCommitOptions& group)
    : db_(db) {
  write_.sync = sync;
  durable_.sync = true;
  if (sync) {
    group_ = std::make_unique<GroupCommit>(
        [this](rocksdb::WriteBatch* b) { return Write(b, durable_); }, group);
  }
}

CommitPipeline::~CommitPipeline() { Close(); }

void CommitPipeline::Close() {
  if (group_ != nullptr) group_->Close();
}

Status CommitPipeline::GroupedCommit(rocksdb::WriteBatch* batch) {
  // A latched pipeline fails fast, without queueing behind others.
  if (failed_.load(std::memory_order_acquire)) return LatchedError();
  return group_->Commit(batch);
}

void CommitPipeline::CommitAsync(rocksdb::WriteBatch&& batch, AsyncSlot slot,
                                 DoneFn written, DoneFn done) {
  Status inline_status;
  if (group_ == nullptr) {
    inline_status = Write(&batch, write_);
  } else if (failed_.load(std::memory_order_acquire)) {
    inline_status = LatchedError();
  } else {
    group_->CommitAsync(std::move(batch), std::move(slot), std::move(written),
                        std::move(done));
    return;
  }
  slot = AsyncSlot();  // its room back before any callback runs
  if (written) written(inline_status);
  done(inline_status);
}

Status CommitPipeline::Write(rocksdb::WriteBatch* batch,
                             const rocksdb::WriteOptions& wo) {
  assert(batch != nullptr);
  assert(&wo == &write_ || &wo == &durable_);
  if (failed_.load(std::memory_order_acquire)) return LatchedError();
#if defined(__SANITIZE_THREAD__)
  // TSAN builds only. In RocksDB's write group the leader thread reads the
  // followers' WriteBatches; the hand-back is synchronised inside Debian's
  // uninstrumented librocksdb, so TSAN reports the follower's next reuse of
  // its thread-local batch as a race (seen in the sync crash test). One
  // RocksDB write at a time keeps every batch in its own thread. tally's
  // own group commit (durable pipelines) hands batches to its leader under
  // its own mutex, which TSAN sees; its group write also goes through here,
  // so it never shares a RocksDB write group with a CommitDurable.
  static Mutex tsan_one_commit;
  MutexLock one_commit(&tsan_one_commit);
#endif
  rocksdb::Status rs = db_->Write(wo, batch);
  if (rs.ok()) return Status::OK();
  Status s = FromRocks(rs, "commit");
  // Only failures that leave the database in doubt are latched; a refused
  // batch (e.g. InvalidArgument) says nothing about the next one.
  if (s.IsIOError() || s.IsCorruption()) Latch(s);
  return s;
}

void CommitPipeline::Latch(const Status& s) {
  assert(!s.ok());
  MutexLock lock(&mu_);
  if (!failed_.load(std::memory_order_relaxed)) {
    error_ = Status::IOError("database stopped accepting writes after an "
                             "earlier failure; reopen it. First failure: " +
                             s.ToString());
    failed_.store(true, std::memory_order_release);
  }
  // Set once: the first failure stays the latched one.
  assert(error_.IsIOError());
}

Status CommitPipeline::LatchedError() const {
  MutexLock lock(&mu_);
  // failed_ is stored after error_ under mu_: a set flag has its error.
  assert(error_.ok() != failed_.load(std::memory_order_relaxed));
  return error_;
}

GroupCommitStats CommitPipeline::GroupStats() const {
  return group_ != nullptr ? group_->stats() : GroupCommitStats();
}

}  // namespace tally::wal
