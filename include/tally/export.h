// TALLY_EXPORT: marks what the shared library exports.
//
// libtally.so is compiled with -fvisibility=hidden and
// -fvisibility-inlines-hidden: only declarations marked TALLY_EXPORT (the
// public API of include/tally/, C++ and C) are visible to its users; the
// engine, RocksDB's and FlatBuffers' inline code compiled into it stay
// private to it (tests/install/check_exports.sh checks the list with nm -D).
// The static library is built from the same objects; there the mark
// changes nothing. GCC and Clang on ELF only (Debian): no dllexport.

#ifndef TALLY_EXPORT_H_
#define TALLY_EXPORT_H_

#if !defined(__GNUC__) && !defined(__clang__)
#define TALLY_EXPORT
#elif defined(__cplusplus)
// The standard attribute form, so it may follow [[nodiscard]].
#define TALLY_EXPORT [[gnu::visibility("default")]]
#else
#define TALLY_EXPORT __attribute__((visibility("default")))
#endif

#endif  // TALLY_EXPORT_H_
