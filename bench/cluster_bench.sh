#!/usr/bin/env bash
# The Redis Cluster backend's benchmark (docs/cluster.md, "Performance";
# docs/benchmarks.md): tally's client against redis-benchmark calling the
# same function on the same cluster, and a hot counter with 1 vs 16 shards,
# on a local 3-master cluster this script starts and stops itself.
#   bench/cluster_bench.sh [--build-dir DIR] [--jobs N] [--no-build]
#                          [-- tally_cluster_bench options...]
#   ./scripts/dev bench cluster [the same]     installs what it needs first
#
#   --build-dir DIR    build directory (default: <repo>/build/release,
#                      configured as bench/run_suite.sh configures it)
#   --jobs N           build jobs (default: nproc)
#   --no-build         use the tally_cluster_bench already in DIR/bench
#   after --            passed to tally_cluster_bench (bench/cluster_bench.cc
#                      says what each does: --rounds, --ops, --conns,
#                      --depth, --hot-ops, --hot-threads, --skip-overhead,
#                      --skip-hot, --tally-only)
#
# Steps: builds tally_cluster_bench (Release), starts a cluster with
# scripts/redis_cluster in a fresh temporary directory (3 masters, 3
# replicas, random free ports on 127.0.0.1), runs the binary on it
# (TALLY_REDIS_ENV), stops the cluster and removes its directory, also on
# failure or Ctrl-C. The report goes to stdout and, with the JSON of every
# figure, to DIR/bench-results/cluster-<UTC time>/. 1-2 minutes on 2
# cores once built. Not part of CI (.ci/run runs no benchmark) nor of
# bench/run_suite.sh.
#
# Secrets: redis-benchmark takes the ACL user's password on its command
# line only (-a; it reads neither a file nor REDISCLI_AUTH), so while it
# runs the throwaway cluster's `tally` password is in its argv, visible to
# `ps` on this machine. It is never printed or written to the results.
#
# Exit status: 0; 1 when a step fails (the binary's checks included); 2 for
# a usage error; 77 when redis-server, redis-cli or redis-benchmark is
# missing.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="$ROOT/build/release"
JOBS="$(nproc)"
BUILD=1
ARGS=()

die() { echo "cluster_bench: $*" >&2; exit 1; }
usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//' >&2; exit 2; }

while [[ $# -gt 0 ]]; do
  case "$1" in
    --build-dir) BUILD_DIR="$2"; shift 2 ;;
    --jobs) JOBS="$2"; shift 2 ;;
    --no-build) BUILD=0; shift ;;
    --) shift; ARGS=("$@"); break ;;
    -h|--help) usage ;;
    *) echo "cluster_bench: unknown argument: $1" >&2; usage ;;
  esac
done

for tool in redis-server redis-cli redis-benchmark; do
  if ! command -v "$tool" >/dev/null; then
    echo "cluster_bench: $tool is not installed (apt-get install redis-server redis-tools)" >&2
    exit 77
  fi
done

mkdir -p "$BUILD_DIR"
BUILD_DIR="$(cd "$BUILD_DIR" && pwd)"
if [[ "$BUILD" -eq 1 ]]; then
  # shellcheck source=scripts/build_configs.sh
  source "$ROOT/scripts/build_configs.sh"
  cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja "${BENCH_CMAKE_ARGS[@]}" >/dev/null \
    || die "cmake configure failed"
  echo "== build tally_cluster_bench in $BUILD_DIR, -j$JOBS" >&2
  cmake --build "$BUILD_DIR" -j "$JOBS" --target tally_cluster_bench >/dev/null \
    || die "build failed (rerun: cmake --build $BUILD_DIR --target tally_cluster_bench)"
fi
BIN="$BUILD_DIR/bench/tally_cluster_bench"
[[ -x "$BIN" ]] || die "$BIN is not built (drop --no-build)"

RESULTS="$BUILD_DIR/bench-results/cluster-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$RESULTS"

CLUSTER_DIR="$(mktemp -d "${TMPDIR:-/tmp}/tally-cluster-bench-XXXXXX")"
cleanup() {
  "$ROOT/scripts/redis_cluster" stop "$CLUSTER_DIR" --clean >/dev/null 2>&1 || true
  rm -rf "$CLUSTER_DIR"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "== start a cluster under $CLUSTER_DIR" >&2
ENV_FILE="$("$ROOT/scripts/redis_cluster" start "$CLUSTER_DIR")" \
  || die "scripts/redis_cluster start failed"

{
  echo "tally_cluster_bench on $(date -u '+%Y-%m-%d %H:%M UTC'), commit" \
       "$(git -C "$ROOT" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)" \
       "(plus any uncommitted changes)"
  echo "machine: $(nproc) cores, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -n1);" \
       "$(redis-server --version | sed -n 's/.*\(v=[^ ]*\).*/redis-server \1/p');" \
       "$(redis-benchmark --version)"
  echo "build: $BUILD_DIR ($(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$BUILD_DIR/CMakeCache.txt"))"
} | tee "$RESULTS/cluster.txt"
echo "== tally_cluster_bench ${ARGS[*]+"${ARGS[*]}"}" >&2
if ! TALLY_REDIS_ENV="$ENV_FILE" "$BIN" --json "$RESULTS/cluster.json" \
     ${ARGS[@]+"${ARGS[@]}"} | tee -a "$RESULTS/cluster.txt"; then
  die "tally_cluster_bench failed (see $RESULTS/cluster.txt)"
fi
echo "== results in $RESULTS" >&2
