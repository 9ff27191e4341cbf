// AsyncCommits: counts IncrementAsync commits not yet written, so that
// DeleteCounter can wait until none is before it range-deletes a counter's
// keys (an async merge landing after the range deletion would leave a key
// of a deleted counter behind) or frees a catalog entry a commit's
// `written` hook still reads. End() runs in that hook, right after the
// group's write, never after a user callback: a callback that waits for the
// catalog can therefore never stall a waiting DeleteCounter.
//
// Ownership: owned by DbImpl. Thread safety: all methods are safe to call
// concurrently.

#ifndef TALLY_ENGINE_ASYNC_COMMITS_H_
#define TALLY_ENGINE_ASYNC_COMMITS_H_

#include <cassert>
#include <cstdint>

#include "util/mutex.h"

namespace tally::engine {

class AsyncCommits {
 public:
  void Begin() TALLY_EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    ++in_flight_;
    assert(in_flight_ > 0);
  }
  void End() TALLY_EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    assert(in_flight_ > 0);  // every End has its Begin
    if (--in_flight_ == 0) idle_.NotifyAll();
  }
  // Returns once no counted async commit is unwritten. The caller must keep
  // new ones from being counted (DeleteCounter holds the catalog
  // exclusively; IncrementAsync counts under a shared hold).
  void WaitIdle() TALLY_EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    while (in_flight_ != 0) idle_.Wait(&mu_);
  }

 private:
  Mutex mu_;
  CondVar idle_;
  uint64_t in_flight_ TALLY_GUARDED_BY(mu_) = 0;
};

}  // namespace tally::engine

#endif  // TALLY_ENGINE_ASYNC_COMMITS_H_
