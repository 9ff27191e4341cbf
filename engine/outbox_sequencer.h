// OutboxSequencer: hands out outbox sequence numbers and knows which are
// settled, so a reader never skips an entry that is still being committed.
//
// A writer reserves a run of seqs before its commit and releases it after
// (success or failure). Commits finish out of order, so the entries a
// reader may take are those up to the watermark: one below the smallest
// run still in flight (or the last seq handed out when none is). A failed
// commit leaves a gap, which readers step over.
//
// Readers in other processes cannot ask: each entry stores the watermark
// at its reservation (Reserve's *settled), so what a read-only reader sees
// proves which missing seqs are dead (DbImpl::ReadOutbox).
//
// Ownership: owned by DbImpl. Thread safety: every method is safe to call
// concurrently (one mutex, held for a few instructions).

#ifndef TALLY_ENGINE_OUTBOX_SEQUENCER_H_
#define TALLY_ENGINE_OUTBOX_SEQUENCER_H_

#include <cassert>
#include <cstdint>
#include <functional>
#include <set>
#include <string>

#include "tally/status.h"
#include "util/mutex.h"

namespace tally::engine {

class OutboxSequencer {
 public:
  // At open: the last seq stored, acknowledged or known settled, and the
  // acknowledged one.
  void Reset(uint64_t last_seq, uint64_t acked_through) TALLY_EXCLUDES(mu_) {
    assert(acked_through <= last_seq);
    MutexLock lock(&mu_);
    last_ = last_seq;
    acked_ = acked_through;
    in_flight_.clear();
  }

  // Reserves `n` consecutive seqs, the first in *first, and sets *settled
  // to the watermark before them; Busy when the unacknowledged entries
  // would pass `cap`.
  Status Reserve(uint64_t n, uint64_t cap, uint64_t* first, uint64_t* settled)
      TALLY_EXCLUDES(mu_) {
    Status s = ReserveLocked(n, cap, first, settled);
    if (s.ok() && after_reserve_for_test_) after_reserve_for_test_(*first);
    return s;
  }

  // Tests only, set before any write: called after each reservation, on
  // the writer's thread, with the run's first seq (pauses a writer between
  // its reservation and its commit).
  void SetAfterReserveForTest(std::function<void(uint64_t)> hook) {
    after_reserve_for_test_ = std::move(hook);
  }

  // The run starting at `first` is settled (committed or failed).
  void Release(uint64_t first) TALLY_EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    [[maybe_unused]] const size_t erased = in_flight_.erase(first);
    assert(erased == 1);  // released once, after its reservation
  }

  // Every seq <= Watermark() is settled.
  uint64_t Watermark() const TALLY_EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return WatermarkLocked();
  }

  void Acked(uint64_t through) TALLY_EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    if (through > acked_) acked_ = through;
  }

  uint64_t acked() const TALLY_EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return acked_;
  }
  uint64_t last() const TALLY_EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return last_;
  }

 private:
  Status ReserveLocked(uint64_t n, uint64_t cap, uint64_t* first,
                       uint64_t* settled) TALLY_EXCLUDES(mu_) {
    assert(n > 0);
    MutexLock lock(&mu_);
    const uint64_t pending = last_ - acked_;
    if (pending + n > cap) {
      return Status::Busy("the outbox holds " + std::to_string(pending) +
                          " unacknowledged entries and this write adds " +
                          std::to_string(n) + ", over the cap of " +
                          std::to_string(cap) +
                          " (Options::outbox_max_entries); sync and "
                          "acknowledge it first");
    }
    *settled = WatermarkLocked();
    *first = last_ + 1;
    last_ += n;
    [[maybe_unused]] const bool fresh = in_flight_.insert(*first).second;
    assert(fresh && *settled < *first);
    return Status::OK();
  }
  uint64_t WatermarkLocked() const TALLY_REQUIRES(mu_) {
    return in_flight_.empty() ? last_ : *in_flight_.begin() - 1;
  }

  mutable Mutex mu_;
  // The last seq handed out (or stored, at open).
  uint64_t last_ TALLY_GUARDED_BY(mu_) = 0;
  // Every seq <= acked_ is acknowledged and deleted.
  uint64_t acked_ TALLY_GUARDED_BY(mu_) = 0;
  // The first seq of each run being committed.
  std::set<uint64_t> in_flight_ TALLY_GUARDED_BY(mu_);
  std::function<void(uint64_t)> after_reserve_for_test_;
};

}  // namespace tally::engine

#endif  // TALLY_ENGINE_OUTBOX_SEQUENCER_H_
