#include "wal/group_commit.h"

#include <algorithm>
#include <cassert>
#include <chrono>
#include <memory>
#include <string>
#include <system_error>
#include <utility>

#include "wal/batch_concat.h"
#include "util/wakeup.h"

namespace tally::wal {
namespace {

// The GroupCommit whose notifier thread this is, if any.
thread_local const GroupCommit* tls_notifier_of = nullptr;

}  // namespace

GroupCommitOptions GroupCommitOptionsOf(const Options& options) {
  GroupCommitOptions out;
  out.max_bytes = options.group_commit_max_bytes;
  out.max_ops = options.group_commit_max_ops;
  out.max_delay_us = options.group_commit_max_delay_us;
  return out;
}

// One queued commit. A synchronous one lives on its caller's stack; an
// asynchronous one (AsyncWriter) on the heap, owned by the queue, then by
// completed_, then by the notifier, which deletes it after its callback.
struct GroupCommit::Writer {
  // What a waiting synchronous writer is told.
  enum class Turn { kWait, kLead, kDone };

  Writer(rocksdb::WriteBatch* b, bool is_async, size_t n_ops, size_t n_bytes)
      : batch(b), async(is_async), ops(n_ops), bytes(n_bytes) {}
  virtual ~Writer() = default;

  // Tells a synchronous writer to lead or that it is done, once. After the
  // Post the writer may return and destroy itself (Wakeup allows that).
  void Tell(Turn t) {
    assert(t != Turn::kWait);
    assert(turn == Turn::kWait);  // told once
    turn = t;
    told.Post();
  }
  Turn Await() {
    told.Wait();
    return turn;
  }

