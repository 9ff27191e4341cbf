// A reader-writer lock that prefers writers, with RAII guards.
//
// The catalog is read-locked by every increment for the length of its commit
// and write-locked by the rare create/delete; with glibc's default
// (reader-preferring) rwlock a steady stream of increments could starve a
// delete forever.
//
// Ownership: owns the pthread lock. Thread safety: it is the synchronization.

#ifndef TALLY_ENGINE_RW_LOCK_H_
#define TALLY_ENGINE_RW_LOCK_H_

#include <pthread.h>

#include <cassert>

namespace tally::engine {

class RwLock {
 public:
  RwLock() {
    pthread_rwlockattr_t attr;
    pthread_rwlockattr_init(&attr);
    pthread_rwlockattr_setkind_np(
        &attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    [[maybe_unused]] int rc = pthread_rwlock_init(&lock_, &attr);
    assert(rc == 0);
    pthread_rwlockattr_destroy(&attr);
  }
  ~RwLock() { pthread_rwlock_destroy(&lock_); }
  RwLock(const RwLock&) = delete;
  RwLock& operator=(const RwLock&) = delete;

  void LockShared() {
    [[maybe_unused]] int rc = pthread_rwlock_rdlock(&lock_);
    assert(rc == 0);
  }
  void Lock() {
    [[maybe_unused]] int rc = pthread_rwlock_wrlock(&lock_);
    assert(rc == 0);
  }
  // Whether a writer holds the lock or waits for it, so that a new reader
  // would wait (the lock prefers writers). For tests that must know a
  // writer is queued.
  bool WriterPending() {
    const int rc = pthread_rwlock_tryrdlock(&lock_);
    if (rc != 0) return true;  // EBUSY: a writer holds it or is queued
    Unlock();
    return false;
  }
  void Unlock() {
    [[maybe_unused]] int rc = pthread_rwlock_unlock(&lock_);
    assert(rc == 0);
  }

 private:
  pthread_rwlock_t lock_;
};

class SharedGuard {
 public:
  explicit SharedGuard(RwLock* l) : l_(l) { l_->LockShared(); }
  ~SharedGuard() { l_->Unlock(); }
  SharedGuard(const SharedGuard&) = delete;
  SharedGuard& operator=(const SharedGuard&) = delete;

 private:
  RwLock* l_;
};

class ExclusiveGuard {
 public:
  explicit ExclusiveGuard(RwLock* l) : l_(l) { l_->Lock(); }
  ~ExclusiveGuard() { l_->Unlock(); }
  ExclusiveGuard(const ExclusiveGuard&) = delete;
  ExclusiveGuard& operator=(const ExclusiveGuard&) = delete;

 private:
  RwLock* l_;
};

}  // namespace tally::engine

#endif  // TALLY_ENGINE_RW_LOCK_H_
