// CommitPipeline: the one door through which every tally write reaches
// RocksDB's WAL and memtables.
//
// It applies the durability policy (Options::sync for increments; metadata
// changes are always synced) and latches the first write error, the way
// LevelDB latches bg_error_: once a commit failed with an I/O error or
// corruption, every later commit fails fast with that same error until the
// database is reopened, so no increment is acknowledged on a database in an
// unknown state.
//
// Not durable (sync = false): Commit is the direct DB::Write, nothing more
// (no queue, no lock, no allocation); RocksDB's own group commit gathers
// concurrent writes into one WAL write. Durable (sync = true): Commit goes
// through GroupCommit (wal/group_commit.h): concurrent commits are gathered
// by a leader into one WriteBatch and one fsync, within the bounds of
// GroupCommitOptions; each returns once its group is durable and applied to
// the memtable. Members of a failed group all get its error; an I/O error
// or corruption then latches as above. CommitAsync lets one thread keep
// many durable commits in flight.
//
// Ownership: does not own the rocksdb::DB; the DB must outlive it, or at
// least outlive Close(). Owns the GroupCommit (and so its threads, if any
// asynchronous commit started them).
// Thread safety: Commit, CommitDurable, CommitAsync and LatchedError may be
// called from many threads at once; Close from one, with no Commit running.

#ifndef TALLY_WAL_COMMIT_PIPELINE_H_
#define TALLY_WAL_COMMIT_PIPELINE_H_

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <atomic>
#include <functional>
#include <memory>
#include <utility>

#include "tally/status.h"
#include "wal/group_commit.h"
#include "util/mutex.h"

namespace tally::wal {

class CommitPipeline {
 public:
  // `group` matters only when `sync` is true.
  CommitPipeline(rocksdb::DB* db, bool sync,
                 const GroupCommitOptions& group = GroupCommitOptions());
  ~CommitPipeline();  // Close()
  CommitPipeline(const CommitPipeline&) = delete;
  CommitPipeline& operator=(const CommitPipeline&) = delete;

  // Commits an increment batch with the configured durability. Durable: the
  // batch is part of a group when this returns OK, so it is on disk and
  // visible to reads.
  Status Commit(rocksdb::WriteBatch* batch) {
    if (group_ == nullptr) return Write(batch, write_);
    return GroupedCommit(batch);
  }
  // Commits a metadata change (create, delete): always fsynced, alone.
  Status CommitDurable(rocksdb::WriteBatch* batch) {
    return Write(batch, durable_);
  }

  using DoneFn = std::function<void(const Status&)>;
  using AsyncSlot = GroupCommit::AsyncSlot;

  // Whether Commit goes through the group commit (Options::sync).
  bool durable() const { return group_ != nullptr; }

  // Durable pipeline: waits for room for one more asynchronous commit and
  // reserves it (GroupCommit::ReserveAsync; call it holding no lock a
  // callback may need). Otherwise an empty slot, at once.
  AsyncSlot ReserveAsync() {
    return group_ != nullptr ? group_->ReserveAsync() : AsyncSlot();
  }

  // Commits `batch` without waiting for it (in the room `slot` holds; an
  // empty slot reserves it first); `written`, when given, and then `done`
  // run exactly once each with the commit's Status. Durable pipeline:
  // `written` on the thread that wrote the group, right after the write,
  // and `done` on the pipeline's notifier thread, once the group holding
  // the batch is durable and visible (or failed); see
  // GroupCommit::CommitAsync for what each may do. Both inline, before
  // CommitAsync returns, when the pipeline is not durable (the batch is
  // written at once, as Commit would), when an earlier error is latched, or
  // after Close (an IOError: nothing was written): call it holding no lock
  // `done` may need.
  void CommitAsync(rocksdb::WriteBatch&& batch, AsyncSlot slot, DoneFn written,
                   DoneFn done);
  void CommitAsync(rocksdb::WriteBatch&& batch, DoneFn done) {
    CommitAsync(std::move(batch), AsyncSlot(), nullptr, std::move(done));
  }

  // Stops accepting asynchronous commits, commits every one already queued
  // and runs its callback, and joins the pipeline's threads. Must run while
  // the DB is still open (the destructor calls it too; the engine should
  // call it before closing the DB once it commits asynchronously).
  void Close();

  // The latched error, or OK.
  Status LatchedError() const TALLY_EXCLUDES(mu_);

  // Group commit counts (all zero when not durable).
  GroupCommitStats GroupStats() const;

 private:
  Status GroupedCommit(rocksdb::WriteBatch* batch);
  Status Write(rocksdb::WriteBatch* batch, const rocksdb::WriteOptions& wo);
  void Latch(const Status& s) TALLY_EXCLUDES(mu_);

  rocksdb::DB* const db_;
  rocksdb::WriteOptions write_;
  rocksdb::WriteOptions durable_;
  std::atomic<bool> failed_{false};  // fast check on the hot path
  mutable Mutex mu_;
  Status error_ TALLY_GUARDED_BY(mu_);  // set once
  // Last: its threads write through the members above, so it goes first.
  std::unique_ptr<GroupCommit> group_;  // null when not durable
};

}  // namespace tally::wal

#endif  // TALLY_WAL_COMMIT_PIPELINE_H_
