// Deadline arithmetic of the rules that run out (a reservation's hold, a
// claim's lease).
//
// Thread safety: pure functions.

#ifndef TALLY_CORE_DEADLINE_H_
#define TALLY_CORE_DEADLINE_H_

#include <cstdint>

namespace tally::core {

// `now` plus a duration (a hold's, a lease's), saturating at INT64_MAX:
// deadline arithmetic never overflows, whatever the inputs.
inline int64_t DeadlineAfter(int64_t now, int64_t duration_ms) {
  int64_t out = 0;
  if (__builtin_add_overflow(now, duration_ms, &out)) {
    return duration_ms > 0 ? INT64_MAX : INT64_MIN;
  }
  return out;
}

}  // namespace tally::core

#endif  // TALLY_CORE_DEADLINE_H_
