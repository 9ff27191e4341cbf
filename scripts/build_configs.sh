# shellcheck shell=bash disable=SC2034 # the arrays are used by the scripts that source this
# Sourced, not run: how build/release is configured for the demo and for the
# benchmark suite, in one place for scripts/dev, bench/run_suite.sh,
# bench/apply_vs_sqlite.sh and scripts/check_build_configs.
#
# The demo and the suite share build/release, and CMake keeps every -D of an
# earlier configure in CMakeCache.txt. So each configuration passes every
# option it depends on, ON or OFF, and never relies on a default: the demo's
# TALLY_BUILD_BENCHMARKS=OFF must not survive into the suite's configure (it
# did: "ninja: error: unknown target 'strategies_bench'"), and the suite's
# ON must not make the demo need google-benchmark. Switching configurations
# reruns CMake only; ninja rebuilds nothing that did not change.

DEMO_CMAKE_ARGS=(-DCMAKE_BUILD_TYPE=Release -DTALLY_BUILD_TESTS=OFF
  -DTALLY_BUILD_TOOLS=ON -DTALLY_BUILD_BENCHMARKS=OFF
  -DTALLY_ROCKSDB_BUILD=system)
DEMO_TARGETS=(tally_demo counterctl)

BENCH_CMAKE_ARGS=(-DCMAKE_BUILD_TYPE=Release -DTALLY_BUILD_TESTS=OFF
  -DTALLY_BUILD_TOOLS=ON -DTALLY_BUILD_BENCHMARKS=ON
  -DTALLY_ROCKSDB_BUILD=system)
# The suite's other build, in a directory of its own (build/release-rocksdb):
# the same with the release RocksDB (scripts/build_rocksdb, issue 32), so
# that switching between the two never rebuilds either.
BENCH_RELEASE_ROCKSDB_CMAKE_ARGS=("${BENCH_CMAKE_ARGS[@]/%=system/=release}")
# Every suite build has these (counterctl and sqlite_apply: the apply step).
BENCH_TARGETS=(strategies_bench tally_api_bench tally_space_bench
  sqlite_peer_bench tally_bench tally_recovery_bench tally_reader_bench
  tally_likes_bench counterctl sqlite_apply)
# Built when the configured tree has them: redis_peer_bench needs hiredis
# (run_suite.sh skips its step, with a message, when it is not built).
BENCH_OPTIONAL_TARGETS=(redis_peer_bench)

# has_target DIR NAME: whether the configured build tree DIR has target NAME.
has_target() {
  cmake --build "$1" --target help 2>/dev/null | grep -q "^$2:"
}
