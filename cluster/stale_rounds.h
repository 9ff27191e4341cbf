// A guarded write lost its race (TALLYSTALE: another client wrote a key it
// read; nothing of it was written): how often the backend reads and
// decides again, and how it keeps apart from the other writers meanwhile.
// Shared by the strict write path (tally_write's guards) and the records
// that tally_guarded writes (reservations).
//
// Thread safety: WaitBeforeRound uses a thread-local generator.

#ifndef TALLY_CLUSTER_STALE_ROUNDS_H_
#define TALLY_CLUSTER_STALE_ROUNDS_H_

#include <algorithm>
#include <chrono>
#include <random>
#include <thread>

namespace tally::cluster {

// Rounds of reading again before a call gives up (Busy): each costs a
// read and a write of the key; only other writers' writes between the two
// cause one.
inline constexpr int kMaxStaleRounds = 64;

// Before stale round `round` (1..): a random wait, longer each round, so
// that writers that raced do not meet again at once. Not a
// synchronisation: the guard decides; this only spreads the retries. (The
// generator is made only when a race was lost: seeding one costs more
// than a write.)
inline void WaitBeforeRound(int round) {
  thread_local std::minstd_rand jitter(std::random_device{}());
  std::uniform_int_distribution<int> us(0, 50 << std::min(round, 6));
  std::this_thread::sleep_for(std::chrono::microseconds(us(jitter)));
}

}  // namespace tally::cluster

#endif  // TALLY_CLUSTER_STALE_ROUNDS_H_
