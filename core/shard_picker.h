// Shard choice. Stored decisions (once-increments, affinity keys) use
// StableHash (core/hash.h); the random policy uses a per-thread xorshift
// generator, which is never stored, so it need not be stable.

#ifndef TALLY_CORE_SHARD_PICKER_H_
#define TALLY_CORE_SHARD_PICKER_H_

#include <cstdint>
#include <string_view>

#include "core/hash.h"

namespace tally::core {

// The shard of a hashed key: hash % shard_count (docs/format.md).
inline uint32_t ShardOfHash(uint64_t hash, uint32_t shard_count) {
  return static_cast<uint32_t>(hash % shard_count);
}

inline uint32_t ShardOfKey(std::string_view key, uint32_t shard_count) {
  return ShardOfHash(StableHash(key), shard_count);
}

// A uniformly random shard in [0, shard_count).
uint32_t RandomShard(uint32_t shard_count);

}  // namespace tally::core

#endif  // TALLY_CORE_SHARD_PICKER_H_
