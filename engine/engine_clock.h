// EngineClock: the engine's time, Options::clock made monotone by a
// high-water mark (docs/design.md, "Time: a clock that never steps back").
//
// Options::clock may step backwards (NTP correcting a box that ran ahead).
// Everything in tally that reads "now" reads it here instead: the write
// path (dedupe windows, buckets, marker times), reads with expiry or
// retention, roll-up and outbox ages, counter creation times. Now() is the
// largest time this process has seen, from the clock or from the mark
// persisted in meta (docs/format.md, "time mark"), so it never decreases.
//
// Irreversible decisions (compaction filters dropping expired markers and
// buckets) use Durable() instead: the last mark known to be synced to disk.
// Durable() <= Now() always, also in a later process after a crash, since
// the mark is loaded at open. So whatever a filter dropped at time F was
// judged with F <= every later Now(): after any backward step of the clock
// the engine still treats that marker or bucket as expired.
//
// A base clock reading outside the event-time range (kMinEventTimeMs..
// kMaxEventTimeMs: 1970 to the end of 9999) is refused: Db::Open fails with
// InvalidArgument naming it, and a later one is not used (the engine's time
// stays at its last good reading, as after a step back), so every time the
// engine computes with stays far inside int64 and no deadline overflows.
//
// Ownership: does not own the base clock, which must outlive it; shared by
// DbImpl and the compaction filter factories (shared_ptr). Thread safety:
// all methods may be called concurrently.

#ifndef TALLY_ENGINE_ENGINE_CLOCK_H_
#define TALLY_ENGINE_ENGINE_CLOCK_H_

#include <atomic>
#include <cstdint>

#include "tally/limits.h"
#include "tally/options.h"

namespace tally::engine {

class EngineClock final : public Clock {
 public:
  explicit EngineClock(const Clock* base) : base_(base) {}
  EngineClock(const EngineClock&) = delete;
  EngineClock& operator=(const EngineClock&) = delete;

  // max(base clock, every earlier reading, every mark observed). Cost: the
  // base clock's read and one atomic load; a compare-and-swap only when the
  // base clock moved past the highest reading (at most once per clock tick
  // across all threads).
  int64_t NowMillis() const override {
    const int64_t t = base_->NowMillis();
    if (!InEventTimeRange(t)) return high_.load(std::memory_order_acquire);
    int64_t high = high_.load(std::memory_order_acquire);
    while (t > high) {
      if (high_.compare_exchange_weak(high, t, std::memory_order_acq_rel,
                                      std::memory_order_acquire)) {
        return t;
      }
    }
    return high;
  }

  // Whether a clock reading or a stored mark is a time the engine computes
  // with.
  static bool InEventTimeRange(int64_t t) {
    return t >= kMinEventTimeMs && t <= kMaxEventTimeMs;
  }

  // The base clock's reading now, unchecked (Db::Open refuses one outside
  // the range).
  int64_t BaseReading() const { return base_->NowMillis(); }

  // The last mark recorded durable (0: none yet). Never above NowMillis():
  // SetDurable raises the in-memory time first (release), and a reader of
  // Durable() (acquire) then sees that raise.
  int64_t Durable() const { return durable_.load(std::memory_order_acquire); }

  // Raises the in-memory time to at least `mark_ms` (a mark read from meta).
  void Observe(int64_t mark_ms) { RaiseTo(&high_, mark_ms); }

  // Records that `mark_ms` is on disk (after its synced write, or read back
  // from meta at open); also observes it. A smaller mark changes nothing.
  void SetDurable(int64_t mark_ms) {
    Observe(mark_ms);
    RaiseTo(&durable_, mark_ms);
  }

 private:
  static void RaiseTo(std::atomic<int64_t>* a, int64_t v) {
    int64_t cur = a->load(std::memory_order_acquire);
    while (v > cur &&
           !a->compare_exchange_weak(cur, v, std::memory_order_acq_rel,
                                     std::memory_order_acquire)) {
    }
  }

  const Clock* const base_;
  mutable std::atomic<int64_t> high_{0};
  std::atomic<int64_t> durable_{0};
};

}  // namespace tally::engine

#endif  // TALLY_ENGINE_ENGINE_CLOCK_H_
