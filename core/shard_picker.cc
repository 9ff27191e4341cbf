#include "core/shard_picker.h"

#include <random>

namespace tally::core {
namespace {

uint64_t SeedForThread() {
  std::random_device rd;
  uint64_t seed = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  return seed == 0 ? 0x9e3779b97f4a7c15ULL : seed;
}

}  // namespace

uint32_t RandomShard(uint32_t shard_count) {
  if (shard_count == 1) return 0;
  thread_local uint64_t state = SeedForThread();
  // xorshift64*: a few instructions, no lock, good enough to spread writes.
  state ^= state >> 12;
  state ^= state << 25;
  state ^= state >> 27;
  const uint64_t r = state * 0x2545f4914f6cdd1dULL;
  // Lemire's multiply-shift maps r onto [0, shard_count) without a division.
  return static_cast<uint32_t>(
      (static_cast<unsigned __int128>(r) * shard_count) >> 64);
}

}  // namespace tally::core
