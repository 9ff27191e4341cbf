// Time buckets of bucketed counters (docs/design.md, "Time buckets"): the
// bucket an event time falls in, and when a bucket is past its counter's
// retention. UTC: ms since the Unix epoch have no leap seconds, so a day
// bucket starts at UTC midnight.
//
// Thread safety: pure functions.

#ifndef TALLY_CORE_BUCKETS_H_
#define TALLY_CORE_BUCKETS_H_

#include <cstdint>

#include "tally/types.h"

namespace tally::core {

// BucketWidthMs (a bucket's length) is public: tally/types.h.

// "No bucket": an increment of, or a shard key of, a counter without
// buckets (bucket starts are never negative).
inline constexpr int64_t kNoBucket = -1;

// The start of the bucket holding `t_ms` (>= 0) for a bucket of `width_ms`.
inline int64_t BucketStart(int64_t t_ms, int64_t width_ms) {
  return t_ms - t_ms % width_ms;
}

// True when the bucket starting at `start_ms` ended more than `retention_ms`
// (0: forever) before `now_ms`. Reads skip such buckets, writes into them
// are refused, and compaction drops them.
inline bool BucketExpired(int64_t start_ms, int64_t width_ms,
                          int64_t retention_ms, int64_t now_ms) {
  return retention_ms != 0 && start_ms + width_ms + retention_ms < now_ms;
}

// The start of the first bucket not past retention at `now_ms`: a read
// may seek there, stepping over nothing compaction has yet to drop. 0 when
// the counter keeps everything.
inline int64_t FirstRetainedBucket(int64_t width_ms, int64_t retention_ms,
                                   int64_t now_ms) {
  if (retention_ms == 0) return 0;
  // BucketExpired is start < lowest; the first start >= lowest, rounded up.
  const int64_t lowest = now_ms - retention_ms - width_ms;
  if (lowest <= 0) return 0;
  return BucketStart(lowest + width_ms - 1, width_ms);
}

}  // namespace tally::core

#endif  // TALLY_CORE_BUCKETS_H_
