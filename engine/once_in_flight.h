// OnceInFlight: the once-increments that IncrementOnceAsync has decided as
// applied and queued, from the moment the decision is taken (under the
// event's stripe) until their group is written (the `written` hook).
//
// Why: IncrementOnce holds the event's stripe (engine/event_locks.h) from
// the marker check until its write commits, so a second copy of the event
// waits and then finds the marker. An asynchronous once-increment cannot
// hold the stripe until its commit (the thread returns at once, and would
// deadlock on its own stripe submitting a second copy), so it releases the
// stripe with its marker not yet in RocksDB but registered here. Every
// check-then-write of a marker looks here too, under the same stripe:
//   - IncrementOnceAsync finding a pending copy is decided against it
//     (duplicate or conflict, with its shard) without waiting, and rides on
//     it: its callback runs right after the pending copy's, with the
//     pending copy's Status when that commit failed;
//   - IncrementOnce and Apply finding one wait (holding the stripe) until it
//     is written, then read the marker as usual.
// Only the `written` hook removes an entry, and it takes no stripe: a
// synchronous once-increment can hold a stripe across its group commit, and
// the hook runs on the thread leading the group, so waiting for that stripe
// there could deadlock. Lock order: stripe, then mu_, then a Pending's mu.
//
// Ownership: owned by DbImpl; holds its entries by address, each owned by
// its commit's callbacks (a shared_ptr). Thread safety: all methods are
// safe to call concurrently; Find/AddRider/Add are called holding the
// event's stripe.

#ifndef TALLY_ENGINE_ONCE_IN_FLIGHT_H_
#define TALLY_ENGINE_ONCE_IN_FLIGHT_H_

#include <atomic>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "wal/commit_pipeline.h"
#include "engine/write_plan.h"
#include "tally/db.h"
#include "tally/types.h"
#include "util/mutex.h"

namespace tally::engine {

class OnceInFlight {
 public:
  // A copy decided against a pending once-increment, answered after it.
  struct Rider {
    IncrementResult answer;  // kDuplicate or kConflict, the pending's shard
    IncrementCallback done;
    wal::CommitPipeline::AsyncSlot slot;  // its room, until it is answered
  };

  // One queued once-increment: its marker key, delta and shard.
  class Pending {
   public:
    Pending(std::string marker_key, int64_t delta, uint32_t shard)
        : key_(std::move(marker_key)), delta_(delta), shard_(shard) {}
    const std::string& key() const { return key_; }
    // The copies decided against this one; called once, from its `done`.
    std::vector<Rider> TakeRiders() TALLY_EXCLUDES(mu_) {
      MutexLock lock(&mu_);
      return std::move(riders_);
    }

   private:
    friend class OnceInFlight;
    const std::string key_;
    const int64_t delta_;
    const uint32_t shard_;
    Mutex mu_;
    std::vector<Rider> riders_ TALLY_GUARDED_BY(mu_);
  };

  // True when nothing is pending: the synchronous paths skip the lookup
  // (one atomic load). Read under the event's stripe, this cannot miss an
  // entry of that event: Add runs under the same stripe.
  bool Empty() const { return count_.load(std::memory_order_acquire) == 0; }

  // The marker a pending copy at `key` will store, if one is pending.
  bool Find(std::string_view key, FoundMarker* marker) const
      TALLY_EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    auto it = pending_.find(key);
    if (it == pending_.end()) return false;
    marker->found = true;
    marker->delta = it->second->delta_;
    marker->shard = it->second->shard_;
    return true;
  }

  // Makes a copy with `answer` ride on the copy pending at `key`, taking
  // `done` and `slot`; false (nothing taken) when that copy was written
  // since Find: its marker is then stored.
  bool AddRider(std::string_view key, const IncrementResult& answer,
                IncrementCallback* done,
                wal::CommitPipeline::AsyncSlot* slot) TALLY_EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    auto it = pending_.find(key);
    if (it == pending_.end()) return false;
    Pending* p = it->second;
    MutexLock rider_lock(&p->mu_);
    p->riders_.push_back(Rider{answer, std::move(*done), std::move(*slot)});
    return true;
  }

  // Registers a once-increment decided as applied; none may be pending at
  // its key (the caller holds the stripe and found none).
  std::shared_ptr<Pending> Add(std::string marker_key, int64_t delta,
                               uint32_t shard) TALLY_EXCLUDES(mu_) {
    auto p = std::make_shared<Pending>(std::move(marker_key), delta, shard);
    MutexLock lock(&mu_);
    const bool added = pending_.emplace(p->key(), p.get()).second;
    assert(added);
    (void)added;
    count_.store(pending_.size(), std::memory_order_release);
    return p;
  }

  // The `written` hook: `p`'s group was written (or failed); later checks
  // read the marker from RocksDB. Wakes the synchronous waiters.
  void Remove(const Pending& p) TALLY_EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    const size_t erased = pending_.erase(p.key());
    assert(erased == 1);
    (void)erased;
    count_.store(pending_.size(), std::memory_order_release);
    if (waiters_ > 0) written_.NotifyAll();
  }

  // Returns once no copy is pending at `key` (the synchronous paths, which
  // hold its stripe; the pending copy's write needs no stripe).
  void AwaitWritten(std::string_view key) TALLY_EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    while (pending_.count(key) != 0) {
      ++waiters_;
      written_.Wait(&mu_);
      --waiters_;
    }
  }

 private:
  mutable Mutex mu_;
  // Keys view the Pending's own key, which outlives its entry.
  std::unordered_map<std::string_view, Pending*> pending_ TALLY_GUARDED_BY(mu_);
  std::atomic<size_t> count_{0};  // pending_.size()
  size_t waiters_ TALLY_GUARDED_BY(mu_) = 0;
  CondVar written_;
};

}  // namespace tally::engine

#endif  // TALLY_ENGINE_ONCE_IN_FLIGHT_H_
