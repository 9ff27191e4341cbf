// Whether this build runs under ASAN or TSAN, for the loop tests that run
// fewer rounds there: those builds run 5-10x slower and look for memory
// errors and races, not for more rounds (the plain build's counts are the
// ones the figures in docs/ come from).

#ifndef TALLY_TESTS_TESTUTIL_SANITIZED_H_
#define TALLY_TESTS_TESTUTIL_SANITIZED_H_

namespace tally::test {

// GCC defines __SANITIZE_*__; clang 14 answers __has_feature instead.
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define TALLY_TEST_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__) || \
    defined(TALLY_TEST_SANITIZED)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif

}  // namespace tally::test

#endif  // TALLY_TESTS_TESTUTIL_SANITIZED_H_
