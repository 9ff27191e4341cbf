// EventLocks: striped mutexes that serialise the check-then-write of
// once-increments with the same (counter, event id).
//
// Two deliveries of one event hash to one stripe, so one of them sees the
// other's marker. Unrelated events share a stripe only by chance (1 in
// stripe count), which costs a short wait, never a wrong answer. A batch
// takes all its stripes in ascending order, so two batches cannot deadlock.
//
// Ownership: owns the mutexes. Thread safety: it is the synchronization.

#ifndef TALLY_ENGINE_EVENT_LOCKS_H_
#define TALLY_ENGINE_EVENT_LOCKS_H_

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "util/mutex.h"

namespace tally::engine {

class EventLocks {
 public:
  explicit EventLocks(uint32_t stripes)
      : count_(stripes), stripes_(new Stripe[stripes]) {
    assert(stripes > 0);
  }

  uint32_t StripeOf(uint64_t counter_id, uint64_t event_hash) const {
    // Mix the counter in so one event id counted in several counters does
    // not pile onto one stripe.
    const uint64_t h = event_hash ^ (counter_id * 0x9e3779b97f4a7c15ULL);
    return static_cast<uint32_t>((h >> 17) % count_);
  }

  // Holds one stripe. The stripe is chosen at run time from an array, which
  // the thread-safety analysis cannot name, and no field is guarded by a
  // stripe (they serialise marker reads and writes in RocksDB): the hold
  // is unchecked, here and in MultiGuard.
  class Guard {
   public:
    Guard(EventLocks* locks, uint32_t stripe) TALLY_NO_THREAD_SAFETY_ANALYSIS
        : mu_(&locks->stripes_[stripe].mu) {
      assert(stripe < locks->count_);
      mu_->Lock();
    }
    ~Guard() TALLY_NO_THREAD_SAFETY_ANALYSIS { mu_->Unlock(); }
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;

   private:
    Mutex* const mu_;
  };

  // No stripe (PairGuard).
  static constexpr uint32_t kNoStripe = ~uint32_t{0};

  // Holds up to two stripes (kNoStripe: none), the lower first, one when
  // both are the same: a single op's (the write sequence), without
  // allocating.
  class PairGuard {
   public:
    PairGuard(EventLocks* locks, uint32_t a,
              uint32_t b) TALLY_NO_THREAD_SAFETY_ANALYSIS : locks_(locks) {
      if (a > b) std::swap(a, b);  // kNoStripe sorts last
      if (a == b) b = kNoStripe;
      assert(a == kNoStripe || a < locks->count_);
      assert(b == kNoStripe || b < locks->count_);
      first_ = a;
      second_ = b;
      if (first_ != kNoStripe) locks_->stripes_[first_].mu.Lock();
      if (second_ != kNoStripe) locks_->stripes_[second_].mu.Lock();
    }
    ~PairGuard() TALLY_NO_THREAD_SAFETY_ANALYSIS {
      if (second_ != kNoStripe) locks_->stripes_[second_].mu.Unlock();
      if (first_ != kNoStripe) locks_->stripes_[first_].mu.Unlock();
    }
    PairGuard(const PairGuard&) = delete;
    PairGuard& operator=(const PairGuard&) = delete;

   private:
    EventLocks* const locks_;
    uint32_t first_;
    uint32_t second_;
  };

  // Holds a set of stripes, taken in ascending order. `stripes` is sorted
  // and deduplicated in place.
  class MultiGuard {
   public:
    MultiGuard(EventLocks* locks,
               std::vector<uint32_t>* stripes) TALLY_NO_THREAD_SAFETY_ANALYSIS
        : locks_(locks),
          stripes_(stripes) {
      std::sort(stripes_->begin(), stripes_->end());
      stripes_->erase(std::unique(stripes_->begin(), stripes_->end()),
                      stripes_->end());
      // Ascending and distinct: the order that rules out deadlock.
      assert(stripes_->empty() || stripes_->back() < locks_->count_);
      for (uint32_t s : *stripes_) locks_->stripes_[s].mu.Lock();
    }
    ~MultiGuard() TALLY_NO_THREAD_SAFETY_ANALYSIS {
      for (auto it = stripes_->rbegin(); it != stripes_->rend(); ++it) {
        locks_->stripes_[*it].mu.Unlock();
      }
    }
    MultiGuard(const MultiGuard&) = delete;
    MultiGuard& operator=(const MultiGuard&) = delete;

   private:
    EventLocks* locks_;
    std::vector<uint32_t>* stripes_;
  };

 private:
  struct alignas(64) Stripe {
    Mutex mu;
  };
  const uint32_t count_;
  std::unique_ptr<Stripe[]> stripes_;
};

}  // namespace tally::engine

#endif  // TALLY_ENGINE_EVENT_LOCKS_H_
