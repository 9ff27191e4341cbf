// KeyHead: a key's first bytes as a big-endian integer, for sorting keys in
// bytewise order (RocksDB's) with integer compares first. Sorting a batch's
// keys (engine/apply.cc) spent most of its time in memcmp calls through
// indices; comparing two heads first leaves memcmp for keys whose first 16
// bytes are equal.
//
// Why it keeps bytewise order: heads are zero-padded. If two keys' padded
// heads differ, they differ at a byte where both have a real byte (and
// compare as those bytes do), or where one key has ended (its padding, 0,
// is below the other's byte, and the ended key is a prefix of the other,
// so it sorts first in bytewise order too). Equal heads say nothing: the
// caller then compares the whole keys.

#ifndef TALLY_UTIL_KEY_HEAD_H_
#define TALLY_UTIL_KEY_HEAD_H_

#include <cstdint>
#include <string_view>

namespace tally {

// Bytes [from, from + 8) of `key` as a big-endian integer, missing bytes 0.
inline uint64_t KeyHead(std::string_view key, size_t from = 0) {
  uint64_t h = 0;
  for (size_t i = 0; i < 8; ++i) {
    const size_t at = from + i;
    const uint64_t byte =
        at < key.size() ? static_cast<unsigned char>(key[at]) : 0;
    h = (h << 8) | byte;
  }
  return h;
}

// A key's two heads (bytes 0..15), ordered as the keys are when they
// differ.
struct KeyHeads {
  uint64_t first = 0;
  uint64_t second = 0;

  static KeyHeads Of(std::string_view key) {
    return {KeyHead(key, 0), KeyHead(key, 8)};
  }
  bool operator==(const KeyHeads& o) const {
    return first == o.first && second == o.second;
  }
  bool operator<(const KeyHeads& o) const {
    return first != o.first ? first < o.first : second < o.second;
  }
};

}  // namespace tally

#endif  // TALLY_UTIL_KEY_HEAD_H_
