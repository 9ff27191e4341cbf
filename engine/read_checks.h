// The checks every read of shard values makes, with their messages: one
// place for the read path (engine/read_path.cc) and the keyed reads
// (engine/keyed_reads.cc).

#ifndef TALLY_ENGINE_READ_CHECKS_H_
#define TALLY_ENGINE_READ_CHECKS_H_

#include <cstdint>
#include <string_view>

#include "engine/coding.h"
#include "tally/status.h"
#include "tally/types.h"

namespace tally::engine {

// A stored shard value, decoded and checked: Corruption naming the key when
// malformed, OutOfRange when the shard is in the sticky overflowed state.
Status CheckShardValue(const CounterInfo& c, std::string_view key,
                       std::string_view value, uint32_t shard, ShardSum* v);
// `sum` as an int64; OutOfRange naming the counter beyond.
Status NarrowSum(const CounterInfo& c, const ExactSum& sum, int64_t* out);

}  // namespace tally::engine

#endif  // TALLY_ENGINE_READ_CHECKS_H_
