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
#include <string>
#include <thread>

#include "tally/status.h"

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

// What a call answers after kMaxStaleRounds lost races: Busy, `subject`
// ("a strict counter's value", a record's name) and `then` (what the call
// left written, and that a retry is safe).
inline Status StaleBusy(const std::string& subject, const std::string& then) {
  return Status::Busy(subject + " changed between its read and its write " +
                      std::to_string(kMaxStaleRounds) +
                      " times in a row (other clients writing it); " + then);
}

}  // namespace tally::cluster

#endif  // TALLY_CLUSTER_STALE_ROUNDS_H_
