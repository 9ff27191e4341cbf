// FUZZ_CHECK: a property every fuzz target asserts. A failure prints the
// condition and aborts, which libFuzzer reports as a crash and saves the
// input; unlike assert() it stays on in every build type.

#ifndef TALLY_TESTS_FUZZ_FUZZ_CHECK_H_
#define TALLY_TESTS_FUZZ_FUZZ_CHECK_H_

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(cond)                                               \
  do {                                                                 \
    if (!(cond)) {                                                     \
      std::fprintf(stderr, "%s:%d: FUZZ_CHECK failed: %s\n", __FILE__, \
                   __LINE__, #cond);                                   \
      std::abort();                                                    \
    }                                                                  \
  } while (0)

#endif  // TALLY_TESTS_FUZZ_FUZZ_CHECK_H_