  rocksdb::WriteBatch* const batch;
  const bool async;
  const size_t ops;
  const size_t bytes;
  Status status;  // set by the leader before it tells kDone (or, async,
                  // before it hands the writer to the notifier under mu_)
  // Per writer, not mu_: a woken follower returns without touching the
  // queue's lock, and the leader wakes followers after releasing it. `turn`
  // is written before told.Post() and read after told.Wait() returns.
  Wakeup told;
  Turn turn = Turn::kWait;
};

struct GroupCommit::AsyncWriter final : GroupCommit::Writer {
  // Writer only stores the address of `owned`; the counts come from `b`.
  AsyncWriter(rocksdb::WriteBatch&& b, DoneFn written, DoneFn done)
      : Writer(&owned, true, b.Count(), b.GetDataSize()),
        owned(std::move(b)),
        written_fn(std::move(written)),
        done_fn(std::move(done)) {}
  // Runs the `written` hook, if any, with `status`.
  void Written() {
    if (written_fn) written_fn(status);
  }
  rocksdb::WriteBatch owned;
  DoneFn written_fn;
  DoneFn done_fn;
};

GroupCommit::AsyncSlot::AsyncSlot(AsyncSlot&& other) noexcept
    : owner_(std::exchange(other.owner_, nullptr)) {}

GroupCommit::AsyncSlot& GroupCommit::AsyncSlot::operator=(
    AsyncSlot&& other) noexcept {
  if (this != &other) {
    Release();
    owner_ = std::exchange(other.owner_, nullptr);
  }
  return *this;
}

void GroupCommit::AsyncSlot::Release() {
  if (owner_ == nullptr) return;
  MutexLock lock(&owner_->mu_);
  owner_->GiveBackRoom();
  owner_ = nullptr;
}

GroupCommit::GroupCommit(WriteFn write, const GroupCommitOptions& options)
    : write_(std::move(write)), options_(options) {}

GroupCommit::~GroupCommit() {
  Close();
  MutexLock lock(&mu_);
  // Synchronous callers must be gone before the pipeline is destroyed;
  // Close drained every asynchronous one.
  assert(queue_.empty());
  assert(completed_.empty());
}

bool GroupCommit::OnNotifierThread() const { return tls_notifier_of == this; }

Status GroupCommit::Commit(rocksdb::WriteBatch* batch) {
  assert(batch != nullptr);
  Writer w(batch, /*is_async=*/false, batch->Count(), batch->GetDataSize());
  mu_.Lock();
  Enqueue(&w);
  if (queue_.front() != &w) {
    mu_.Unlock();
    if (w.Await() == Writer::Turn::kDone) return std::move(w.status);
    mu_.Lock();  // told to lead: w is at the front now
    assert(queue_.front() == &w);
  }
  // The group starts with w, so w is done when LeadGroup returns.
  LeadGroup(&w);
  return std::move(w.status);
}

void GroupCommit::TakeRoom() {
  if (!OnNotifierThread()) {
    while (!closed_ && async_in_flight_ >= options_.max_async_in_flight) {
      ++stats_.room_waiters;
      room_cv_.Wait(&mu_);
      --stats_.room_waiters;
    }
  }
  ++async_in_flight_;
  assert(async_in_flight_ > 0);
}

void GroupCommit::GiveBackRoom() {
  assert(async_in_flight_ > 0);
  --async_in_flight_;
  room_cv_.NotifyAll();
}

GroupCommit::AsyncSlot GroupCommit::ReserveAsync() {
  MutexLock lock(&mu_);
  TakeRoom();
  return AsyncSlot(this);
}

void GroupCommit::CommitAsync(rocksdb::WriteBatch&& batch, AsyncSlot slot,
                              DoneFn written, DoneFn done) {
  auto w = std::make_unique<AsyncWriter>(std::move(batch), std::move(written),
                                         std::move(done));
  assert(w->done_fn != nullptr);
  mu_.Lock();
  // The room is the writer's from here on (released by the notifier).
  if (slot.owner_ == this) {
    slot.owner_ = nullptr;
  } else {
    assert(slot.owner_ == nullptr);
    TakeRoom();
  }
  Status refused;
  if (closed_) {
    refused = Status::IOError(
        "the commit pipeline is closed (the database is closing): the "
        "asynchronous commit was refused and nothing of it was written");
  } else if (!committer_.joinable()) {
    try {
      committer_ = std::thread([this] { CommitterLoop(); });
      notifier_ = std::thread([this] { NotifierLoop(); });
    } catch (const std::system_error& e) {
      // Without both threads nothing could lead or report async commits.
      closed_ = true;
      refused = Status::IOError(std::string("cannot start the commit "
                                            "pipeline's threads: ") +
                                e.what() + "; nothing was written");
    }
  }
  if (!refused.ok()) {
    GiveBackRoom();
    mu_.Unlock();
    w->status = refused;
    w->Written();
    w->done_fn(refused);
    return;
  }
  AsyncWriter* raw = w.release();
  Enqueue(raw);
  if (queue_.front() == raw) committer_cv_.NotifyOne();
  mu_.Unlock();
}

void GroupCommit::Enqueue(Writer* w) {
  queue_.push_back(w);
  queued_ops_ += w->ops;
  queued_bytes_ += w->bytes;
  assert(queued_ops_ >= w->ops && queued_bytes_ >= w->bytes);
  if (delaying_ && (queued_ops_ >= options_.max_ops ||
                    queued_bytes_ >= options_.max_bytes)) {
    delay_cv_.NotifyOne();
  }
}

void GroupCommit::DelayAndFormGroup() {
  if (options_.max_delay_us > 0 && !closed_) {
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::microseconds(options_.max_delay_us);
    delaying_ = true;
    while (!closed_ && queued_ops_ < options_.max_ops &&
           queued_bytes_ < options_.max_bytes) {
      if (!delay_cv_.WaitUntil(&mu_, deadline)) break;  // the delay is over
    }
    delaying_ = false;
  }
  // The group: the front, then whoever fits within the bounds, in order.
  group_.clear();
  size_t ops = 0;
  size_t bytes = 0;
  for (Writer* w : queue_) {
    if (!group_.empty() && (ops + w->ops > options_.max_ops ||
                            bytes + w->bytes > options_.max_bytes)) {
      break;
    }
    group_.push_back(w);
    ops += w->ops;
    bytes += w->bytes;
  }
  assert(!group_.empty() && group_.front() == queue_.front());
}

void GroupCommit::LeadGroup(Writer* self) {
  assert(!queue_.empty());
  assert(self == nullptr || queue_.front() == self);
  DelayAndFormGroup();

  // Only the leader touches group_ and its members' batches and statuses
  // until they are handed back below; new writers only append to queue_.
  mu_.Unlock();
  WriteGroup();
  // Before the async members go to the notifier: their `written` hooks
  // must not wait behind earlier callbacks.
  for (Writer* w : group_) {
    if (w->async) static_cast<AsyncWriter*>(w)->Written();
  }
  mu_.Lock();

  // The members leave the queue. Async ones go to the notifier, which may
  // delete them as soon as mu_ is released; the synchronous ones to tell
  // stay in `tell`, which takes group_'s buffer so that the next leader,
  // which may start as soon as mu_ is released, has its own.
  std::vector<Writer*> tell;
  tell.swap(group_);
  const size_t members = tell.size();
  size_t kept = 0;
  uint64_t async = 0;
  for (size_t i = 0; i < members; ++i) {
    Writer* w = tell[i];
    assert(queue_.front() == w);
    queue_.pop_front();
    queued_ops_ -= w->ops;
    queued_bytes_ -= w->bytes;
    if (w->async) {
      ++async;
      completed_.push_back(static_cast<AsyncWriter*>(w));
    } else if (w != self) {
      tell[kept++] = w;
    }
  }
  tell.resize(kept);
  stats_.commits += members;
  stats_.async_commits += async;
  stats_.groups += 1;
  stats_.largest_group = std::max<uint64_t>(stats_.largest_group, members);
  if (async > 0) notifier_cv_.NotifyOne();
  // The next leader: a synchronous front is told below, after mu_ is
  // released; an asynchronous front is led by the committer thread.
  Writer* next = nullptr;
  if (queue_.empty()) {
    if (closed_) committer_cv_.NotifyOne();  // it may stop now
  } else if (queue_.front()->async) {
    committer_cv_.NotifyOne();
  } else {
    next = queue_.front();
  }
  mu_.Unlock();

  // The next group's write first: it is the long pole.
  if (next != nullptr) next->Tell(Writer::Turn::kLead);
  for (Writer* w : tell) w->Tell(Writer::Turn::kDone);
}

void GroupCommit::WriteGroup() {
  assert(!group_.empty());
  if (group_.size() == 1) {
    group_[0]->status = write_(group_[0]->batch);
    return;
  }
  size_t bytes = kBatchHeaderBytes;
  for (const Writer* w : group_) bytes += w->bytes - kBatchHeaderBytes;
  BatchConcat concat(bytes);
  for (const Writer* w : group_) concat.Append(*w->batch);
  rocksdb::WriteBatch batch = concat.Finish();
  // One write, one verdict for every member. No member is retried alone:
  // RocksDB may have logged (and partly applied) a group it then refused
  // (a memtable insert failing after the WAL write), and a retry would
  // apply those increments twice.
  const Status s = write_(&batch);
  for (Writer* w : group_) w->status = s;
}

void GroupCommit::CommitterLoop() {
  mu_.Lock();
  for (;;) {
    while (!(!queue_.empty() && queue_.front()->async) &&
           !(closed_ && queue_.empty())) {
      committer_cv_.Wait(&mu_);
    }
    if (queue_.empty()) break;  // closed and drained
    LeadGroup(nullptr);
    mu_.Lock();
  }
  // Nothing will complete any more: the notifier may finish.
  notifier_cv_.NotifyOne();
  mu_.Unlock();
}

void GroupCommit::NotifierLoop() {
  tls_notifier_of = this;
  std::vector<AsyncWriter*> run;
  mu_.Lock();
  for (;;) {
    while (completed_.empty() && !(closed_ && queue_.empty())) {
      notifier_cv_.Wait(&mu_);
    }
    if (completed_.empty()) break;  // closed, drained, all reported
    run.clear();
    run.swap(completed_);
    mu_.Unlock();
    for (AsyncWriter* w : run) {
      w->done_fn(w->status);
      delete w;
    }
    mu_.Lock();
    assert(async_in_flight_ >= run.size());
    async_in_flight_ -= run.size();
    room_cv_.NotifyAll();
  }
  mu_.Unlock();
}

void GroupCommit::Close() {
  // A callback closing its own pipeline would join its own thread.
  assert(!OnNotifierThread());
  if (OnNotifierThread()) return;
  std::thread committer;
  std::thread notifier;
  {
    MutexLock lock(&mu_);
    closed_ = true;
    committer = std::move(committer_);
    notifier = std::move(notifier_);
  }
  committer_cv_.NotifyAll();
  notifier_cv_.NotifyAll();
  room_cv_.NotifyAll();
  delay_cv_.NotifyAll();
  if (committer.joinable()) committer.join();
  if (notifier.joinable()) notifier.join();
}

GroupCommitStats GroupCommit::stats() const {
  MutexLock lock(&mu_);
  GroupCommitStats out = stats_;
  out.queued = queue_.size();
  out.closed = closed_;
  return out;
}

}  // namespace tally::wal
