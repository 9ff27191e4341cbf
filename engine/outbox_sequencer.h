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

#include <cstdint>
#include <functional>
#include <mutex>
#include <set>
#include <string>

#include "tally/status.h"

namespace tally::engine {

class OutboxSequencer {
 public:
  // At open: the last seq stored, acknowledged or known settled, and the
  // acknowledged one.
  void Reset(uint64_t last_seq, uint64_t acked_through) {
    std::lock_guard<std::mutex> lock(mu_);
    last_ = last_seq;
    acked_ = acked_through;
    in_flight_.clear();
  }

  // Reserves `n` consecutive seqs, the first in *first, and sets *settled
  // to the watermark before them; Busy when the unacknowledged entries
  // would pass `cap`.
  Status Reserve(uint64_t n, uint64_t cap, uint64_t* first, uint64_t* settled) {
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
  void Release(uint64_t first) {
    std::lock_guard<std::mutex> lock(mu_);
    in_flight_.erase(first);
  }

  // Every seq <= Watermark() is settled.
  uint64_t Watermark() const {
    std::lock_guard<std::mutex> lock(mu_);
    return WatermarkLocked();
  }

  void Acked(uint64_t through) {
    std::lock_guard<std::mutex> lock(mu_);
    if (through > acked_) acked_ = through;
  }

  uint64_t acked() const {
    std::lock_guard<std::mutex> lock(mu_);
    return acked_;
  }
  uint64_t last() const {
    std::lock_guard<std::mutex> lock(mu_);
    return last_;
  }

 private:
  Status ReserveLocked(uint64_t n, uint64_t cap, uint64_t* first,
                       uint64_t* settled) {
    std::lock_guard<std::mutex> lock(mu_);
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
    in_flight_.insert(*first);
    return Status::OK();
  }
  uint64_t WatermarkLocked() const {
    return in_flight_.empty() ? last_ : *in_flight_.begin() - 1;
  }

  mutable std::mutex mu_;
  uint64_t last_ = 0;   // the last seq handed out (or stored, at open)
  uint64_t acked_ = 0;  // every seq <= acked_ is acknowledged and deleted
  std::set<uint64_t> in_flight_;  // first seq of each run being committed
  std::function<void(uint64_t)> after_reserve_for_test_;
};

}  // namespace tally::engine

#endif  // TALLY_ENGINE_OUTBOX_SEQUENCER_H_
