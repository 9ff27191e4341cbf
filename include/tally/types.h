// Value types exchanged through the public API: counter specs and
// descriptions, and the outcome of an increment.
//
// All are plain values: the caller owns them; distinct objects may be used
// from different threads.

#ifndef TALLY_TYPES_H_
#define TALLY_TYPES_H_

#include <cstdint>
#include <string>

namespace tally {

// How a plain (not once) increment chooses its shard. A once-increment
// always goes to the shard given by the hash of its event id, so a retry
// lands where the first delivery did.
enum class ShardPolicy : uint8_t {
  // A random shard, unless the increment carries an affinity key, which is
  // then hashed to a shard.
  kRandom = 0,
  // Every plain increment must carry an affinity key (device, thread, user);
  // the key's hash picks the shard, so each key's share stays attributable.
  kAffinity = 1,
};

const char* ShardPolicyName(ShardPolicy policy);

// What CreateCounter needs.
struct CounterSpec {
  uint32_t shards = 1;  // 1..kMaxShards
  ShardPolicy policy = ShardPolicy::kRandom;
};

// What DescribeCounter and ListCounters return.
struct CounterInfo {
  std::string name;
  uint64_t id = 0;  // never reused, also after a delete
  uint32_t shards = 0;
  ShardPolicy policy = ShardPolicy::kRandom;
  uint32_t schema_version = 0;
  int64_t created_at_ms = 0;  // Unix epoch, UTC, from Options::clock
  uint32_t flags = 0;         // reserved, 0
};

// The outcome of one increment.
enum class Outcome : uint8_t {
  kApplied = 0,    // counted now
  kDuplicate = 1,  // this event id was counted before with the same delta
  kConflict = 2,   // this event id was counted before with another delta;
                   // nothing changed
};

const char* OutcomeName(Outcome outcome);

struct IncrementResult {
  Outcome outcome = Outcome::kApplied;
  uint32_t shard = 0;  // the shard the increment went (or had gone) to
};

// Engine-wide figures since Open, for monitoring.
struct EngineStats {
  uint64_t applied = 0;     // increments that changed a counter
  uint64_t duplicates = 0;  // once-increments found already counted
  uint64_t conflicts = 0;   // once-increments refused for a delta mismatch
  uint64_t rejected = 0;    // calls refused with InvalidArgument/NotFound
};

}  // namespace tally

#endif  // TALLY_TYPES_H_
