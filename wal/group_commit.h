// GroupCommit: gathers concurrent durable commits into one synced write
// (leader/follower group commit, as in LevelDB's DBImpl::Write) and drives
// asynchronous commits from two threads of its own.
//
// Every commit joins one FIFO queue. The commit at the front leads: it
// takes the queued batches from the front, up to GroupCommitOptions'
// bounds (optionally waiting up to max_delay_us for more to arrive),
// concatenates them into one WriteBatch (BatchConcat), writes it through
// `write` (one DB::Write with sync=true, so one fsync), stores the shared
// Status in every member, and, after releasing the queue's lock, tells the
// new front to lead and then wakes the members (each waits on its own
// Wakeup, util/wakeup.h: one futex wake per member, no lock to retake). A
// member returns only after `write` returned, so its data is durable and
// applied to the memtable (visible to reads).
//
// A synchronous Commit leads on its own thread. An asynchronous commit
// (CommitAsync) has no thread of its own: when one is at the front, the
// committer thread leads. A second thread, the notifier, runs every async
// callback in queue order, outside the lock; the committer never runs user
// code, so a callback that blocks (on a lock a queued synchronous committer
// holds, say) cannot stop the queue. An async commit may also carry a
// `written` hook, which the group's leader runs right after the write: what
// must follow the write alone (the engine's settle accounting) then never
// waits for an earlier callback. Both threads are started by the first
// CommitAsync, so a pipeline that only commits synchronously has none.
//
// A group is one write: when it fails, every member gets its error; none
// is retried alone.
//
// Ownership: does not own what `write` writes to; owns the queued
// asynchronous batches, their callbacks and its two threads.
// Thread safety: Commit and CommitAsync may be called from many threads at
// once. Close (and the destructor) from one thread, not from a callback,
// while `write` still works: Close commits everything queued before it.

#ifndef TALLY_WAL_GROUP_COMMIT_H_
#define TALLY_WAL_GROUP_COMMIT_H_

#include <rocksdb/write_batch.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <thread>
#include <utility>
#include <vector>

#include "tally/options.h"
#include "tally/status.h"
#include "util/mutex.h"

namespace tally::wal {

// Bounds on one group write. Each group takes at least one commit, however
// large; these bound how many more join it.
struct GroupCommitOptions {
  // Bytes of WriteBatch data (Data().size()) in one group. Default: 1 MiB.
  size_t max_bytes = size_t{1} << 20;
  // WriteBatch records (WriteBatch::Count()) in one group. Default: 16384.
  size_t max_ops = 16384;
  // How long the leader waits for more commits before writing, in
  // microseconds, unless a bound is reached first. Default: 0 (write at
  // once; commits arriving during a write form the next group).
  uint32_t max_delay_us = 0;
  // Asynchronous commits reserved (ReserveAsync), queued or awaiting their
  // callback at once; a reservation beyond this waits for room (except on
  // the notifier thread, which must never wait for itself). Default: 65536.
  size_t max_async_in_flight = 65536;
};

// The group commit fields of tally::Options (group_commit_*), the rest
// defaulted.
GroupCommitOptions GroupCommitOptionsOf(const Options& options);

// Counts since construction.
struct GroupCommitStats {
  uint64_t commits = 0;        // batches written (or failed) through groups
  uint64_t groups = 0;         // group writes (fsyncs asked of `write`)
  uint64_t largest_group = 0;  // the most batches one group held
  uint64_t async_commits = 0;  // of `commits`, those from CommitAsync
  uint64_t queued = 0;         // commits in the queue now (leader's too)
  uint64_t room_waiters = 0;   // threads waiting for async room now
  bool closed = false;         // Close has begun
};

class GroupCommit {
 public:
  // Writes one batch durably; must be safe to call from any thread.
  using WriteFn = std::function<Status(rocksdb::WriteBatch*)>;
  using DoneFn = std::function<void(const Status&)>;

  GroupCommit(WriteFn write, const GroupCommitOptions& options);
  ~GroupCommit();  // Close()
  GroupCommit(const GroupCommit&) = delete;
  GroupCommit& operator=(const GroupCommit&) = delete;

  // Commits `batch` as part of a group; returns the group's Status once the
  // group's write returned. `batch` is read until then, not modified.
  Status Commit(rocksdb::WriteBatch* batch) TALLY_EXCLUDES(mu_);

  // Room for one asynchronous commit in max_async_in_flight, from
  // ReserveAsync to the CommitAsync it is handed to (which then counts it
  // until its callback returned); given back if it is never handed over.
  // Move-only; must not outlive its GroupCommit.
  class AsyncSlot {
   public:
    AsyncSlot() = default;  // empty: holds no room
    AsyncSlot(AsyncSlot&& other) noexcept;
    AsyncSlot& operator=(AsyncSlot&& other) noexcept;
    ~AsyncSlot() { Release(); }

