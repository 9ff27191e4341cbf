// Locks the thread-safety analysis can check (util/thread_annotations.h):
// Mutex and its scoped MutexLock; CondVar, which waits on a Mutex; and
// RwLock, a reader-writer lock that prefers writers, with ReaderLock and
// WriterLock. Every lock in tally is one of these, so clang's
// -Wthread-safety (on for clang builds, CMakeLists.txt) checks every field
// marked TALLY_GUARDED_BY and every function marked TALLY_REQUIRES.
//
// Why RwLock prefers writers: the catalog is read-locked by every increment
// for the length of its commit and write-locked by the rare create/delete;
// with glibc's default (reader-preferring) rwlock a steady stream of
// increments could starve a delete forever.
//
// Ownership: each lock owns its native lock; the scoped holders hold a
// pointer to a lock that outlives them. Thread safety: they are the
// synchronization.

#ifndef TALLY_UTIL_MUTEX_H_
#define TALLY_UTIL_MUTEX_H_

#include <pthread.h>

#include <cassert>
#include <chrono>
#include <condition_variable>
#include <mutex>

#include "util/thread_annotations.h"

namespace tally {

class CondVar;

class TALLY_CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() TALLY_ACQUIRE() { mu_.lock(); }
  void Unlock() TALLY_RELEASE() { mu_.unlock(); }

 private:
  friend class CondVar;
  std::mutex mu_;
};

// Holds a Mutex for its scope.
class TALLY_SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex* mu) TALLY_ACQUIRE(mu) : mu_(mu) { mu_->Lock(); }
  ~MutexLock() TALLY_RELEASE() { mu_->Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex* const mu_;
};

// A condition variable waited on under a Mutex, which each wait requires
// held. Wait releases it while blocked and holds it again on return, which
// the analysis sees as "held throughout": callers re-check their condition
// in a loop, under the lock, as with any condition variable.
class CondVar {
 public:
  CondVar() = default;
  CondVar(const CondVar&) = delete;
  CondVar& operator=(const CondVar&) = delete;

  void Wait(Mutex* mu) TALLY_REQUIRES(mu) {
    std::unique_lock<std::mutex> native(mu->mu_, std::adopt_lock);
    cv_.wait(native);
    native.release();  // still held: the caller releases it
  }
  // Waits until `deadline` at the latest; false when it passed (the caller
  // re-checks its condition either way).
  template <typename Clock, typename Duration>
  bool WaitUntil(Mutex* mu, std::chrono::time_point<Clock, Duration> deadline)
      TALLY_REQUIRES(mu) {
    std::unique_lock<std::mutex> native(mu->mu_, std::adopt_lock);
    const bool woken =
        cv_.wait_until(native, deadline) == std::cv_status::no_timeout;
    native.release();
    return woken;
  }
  void NotifyOne() { cv_.notify_one(); }
  void NotifyAll() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

class TALLY_CAPABILITY("mutex") RwLock {
 public:
  RwLock() {
    pthread_rwlockattr_t attr;
    pthread_rwlockattr_init(&attr);
    pthread_rwlockattr_setkind_np(&attr,
                                  PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    [[maybe_unused]] int rc = pthread_rwlock_init(&lock_, &attr);
    assert(rc == 0);
    pthread_rwlockattr_destroy(&attr);
  }
  ~RwLock() { pthread_rwlock_destroy(&lock_); }
  RwLock(const RwLock&) = delete;
  RwLock& operator=(const RwLock&) = delete;

  void LockShared() TALLY_ACQUIRE_SHARED() {
    [[maybe_unused]] int rc = pthread_rwlock_rdlock(&lock_);
    assert(rc == 0);
  }
  void UnlockShared() TALLY_RELEASE_SHARED() { UnlockNative(); }
  void Lock() TALLY_ACQUIRE() {
    [[maybe_unused]] int rc = pthread_rwlock_wrlock(&lock_);
    assert(rc == 0);
  }
  void Unlock() TALLY_RELEASE() { UnlockNative(); }
  // Whether a writer holds the lock or waits for it, so that a new reader
  // would wait (the lock prefers writers). For tests that must know a
  // writer is queued. The caller must not hold the lock.
  bool WriterPending() TALLY_EXCLUDES(this) {
    if (!TryLockShared()) return true;  // EBUSY: a writer holds it or waits
    UnlockShared();
    return false;
  }

 private:
  bool TryLockShared() TALLY_TRY_ACQUIRE_SHARED(true) {
    return pthread_rwlock_tryrdlock(&lock_) == 0;
  }
  void UnlockNative() {
    [[maybe_unused]] int rc = pthread_rwlock_unlock(&lock_);
    assert(rc == 0);
  }

  pthread_rwlock_t lock_;
};

// Holds an RwLock shared for its scope (never taken recursively: a queued
// writer would deadlock a thread that read-locks twice).
class TALLY_SCOPED_CAPABILITY ReaderLock {
 public:
  explicit ReaderLock(RwLock* l) TALLY_ACQUIRE_SHARED(l) : l_(l) {
    l_->LockShared();
  }
  ~ReaderLock() TALLY_RELEASE() { l_->UnlockShared(); }
  ReaderLock(const ReaderLock&) = delete;
  ReaderLock& operator=(const ReaderLock&) = delete;

 private:
  RwLock* const l_;
};

// Holds an RwLock exclusively for its scope.
class TALLY_SCOPED_CAPABILITY WriterLock {
 public:
  explicit WriterLock(RwLock* l) TALLY_ACQUIRE(l) : l_(l) { l_->Lock(); }
  ~WriterLock() TALLY_RELEASE() { l_->Unlock(); }
  WriterLock(const WriterLock&) = delete;
  WriterLock& operator=(const WriterLock&) = delete;

 private:
  RwLock* const l_;
};

}  // namespace tally

#endif  // TALLY_UTIL_MUTEX_H_
