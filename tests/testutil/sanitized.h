// Whether this build runs under ASAN or TSAN, for the loop tests that run
// fewer rounds there: those builds run 5-10x slower and look for memory
// errors and races, not for more rounds (the plain build's counts are the
// ones the figures in docs/ come from).

#ifndef TALLY_TESTS_TESTUTIL_SANITIZED_H_
#define TALLY_TESTS_TESTUTIL_SANITIZED_H_

namespace tally::test {

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif

}  // namespace tally::test

#endif  // TALLY_TESTS_TESTUTIL_SANITIZED_H_
