// Clang thread-safety annotations (-Wthread-safety): which lock guards a
// field, which locks a function needs held, which it takes or releases.
// Clang checks them at compile time; on other compilers they vanish.
// Use them through the annotated lock wrappers of util/mutex.h (libstdc++'s
// std::mutex carries no annotations).
//
// Where the analysis cannot follow the code (a condition variable's wait,
// a lock chosen at run time from a striped array), the one escape is
// TALLY_NO_THREAD_SAFETY_ANALYSIS on the smallest function that needs it,
// with a comment saying why.

#ifndef TALLY_UTIL_THREAD_ANNOTATIONS_H_
#define TALLY_UTIL_THREAD_ANNOTATIONS_H_

#if defined(__clang__)
#define TALLY_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define TALLY_THREAD_ANNOTATION(x)
#endif

// A type that is a lock ("mutex") or a scoped holder of one.
#define TALLY_CAPABILITY(x) TALLY_THREAD_ANNOTATION(capability(x))
#define TALLY_SCOPED_CAPABILITY TALLY_THREAD_ANNOTATION(scoped_lockable)

// A field read and written only with the lock held (shared suffices to read).
#define TALLY_GUARDED_BY(x) TALLY_THREAD_ANNOTATION(guarded_by(x))
// A pointer whose pointee is guarded by the lock.
#define TALLY_PT_GUARDED_BY(x) TALLY_THREAD_ANNOTATION(pt_guarded_by(x))

// The caller must hold the lock (exclusively / at least shared).
#define TALLY_REQUIRES(...) \
  TALLY_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define TALLY_REQUIRES_SHARED(...) \
  TALLY_THREAD_ANNOTATION(requires_shared_capability(__VA_ARGS__))

// The function takes (or releases) the lock and returns with it held (or
// not held).
#define TALLY_ACQUIRE(...) \
  TALLY_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define TALLY_ACQUIRE_SHARED(...) \
  TALLY_THREAD_ANNOTATION(acquire_shared_capability(__VA_ARGS__))
#define TALLY_RELEASE(...) \
  TALLY_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define TALLY_RELEASE_SHARED(...) \
  TALLY_THREAD_ANNOTATION(release_shared_capability(__VA_ARGS__))
// Releases whichever way the lock is held (a scoped holder's destructor).
#define TALLY_RELEASE_GENERIC(...) \
  TALLY_THREAD_ANNOTATION(release_generic_capability(__VA_ARGS__))
#define TALLY_TRY_ACQUIRE_SHARED(...) \
  TALLY_THREAD_ANNOTATION(try_acquire_shared_capability(__VA_ARGS__))

// The caller must not hold the lock (the function takes it).
#define TALLY_EXCLUDES(...) TALLY_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))

// The function returns a reference to the lock (for annotations elsewhere).
#define TALLY_RETURN_CAPABILITY(x) TALLY_THREAD_ANNOTATION(lock_returned(x))

// Tells the analysis the lock is held here (checked at run time elsewhere).
#define TALLY_ASSERT_CAPABILITY(x) TALLY_THREAD_ANNOTATION(assert_capability(x))
#define TALLY_ASSERT_SHARED_CAPABILITY(x) \
  TALLY_THREAD_ANNOTATION(assert_shared_capability(x))

// Turns the analysis off for one function. Always with a comment why.
#define TALLY_NO_THREAD_SAFETY_ANALYSIS \
  TALLY_THREAD_ANNOTATION(no_thread_safety_analysis)

#endif  // TALLY_UTIL_THREAD_ANNOTATIONS_H_
