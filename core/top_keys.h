// The top list of a keyed counter (Db::TopKeys and its roll-up): the keys
// with the largest values, largest first and ties in key byte order, kept
// while a scan offers every key; and what a cached read answers when the
// scan left keys out of the total.
//
// Thread safety: TopKeeper is a plain value (one scan, one thread); the
// functions are pure.

#ifndef TALLY_CORE_TOP_KEYS_H_
#define TALLY_CORE_TOP_KEYS_H_

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "tally/status.h"
#include "tally/types.h"

namespace tally::core {

// Keeps the `keep` largest of the keys offered: a min-heap, so a scan of
// N keys costs O(N log keep) compares and `keep` entries of memory.
class TopKeeper {
 public:
  explicit TopKeeper(size_t keep) : keep_(keep) { assert(keep >= 1); }
  void Offer(std::string_view key, int64_t value) {
    if (heap_.size() == keep_) {
      const KeyValue& least = heap_.front();
      if (!Before(value, key, least.value, least.key)) return;
      std::pop_heap(heap_.begin(), heap_.end(), Order);
      heap_.back() = KeyValue{std::string(key), value};
    } else {
      heap_.push_back(KeyValue{std::string(key), value});
    }
    std::push_heap(heap_.begin(), heap_.end(), Order);
  }
  // The kept keys, largest first (ties in key order); empties the keeper.
  std::vector<KeyValue> Take() {
    std::sort_heap(heap_.begin(), heap_.end(), Order);
    return std::move(heap_);
  }

 private:
  // a ranks before b: larger value, or equal value and smaller key.
  static bool Before(int64_t av, std::string_view ak, int64_t bv,
                     std::string_view bk) {
    return av != bv ? av > bv : ak < bk;
  }
  // The heap's order: its front is the entry ranked last.
  static bool Order(const KeyValue& a, const KeyValue& b) {
    return Before(a.value, a.key, b.value, b.key);
  }
  size_t keep_;
  std::vector<KeyValue> heap_;
};

// InvalidArgument unless 1 <= n <= kMaxTopKeys (Db::TopKeys' n).
Status ValidateTopKeys(size_t n);

// ReadCached of keyed counter `c` whose roll-up `top` left keys out of its
// total (values beyond int64): OutOfRange naming the first.
Status OutOfRangeKeys(const CounterInfo& c, const TopKeysResult& top);

// What a read-only database answers for a counter never rolled up.
Status NoRollupYet(const CounterInfo& c);

}  // namespace tally::core

#endif  // TALLY_CORE_TOP_KEYS_H_
