// What the crash writer and its checker agree on: the counters, the number
// of writer threads, the largest plain delta one call can carry and the
// keyed counters' key spaces.

#ifndef TALLY_TESTS_CRASH_WORKLOAD_H_
#define TALLY_TESTS_CRASH_WORKLOAD_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "tally/batch.h"

namespace tally::crash {

inline constexpr int kThreads = 4;
inline const char* const kOnceCounters[] = {"orders", "revenue", "hot"};
inline constexpr uint32_t kOnceShards[] = {10, 7, 1};
inline const char* const kPlainCounter = "views";
// A batch of 10 plain increments of at most 3 each.
inline constexpr int64_t kMaxPlainPerCall = 30;

// Keyed counters (issue 15). "likes" only ever gets once-increments (a
// post's likes, the event id names the user), so each key's value must
// equal its markers' delta sum; "pageviews" only gets plain ones.
inline const char* const kKeyedOnceCounter = "likes";
inline constexpr uint32_t kKeyedOnceShards = 4;
inline constexpr int kLikeKeys = 5000;  // "post-0" .. "post-4999", Zipf-ish
inline constexpr int kLikeUsers = 64;   // few: hot posts see redeliveries
inline const char* const kKeyedPlainCounter = "pageviews";
inline constexpr uint32_t kKeyedPlainShards = 3;
inline constexpr int kPageKeys = 2000;  // "page-0" .. "page-1999", in turn
// The largest delta of one single keyed plain increment. The plain parts of
// a batch need no slack: every batch that carries them also carries
// once-increments under a fresh event id, and its intent line lets the
// checker tell whether it was applied (all of it) or not (none of it).
inline constexpr int64_t kMaxKeyedPlainPerCall = 5;

// The strict counter (issue 16): stock per item, min 0, only ever changed
// by once-increments (takes of 1, restocks of 1..3), so each key's value
// must equal its markers' delta sum (a refused take's marker counts 0) and
// never be below 0.
inline const char* const kStrictCounter = "stock";
inline constexpr int kStockKeys = 8;  // "sku-0" .. "sku-7": often empty

// Reservations (issue 16): "seats", a keyed strict counter (min 0) only
// ever filled by once-increments (1..3) and taken by committed
// reservations of 1 unit: each key's value must equal its fills' marker
// sum less its committed reservations, never below 0, and no reservation
// may hold past kSeatHoldMs after it was made, crash or not.
inline const char* const kSeatCounter = "seats";
inline constexpr int kSeatKeys = 4;  // "seat-0" .. "seat-3": often full
inline constexpr int64_t kSeatHoldMs = 300;

// Resets (issue 28, item 13): "gauge", a keyed counter of once-increments,
// plain increments and resets (to 0..kGaugeMaxReset), each of its keys
// ("g<thread>-<k>") written by one writer thread only, so that a key's value
// follows from the ack log: a reset's effect whole or absent, and what was
// acknowledged after it on top of it.
inline const char* const kGaugeCounter = "gauge";
inline constexpr uint32_t kGaugeShards = 2;
inline constexpr int kGaugeKeysPerThread = 3;
inline constexpr int64_t kGaugeMaxReset = 40;

// Claims (issue 28, item 13): keys "job-N", a window of kJobWindow keys per
// writer run that the next run's window overlaps by half (its dead holders'
// leases, its completed claims), claimed for kJobLeaseMs of the real clock
// and completed with JobCount: the once-increment of "jobs" under the claim
// key, in the completion's write, so every completed claim is counted once.
inline const char* const kJobCounter = "jobs";
inline constexpr int kJobWindow = 64;
inline constexpr int64_t kJobLeaseMs = 200;
inline tally::Batch JobCount(std::string_view claim_key) {
  tally::Batch b;
  b.AddOnce(kJobCounter, claim_key, 1);
  return b;
}

}  // namespace tally::crash

#endif  // TALLY_TESTS_CRASH_WORKLOAD_H_