   private:
    friend class GroupCommit;
    explicit AsyncSlot(GroupCommit* owner) : owner_(owner) {}
    void Release();
    GroupCommit* owner_ = nullptr;
  };

  // Waits until fewer than max_async_in_flight asynchronous commits are in
  // flight (not on the notifier thread, which must never wait for itself,
  // and not once closed) and reserves room for one more. Room comes back
  // as callbacks return: call it holding no lock a callback may need.
  AsyncSlot ReserveAsync() TALLY_EXCLUDES(mu_);

  // Queues `batch` in the room `slot` holds (an empty slot reserves it
  // first, as ReserveAsync does) and returns without waiting. `written`,
  // when given, runs exactly once with the group's Status on the thread
  // that led the group (the committer, or a synchronous committer),
  // right after the group's write returned; it must be short, must not
  // block and must not call into the pipeline. `done` runs exactly once
  // after `written`, on the notifier thread, with the same Status. After
  // Close, both run at once on the calling thread with an IOError saying
  // the pipeline is closed and nothing was written. Neither may throw;
  // while `done` runs, later callbacks wait (writes and `written` hooks do
  // not). `done` may call Commit, ReserveAsync and CommitAsync (which then
  // never wait for room), not Close.
  void CommitAsync(rocksdb::WriteBatch&& batch, AsyncSlot slot, DoneFn written,
                   DoneFn done) TALLY_EXCLUDES(mu_);
  // CommitAsync without a `written` hook, reserving its room first.
  void CommitAsync(rocksdb::WriteBatch&& batch, DoneFn done) {
    CommitAsync(std::move(batch), AsyncSlot(), nullptr, std::move(done));
  }

  // Refuses later CommitAsync calls, commits everything already queued,
  // runs every pending callback and joins both threads. Synchronous Commit
  // keeps working. Idempotent.
  void Close() TALLY_EXCLUDES(mu_);

  GroupCommitStats stats() const TALLY_EXCLUDES(mu_);

 private:
  struct Writer;
  struct AsyncWriter;

  // Appends `w` to the queue; wakes whoever must lead or stop delaying.
  void Enqueue(Writer* w) TALLY_REQUIRES(mu_);
  // Leads one group. Requires mu_ held and the queue's front to be `self`
  // (the caller's writer) or, with `self` null on the committer thread, an
  // async writer. Returns with mu_ released, the group written and
  // dequeued, its members told, the next leader told.
  void LeadGroup(Writer* self) TALLY_RELEASE(mu_);
  // LeadGroup's first part: waits up to max_delay_us for the group to fill
  // (mu_ released while waiting), then sets group_ to the front and whoever
  // fits within the bounds after it.
  void DelayAndFormGroup() TALLY_REQUIRES(mu_);
  // Writes group_ (mu_ not held); stores each member's Status.
  void WriteGroup() TALLY_EXCLUDES(mu_);
  // The committer thread: leads groups whose front is asynchronous.
  void CommitterLoop() TALLY_EXCLUDES(mu_);
  // The notifier thread: runs the callbacks of completed async commits.
  void NotifierLoop() TALLY_EXCLUDES(mu_);
  bool OnNotifierThread() const;
  // Waits for room (unless on the notifier thread or closed) and takes it.
  void TakeRoom() TALLY_REQUIRES(mu_);
  // Gives back the room of a slot never handed over, or of a refused
  // commit.
  void GiveBackRoom() TALLY_REQUIRES(mu_);

  const WriteFn write_;
  const GroupCommitOptions options_;

  mutable Mutex mu_;
  std::deque<Writer*> queue_ TALLY_GUARDED_BY(mu_);  // front leads
  size_t queued_ops_ TALLY_GUARDED_BY(mu_) = 0;      // records in queue_
  size_t queued_bytes_ TALLY_GUARDED_BY(mu_) = 0;    // bytes in queue_
  bool delaying_ TALLY_GUARDED_BY(mu_) = false;      // a leader waits
  CondVar delay_cv_;  // a delaying leader waits here
  std::vector<AsyncWriter*> completed_ TALLY_GUARDED_BY(mu_);  // to call back
  // Slots + queued + awaiting their callback.
  size_t async_in_flight_ TALLY_GUARDED_BY(mu_) = 0;
  CondVar room_cv_;       // TakeRoom waits for room here
  CondVar committer_cv_;  // front is async, or closed_
  CondVar notifier_cv_;   // completed_ filled, or closed_
  bool closed_ TALLY_GUARDED_BY(mu_) = false;
  // Both started by the first CommitAsync.
  std::thread committer_ TALLY_GUARDED_BY(mu_);
  std::thread notifier_ TALLY_GUARDED_BY(mu_);
  GroupCommitStats stats_ TALLY_GUARDED_BY(mu_);  // but `queued`

  // The current group's members: used only by the leader (one at a time;
  // leadership passes from one leader to the next).
  std::vector<Writer*> group_;
};

}  // namespace tally::wal

#endif  // TALLY_WAL_GROUP_COMMIT_H_
