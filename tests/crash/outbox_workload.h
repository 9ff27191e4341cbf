// What the outbox power-cut writer and its checker agree on.

#ifndef TALLY_TESTS_CRASH_OUTBOX_WORKLOAD_H_
#define TALLY_TESTS_CRASH_OUTBOX_WORKLOAD_H_

#include <cstdint>

namespace tally::crash {

inline constexpr char kOutboxCounter[] = "orders";
inline constexpr uint32_t kEdgeShards = 4;
inline constexpr uint32_t kHubShards = 8;
inline constexpr int kOutboxThreads = 2;  // incrementing threads
// The largest delta one incrementing call can carry (a batch of 5 plain
// increments of at most 3 and 2 once-increments of at most 9).
inline constexpr int64_t kMaxOutboxPerCall = 5 * 3 + 2 * 9;

}  // namespace tally::crash

#endif  // TALLY_TESTS_CRASH_OUTBOX_WORKLOAD_H_
