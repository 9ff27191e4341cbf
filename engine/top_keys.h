// The top list of a keyed counter: the keys with the largest values, kept
// while a scan offers every key (TopKeeper), and its stored form in the
// rollups family at u64be(id) + 0x01 (docs/format.md, "rollups"):
//
//   sequence u64le || as_of_ms i64le || key_count u64le || total i64le ||
//   n u32le || n x (value i64le || key_len u8 || key bytes)
//
// entries largest value first, ties in key byte order; n <= kMaxTopKeys,
// key_len 1..kMaxKeyBytes.
//
// Thread safety: plain values and pure functions.

#ifndef TALLY_ENGINE_TOP_KEYS_H_
#define TALLY_ENGINE_TOP_KEYS_H_

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "tally/types.h"

namespace tally::engine {

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

// The stored top list (with TopKeysResult's sequence, as_of_ms, key_count,
// total, keys and, when there are any, the out-of-range keys' count and
// first key). Replaces *out.
void EncodeTopList(const TopKeysResult& top, std::string* out);
// False when `bytes` is not a well-formed top list.
bool DecodeTopList(std::string_view bytes, TopKeysResult* top);

}  // namespace tally::engine

#endif  // TALLY_ENGINE_TOP_KEYS_H_
