// Batch: many increments, plain and once, committed in one atomic write.
//
// Ownership: the caller owns a Batch and its copies of names and ids.
// Thread safety: a Batch is not synchronized; build it on one thread, then
// pass it to Db::Apply (which only reads it).
//
// Atomicity: Db::Apply commits every applied operation of a batch in one
// RocksDB WriteBatch (one WAL record), so they survive a crash together or
// not at all. One event may count in several counters at once: add one
// AddOnce per counter with the same event id (for example an order's count
// and its amount); each counter keeps its own marker.

#ifndef TALLY_BATCH_H_
#define TALLY_BATCH_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tally/options.h"
#include "tally/types.h"

namespace tally {

class Batch {
 public:
  struct Op {
    std::string counter;
    std::string key;           // a keyed counter's key; else empty
    std::string event_id;      // empty for a plain increment
    std::string affinity_key;  // may be empty (see IncrementOptions)
    int64_t delta = 0;
    bool once = false;
    int64_t event_time_ms = kEventTimeNow;  // see IncrementOptions, OnceOptions
    bool saturate = false;                  // see IncrementOptions, OnceOptions
  };

  // A plain increment, with the options Db::Increment takes.
  void Add(CounterRef counter, int64_t delta,
           const IncrementOptions& options = {}) {
    ops_.push_back(Op{std::string(counter.counter), std::string(counter.key),
                      std::string(), std::string(options.affinity_key), delta,
                      false, options.event_time_ms, options.saturate});
  }
  // A once-increment, with the options Db::IncrementOnce takes: counted at
  // most once per (counter, event_id).
  // A batch may touch many keys of many counters.
  void AddOnce(CounterRef counter, std::string_view event_id, int64_t delta,
               const OnceOptions& options = {}) {
    ops_.push_back(Op{std::string(counter.counter), std::string(counter.key),
                      std::string(event_id), std::string(options.affinity_key),
                      delta, true, options.event_time_ms, options.saturate});
  }

  size_t size() const { return ops_.size(); }
  bool empty() const { return ops_.empty(); }
  void Clear() { ops_.clear(); }
  const std::vector<Op>& ops() const { return ops_; }

 private:
  std::vector<Op> ops_;
};

}  // namespace tally

#endif  // TALLY_BATCH_H_
