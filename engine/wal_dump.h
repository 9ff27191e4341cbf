// The WAL dump's internals (tally/dump.h is its public face): the gap rule
// between two batches, exposed for its unit test.

#ifndef TALLY_ENGINE_WAL_DUMP_H_
#define TALLY_ENGINE_WAL_DUMP_H_

#include <cstdint>

namespace tally::engine {

// The gap between a batch (prev_seq, prev_count) and the next one, which
// starts at `next_seq`: false when they are contiguous (or overlap), else
// [*from, *to] are the sequence numbers missing.
bool FindWalGap(uint64_t prev_seq, uint32_t prev_count, uint64_t next_seq,
                uint64_t* from, uint64_t* to);

}  // namespace tally::engine

#endif  // TALLY_ENGINE_WAL_DUMP_H_
