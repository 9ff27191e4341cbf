// Wakeup: a one-shot handoff from one thread to one waiting thread, built on
// a POSIX semaphore: Post is one atomic add and at most one futex wake;
// Wait returns without taking any lock after it is woken.
//
// Why not a mutex and a condition variable (what GroupCommit's writers used
// first): the poster must notify while holding the mutex, because the
// waiter may return and destroy both as soon as it sees the flag. The woken
// waiter then blocks on that mutex until the poster releases it: two more
// futex calls and a context switch per wake-up, which the profile of 64
// durable producers on 2 cores showed (docs/durability.md, "Measured").
// glibc's semaphore (since 2.21) may be destroyed as soon as sem_wait
// returns, even while the matching sem_post is still returning.
//
// Ownership: owns the semaphore. Thread safety: one Post and one Wait, from
// any two threads; the object may be destroyed once Wait returned.

#ifndef TALLY_UTIL_WAKEUP_H_
#define TALLY_UTIL_WAKEUP_H_

#include <semaphore.h>

#include <cassert>
#include <cerrno>

namespace tally {

class Wakeup {
 public:
  Wakeup() {
    const int rc = sem_init(&sem_, /*pshared=*/0, /*value=*/0);
    assert(rc == 0);  // only EINVAL (value too large) or ENOSYS
    (void)rc;
  }
  ~Wakeup() { sem_destroy(&sem_); }
  Wakeup(const Wakeup&) = delete;
  Wakeup& operator=(const Wakeup&) = delete;

  // Wakes the waiter (or lets its Wait return at once). What the poster
  // wrote before Post happens-before what the waiter reads after Wait.
  void Post() {
    const int rc = sem_post(&sem_);
    assert(rc == 0);  // EOVERFLOW cannot happen: one Post per Wait
    (void)rc;
  }
  void Wait() {
    while (sem_wait(&sem_) != 0) {
      assert(errno == EINTR);  // a signal handler ran: wait again
    }
  }

 private:
  sem_t sem_;
};

}  // namespace tally

#endif  // TALLY_UTIL_WAKEUP_H_
