// What the crash writer and its checker agree on: the counters, the number
// of writer threads and the largest plain delta one call can carry.

#ifndef TALLY_TESTS_CRASH_WORKLOAD_H_
#define TALLY_TESTS_CRASH_WORKLOAD_H_

#include <cstdint>

namespace tally::crash {

inline constexpr int kThreads = 4;
inline const char* const kOnceCounters[] = {"orders", "revenue", "hot"};
inline constexpr uint32_t kOnceShards[] = {10, 7, 1};
inline const char* const kPlainCounter = "views";
// A batch of 10 plain increments of at most 3 each.
inline constexpr int64_t kMaxPlainPerCall = 30;

}  // namespace tally::crash

#endif  // TALLY_TESTS_CRASH_WORKLOAD_H_
