// The stable hash of stored decisions: FNV-1a 64 (offset basis
// 0xcbf29ce484222325, prime 0x100000001b3) over the raw bytes, then the
// MurmurHash3 fmix64 finalizer. A once-increment's shard is
// StableHash(event_id) % shard_count, so a retry after a restart, an upgrade
// or on another machine lands on the same shard. Never replace it with
// std::hash, which is not stable across builds. Specified in
// docs/format.md; tests pin known values.
//
// Why the finalizer: FNV-1a's last step is (h ^ byte) * odd_prime, so ids
// that differ only in the low bit of their last byte ("ord-0", "ord-1")
// differ by a fixed amount and pair up on adjacent shards; fmix64 spreads
// every input bit over the whole word.

#ifndef TALLY_CORE_HASH_H_
#define TALLY_CORE_HASH_H_

#include <cstdint>
#include <string_view>

namespace tally::core {

inline constexpr uint64_t kFnvOffsetBasis = 0xcbf29ce484222325ULL;
inline constexpr uint64_t kFnvPrime = 0x100000001b3ULL;

constexpr uint64_t Fnv1a64(std::string_view bytes) {
  uint64_t h = kFnvOffsetBasis;
  for (char c : bytes) {
    h ^= static_cast<uint8_t>(c);
    h *= kFnvPrime;
  }
  return h;
}

// MurmurHash3's 64-bit finalizer (a bijection with full avalanche).
constexpr uint64_t Fmix64(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ULL;
  k ^= k >> 33;
  return k;
}

// The hash every stored shard decision uses.
constexpr uint64_t StableHash(std::string_view bytes) {
  return Fmix64(Fnv1a64(bytes));
}

static_assert(Fnv1a64("") == kFnvOffsetBasis, "FNV-1a of nothing");
static_assert(Fnv1a64("a") == 0xaf63dc4c8601ec8cULL, "FNV-1a 64 test vector");

}  // namespace tally::core

#endif  // TALLY_CORE_HASH_H_
