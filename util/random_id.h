// Random 128-bit ids as 32 lowercase hex characters: database ids (made at
// creation) and outbox origins (made at each read-write open). They are
// compared, never decoded; std::random_device is the kernel's generator on
// Linux, so two ids collide with probability about n^2 / 2^129.

#ifndef TALLY_UTIL_RANDOM_ID_H_
#define TALLY_UTIL_RANDOM_ID_H_

#include <random>
#include <string>
#include <string_view>

namespace tally {

inline constexpr size_t kRandomIdChars = 32;

inline std::string RandomHexId() {
  std::random_device rd;
  static const char kHex[] = "0123456789abcdef";
  std::string id;
  id.reserve(kRandomIdChars);
  while (id.size() < kRandomIdChars) {
    unsigned bits = rd();  // 32 random bits: 8 hex digits
    for (int i = 0; i < 8; ++i, bits >>= 4) id.push_back(kHex[bits & 0xf]);
  }
  return id;
}

// Whether `id` has RandomHexId's shape.
inline bool IsHexId(std::string_view id) {
  if (id.size() != kRandomIdChars) return false;
  for (char ch : id) {
    if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f'))) return false;
  }
  return true;
}

}  // namespace tally

#endif  // TALLY_UTIL_RANDOM_ID_H_
