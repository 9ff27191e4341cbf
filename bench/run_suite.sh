#!/usr/bin/env bash
# run_suite.sh: the whole benchmark suite in one go, then the report.
#
# Usage: bench/run_suite.sh [quick|full] [options]
#   quick (default)    every benchmark once at scale 1, then 2 more rounds
#                      of the target ratios' sides (3 pairs each): under 6
#                      minutes on the 2-core test machine once built
#   full               scale 5 (5x the operations), 5 pair rounds, and every
#                      tally_bench BM_Raw*/BM_Increment* (the issue-2 tables)
#   --rocksdb WHICH    both (default), release or system: which RocksDB
#                      builds the tally and raw-RocksDB benchmarks run on
#                      (docs/benchmarks.md, "Which RocksDB"). release is
#                      Debian's RocksDB source built in Release by
#                      scripts/build_rocksdb (once per machine, cached,
#                      about 10 minutes on 2 cores); system is Debian's
#                      librocksdb (a build with assertions). With both, the
#                      targets are judged on release and the page shows the
#                      system build's figures beside them.
#   --build-dir DIR    the system build's directory (default:
#                      <repo>/build/release, shared with `dev demo`)
#   --release-build-dir DIR
#                      the release build's directory (default:
#                      <repo>/build/release-rocksdb)
#   --jobs N           build jobs (default: nproc)
#   --no-build         use the binaries already in the build directory
#   --no-report        run only; leave docs/ and docs/bench/results.json alone
#
# Steps: installs what the peers and plots need (apt-get: redis-server,
# libhiredis-dev, python3-matplotlib; a peer that cannot be installed is
# skipped with a message), configures each build directory the suite's way
# (scripts/build_configs.sh: every option passed, so `./scripts/dev demo`'s
# configuration of build/release never wins) and builds the benchmark
# binaries (Release; the optional ones only where this checkout has them).
# Then PAIRS rounds (3 quick, 5 full): round 1 runs, on each RocksDB build
# (release first), strategies_bench, tally_api_bench and tally_space_bench;
# then, once, sqlite_peer_bench and redis_peer_bench (a redis-server started
# here on 127.0.0.1 on a free port, without persistence, once pinned with
# its client to core 0 and once unpinned, stopped after each); then
# tally_bench on each build. Rounds 2.. rerun only the two sides of each
# target ratio (PAIR_FILTER_* below), in the same order, as NAME.rR.json.
# Then, on each build, bench/apply_vs_sqlite.sh alternates counterctl apply
# (one thread) and sqlite_apply PAIRS times on one file of distinct events
# and one of events delivered 3 times, and tally_likes_bench (issue 15: its
# own three pairs inside, with a redis-server of its own),
# tally_recovery_bench and tally_reader_bench run once each. The raw JSON
# files go to DIR/bench-results/<UTC time>/ (DIR the release build's
# directory, or the system build's with --rocksdb system), the system
# build's tally and RocksDB figures to its system/ folder beside the peers'
# (which both builds' ratios share); then bench/report.py writes
# docs/benchmarks.md, docs/bench/*.png, docs/bench/results.json and the
# README's benchmark table. Exit status: non-zero when a benchmark fails its
# own result check or a step fails.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MODE=quick
BUILD_DIR="$ROOT/build/release"
RELEASE_BUILD_DIR="$ROOT/build/release-rocksdb"
ROCKSDB=both
JOBS="$(nproc)"
BUILD=1
REPORT=1

die() { echo "run_suite: $*" >&2; exit 1; }
usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//' >&2; exit 2; }

while [[ $# -gt 0 ]]; do
  case "$1" in
    quick|full) MODE="$1"; shift ;;
    --rocksdb) ROCKSDB="$2"; shift 2 ;;
    --build-dir) BUILD_DIR="$2"; shift 2 ;;
    --release-build-dir) RELEASE_BUILD_DIR="$2"; shift 2 ;;
    --jobs) JOBS="$2"; shift 2 ;;
    --no-build) BUILD=0; shift ;;
    --no-report) REPORT=0; shift ;;
    -h|--help) usage ;;
    *) echo "run_suite: unknown argument: $1" >&2; usage ;;
  esac
done
case "$MODE" in quick) SCALE=1 ;; full) SCALE=5 ;; esac
# The builds to run, the judged one first: LABELS[i] built in DIRS[i].
case "$ROCKSDB" in
  both) LABELS=(release system) ;;
  release|system) LABELS=("$ROCKSDB") ;;
  *) die "--rocksdb is '$ROCKSDB': expected both, release or system" ;;
esac
# Absolute: redis-server changes to --dir before it opens its --logfile, so
# a relative results path (scripts/dev passes build/release) would not
# resolve and Redis would be skipped as "did not answer".
declare -A DIR_OF=([system]="$BUILD_DIR" [release]="$RELEASE_BUILD_DIR")
for label in "${LABELS[@]}"; do
  mkdir -p "${DIR_OF[$label]}"
  DIR_OF[$label]="$(cd "${DIR_OF[$label]}" && pwd)"
done
export TALLY_BENCH_SCALE="$SCALE"

T_START=$(date +%s.%N)
# Debian's python3, where apt-get puts python3-matplotlib (a python3 earlier
# on PATH, e.g. pyenv's, would not see it).
PY=python3
[[ -x /usr/bin/python3 ]] && PY=/usr/bin/python3
SKIPPED=()
STEPS_FILE="$(mktemp)"
REDIS_PID=""
cleanup() {
  if [[ -n "$REDIS_PID" ]]; then kill "$REDIS_PID" 2>/dev/null || true; wait "$REDIS_PID" 2>/dev/null || true; fi
  rm -f "$STEPS_FILE"
}
trap cleanup EXIT

step_done() {  # step_done NAME START [NOTE]
  awk -v n="$1" -v a="$2" -v b="$(date +%s.%N)" -v note="${3:-}" \
    'BEGIN { printf "%s\t%.1f\t%s\n", n, b - a, note }' >>"$STEPS_FILE"
}

# ---- what the peers and plots need ----
t0=$(date +%s.%N)
need=()
for p in redis-server libhiredis-dev python3-matplotlib; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || need+=("$p")
done
if ((${#need[@]})); then
  echo "run_suite: installing ${need[*]}" >&2
  sudo=""; [[ $(id -u) -eq 0 ]] || sudo="sudo"
  if ! { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
         $sudo apt-get install -y -qq "${need[@]}" >/dev/null; }; then
    echo "run_suite: could not install ${need[*]}; going on without them" >&2
  fi
fi
step_done "dependencies" "$t0"

# ---- build ----
# shellcheck source=scripts/build_configs.sh
source "$ROOT/scripts/build_configs.sh"
build_one() {  # build_one LABEL: configures and builds DIR_OF[LABEL]
  local label="$1" dir="${DIR_OF[$1]}" t0 args t
  t0=$(date +%s.%N)
  # Every option the suite depends on is passed (scripts/build_configs.sh):
  # `./scripts/dev demo` configures the same build/release with benchmarks
  # off, and a cached OFF must not win here.
  args=("${BENCH_CMAKE_ARGS[@]}")
  [[ "$label" == release ]] && args=("${BENCH_RELEASE_ROCKSDB_CMAKE_ARGS[@]}")
  cmake -S "$ROOT" -B "$dir" -G Ninja "${args[@]}" >/dev/null \
    || die "cmake configure of $dir failed (the release RocksDB: scripts/build_rocksdb)"
  local targets=("${BENCH_TARGETS[@]}")
  for t in "${BENCH_OPTIONAL_TARGETS[@]}"; do
    if has_target "$dir" "$t"; then targets+=("$t"); fi
  done
  echo "== build (${targets[*]}) in $dir, -j$JOBS" >&2
  cmake --build "$dir" -j "$JOBS" --target "${targets[@]}" >/dev/null \
    || die "build failed (rerun: cmake --build $dir --target ${targets[*]})"
  step_done "build ($label RocksDB)" "$t0" "incremental"
}
if [[ "$BUILD" -eq 1 ]]; then
  for label in "${LABELS[@]}"; do build_one "$label"; done
fi
# Which RocksDB each build ran on, for machine.json (the page says it).
ROCKSDB_RELEASE=""
if [[ " ${LABELS[*]} " == *" release "* ]]; then
  prefix="$("$ROOT/scripts/build_rocksdb")" || die "scripts/build_rocksdb failed"
  ROCKSDB_RELEASE="$prefix, built in $(cat "$prefix/BUILT") s"
fi

JUDGED="${LABELS[0]}"
RESULTS="${DIR_OF[$JUDGED]}/bench-results/$(date -u +%Y%m%dT%H%M%SZ)"
# Where each build's figures go: the judged build's beside the peers', the
# other's in a folder of its own (bench/report.py reads it as the second
# column).
declare -A OUT_OF=([$JUDGED]="$RESULTS")
for label in "${LABELS[@]:1}"; do OUT_OF[$label]="$RESULTS/$label"; done
for label in "${LABELS[@]}"; do mkdir -p "${OUT_OF[$label]}"; done
BIN="${DIR_OF[$JUDGED]}/bench"
echo "== results in $RESULTS (mode $MODE, TALLY_BENCH_SCALE=$SCALE, RocksDB ${LABELS[*]})" >&2

# ---- the machine, before the run ----
dsync_per_s() {
  local f; f="$(mktemp "${TMPDIR:-/tmp}/dsync-XXXXXX")"
  local a b; a=$(date +%s.%N)
  dd if=/dev/zero of="$f" bs=4k count=200 oflag=dsync 2>/dev/null
  b=$(date +%s.%N); rm -f "$f"
  awk -v a="$a" -v b="$b" 'BEGIN { printf "%.0f", 200 / (b - a) }'
}
LOAD_START="$(cut -d' ' -f1-3 /proc/loadavg)"
DSYNC="$(dsync_per_s)"

FAILED=0
run_bench() {  # run_bench DIR NAME COMMAND...: JSON to DIR/NAME.json
  local out="$1" name="$2"; shift 2
  local t0 shown="$name"; t0=$(date +%s.%N)
  [[ "$out" != "$RESULTS" ]] && shown="${out#"$RESULTS"/}/$name"
  echo "== $shown" >&2
  if ! "$@" --benchmark_out="$out/$name.json" --benchmark_out_format=json \
         >"$out/$name.txt" 2>&1; then
    echo "run_suite: $shown exited non-zero (see $out/$name.txt)" >&2
    FAILED=1
  fi
  if grep -q "ERROR OCCURRED" "$out/$name.txt"; then
    echo "run_suite: $shown: a benchmark failed its check:" >&2
    grep "ERROR OCCURRED" "$out/$name.txt" >&2
    FAILED=1
  fi
  step_done "$shown" "$t0"
}

# ---- the rounds ----
# Every target ratio is taken from PAIRS pairs of its two sides (the page
# reports the median and the spread). Round 1 runs every benchmark; rounds
# 2..PAIRS rerun, in the same order, only the sides of a target ratio
# (PAIR_FILTER_*), so that round r of a numerator and round r of its
# denominator ran minutes, not a whole suite, apart, alternating:
# numerator, denominator, numerator, denominator ... Round r >= 2 writes
# NAME.rR.json; bench/report.py pairs the samples of two figures in order.
case "$MODE" in quick) PAIRS=3 ;; full) PAIRS=5 ;; esac
PAIR_FILTER_STRATEGIES='^strategy/[a-z_]+/(hot/batch:(1|1000)|cold1m/batch:1)/.*threads:2$'
PAIR_FILTER_API='^(once/dup:0|once_batch/dup:0/batch:1000|increment_batch/batch:1000|read/shards:10/hot:[01]|durable/sync:1/.*threads:(1|64)$|BM_Durable)'
PAIR_FILTER_SQLITE='^sqlite/once/sync:(normal|full)/dup:0/batch:(1|1000)/'
PAIR_FILTER_REDIS='/(once_lua/dup:0|incr_pipelined/depth:(100|1000))/'
PAIR_FILTER_TALLY='^BM_(RawMerge|Increment|RawOnce|IncrementOnce|RawOnceBatch/1000|IncrementOnceBatch/1000)/'

# ---- Redis: pinned to one core with its client, then unpinned ----
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
start_redis() {  # start_redis PORT [taskset prefix...]: sets REDIS_PID
  local port="$1"; shift
  "$@" redis-server --bind 127.0.0.1 --port "$port" --save "" \
    --appendonly no --protected-mode yes --daemonize no \
    --dir "$RESULTS" --logfile "$RESULTS/redis-$port.log" >/dev/null 2>&1 &
  REDIS_PID=$!
  for _ in $(seq 50); do
    redis-cli -h 127.0.0.1 -p "$port" ping >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  return 1
}
stop_redis() {
  kill "$REDIS_PID" 2>/dev/null || true
  wait "$REDIS_PID" 2>/dev/null || true
  REDIS_PID=""
}
REDIS=0
REDIS_VERSION=""
if ! command -v redis-server >/dev/null; then
  SKIPPED+=("Redis: redis-server is not installed (apt-get install redis-server failed)")
elif [[ ! -x "$BIN/redis_peer_bench" ]]; then
  SKIPPED+=("Redis: redis_peer_bench was not built (hiredis not found by pkg-config; apt-get install libhiredis-dev)")
else
  REDIS=1
  REDIS_VERSION="$(redis-server --version | sed -n 's/.*v=\([^ ]*\).*/\1/p')"
fi
run_redis() {  # run_redis SUFFIX [benchmark args...]: pinned, then unpinned
  local suffix="$1" label port prefix
  shift
  for label in pinned unpinned; do
    prefix=(); [[ "$label" == pinned ]] && prefix=(taskset -c 0)
    port="$(free_port)"
    if start_redis "$port" "${prefix[@]}"; then
      REDIS_PORT="$port" REDIS_LABEL="$label" \
        run_bench "$RESULTS" "redis-$label$suffix" "${prefix[@]}" "$BIN/redis_peer_bench" "$@"
      stop_redis
    else
      stop_redis
      SKIPPED+=("Redis ($label${suffix:+, round ${suffix#.r}}): redis-server did not answer on 127.0.0.1")
    fi
  done
}

# A binary another part of the suite may not have built yet runs only when
# it is there; the page then says "no data" for its rows.
have_bin() {  # have_bin DIR NAME WHAT: whether DIR/NAME exists, else a skip line
  [[ -x "$1/$2" ]] && return 0
  SKIPPED+=("$3: $2 was not built (not in this checkout)")
  return 1
}
for ((round = 1; round <= PAIRS; round++)); do
  if ((round == 1)); then
    sfx=""
    f_strat=(); f_api=(); f_sqlite=(); f_redis=()
    if [[ "$MODE" == full ]]; then
      # The issue-2 tables (summarize.py) want every BM_Raw*/BM_Increment*.
      f_tally=(--benchmark_min_time=1 --benchmark_filter='BM_(Raw|Increment)')
    else
      f_tally=(--benchmark_filter="$PAIR_FILTER_TALLY")
    fi
  else
    sfx=".r$round"
    f_strat=(--benchmark_filter="$PAIR_FILTER_STRATEGIES")
    f_api=(--benchmark_filter="$PAIR_FILTER_API")
    f_sqlite=(--benchmark_filter="$PAIR_FILTER_SQLITE")
    f_redis=(--benchmark_filter="$PAIR_FILTER_REDIS")
    f_tally=(--benchmark_filter="$PAIR_FILTER_TALLY")
  fi
  echo "== round $round of $PAIRS" >&2
  for label in "${LABELS[@]}"; do
    bin="${DIR_OF[$label]}/bench" out="${OUT_OF[$label]}"
    run_bench "$out" "strategies$sfx" "$bin/strategies_bench" "${f_strat[@]+"${f_strat[@]}"}"
    run_bench "$out" "api$sfx" "$bin/tally_api_bench" "${f_api[@]+"${f_api[@]}"}"
    if ((round == 1)); then run_bench "$out" space "$bin/tally_space_bench"; fi
  done
  run_bench "$RESULTS" "sqlite$sfx" "$BIN/sqlite_peer_bench" "${f_sqlite[@]+"${f_sqlite[@]}"}"
  if ((REDIS)); then run_redis "$sfx" "${f_redis[@]+"${f_redis[@]}"}"; fi
  for label in "${LABELS[@]}"; do
    run_bench "${OUT_OF[$label]}" "tally_bench$sfx" "${DIR_OF[$label]}/bench/tally_bench" "${f_tally[@]}"
  done
done

# ---- counterctl apply vs sqlite_apply: PAIRS alternating runs on one file ----
# One thread (the target is the single-thread path, issue 32), on a file of
# distinct events (copies 1) and one where every event comes 3 times.
apply_step() {  # apply_step LABEL COPIES
  local label="$1" copies="$2" dir="${DIR_OF[$1]}" out="${OUT_OF[$1]}" t0
  local name="apply.copies$copies"
  t0=$(date +%s.%N)
  echo "== ${label}: apply, copies $copies" >&2
  if [[ ! -x "$dir/tools/counterctl" || ! -x "$dir/bench/sqlite_apply" ]]; then
    SKIPPED+=("apply ($label): counterctl or sqlite_apply was not built")
    return
  fi
  if ! "$ROOT/bench/apply_vs_sqlite.sh" --lines "$((200000 * SCALE))" \
       --copies "$copies" --threads 1 --repeat "$PAIRS" \
       --counterctl "$dir/tools/counterctl" \
       --sqlite-apply "$dir/bench/sqlite_apply" --json "$out/$name.json" \
       >"$out/$name.txt" 2>&1; then
    echo "run_suite: apply ($label, copies $copies) exited non-zero (see $out/$name.txt)" >&2
    FAILED=1
  fi
  step_done "$label: apply, copies $copies" "$t0" "$PAIRS pairs, $((200000 * SCALE)) lines"
}
for copies in 1 3; do
  for label in "${LABELS[@]}"; do apply_step "$label" "$copies"; done
done

# ---- the likes workload (issue 15): one run per build, its pairs inside ----
# tally_likes_bench alternates its sides itself (/pair:K); its Redis rows
# need a server (unpinned, without persistence, as above).
likes_step() {  # likes_step LABEL
  local label="$1" bin="${DIR_OF[$1]}/bench" out="${OUT_OF[$1]}" port=""
  have_bin "$bin" tally_likes_bench "likes ($label)" || return 0
  if ((REDIS)); then
    port="$(free_port)"
    if ! start_redis "$port"; then
      stop_redis
      port=""
      SKIPPED+=("likes ($label), Redis rows: redis-server did not answer on 127.0.0.1")
    fi
  else
    SKIPPED+=("likes ($label), Redis rows: no redis-server or redis_peer_bench (hiredis)")
  fi
  if [[ -n "$port" ]]; then
    REDIS_PORT="$port" run_bench "$out" likes "$bin/tally_likes_bench"
    stop_redis
  else
    run_bench "$out" likes "$bin/tally_likes_bench"
  fi
}
for label in "${LABELS[@]}"; do likes_step "$label"; done

# ---- recovery and readers: one run each per build, when built ----
for label in "${LABELS[@]}"; do
  bin="${DIR_OF[$label]}/bench"
  if have_bin "$bin" tally_recovery_bench "recovery ($label)"; then
    run_bench "${OUT_OF[$label]}" recovery "$bin/tally_recovery_bench"
  fi
done
for label in "${LABELS[@]}"; do
  bin="${DIR_OF[$label]}/bench"
  if have_bin "$bin" tally_reader_bench "readers ($label)"; then
    run_bench "${OUT_OF[$label]}" readers "$bin/tally_reader_bench"
  fi
done

# ---- machine.json, then the report ----
LOAD_END="$(cut -d' ' -f1-3 /proc/loadavg)"
COMMIT="unknown"
if git_head="$(git -C "$ROOT" rev-parse --short=12 HEAD 2>/dev/null)"; then
  COMMIT="$git_head (plus any uncommitted changes in the work tree)"
elif [[ -f "$ROOT/.git/HEAD" ]]; then
  head_ref="$(cat "$ROOT/.git/HEAD")"
  if [[ "$head_ref" == ref:* ]]; then
    ref="${head_ref#ref: }"
    if [[ -f "$ROOT/.git/$ref" ]]; then COMMIT="$(cut -c1-12 "$ROOT/.git/$ref")"
    else COMMIT="$(awk -v r="$ref" '$2 == r { print substr($1, 1, 12) }' "$ROOT/.git/packed-refs" 2>/dev/null || true)"; fi
  else
    COMMIT="${head_ref:0:12}"
  fi
  COMMIT="$COMMIT (plus any uncommitted changes in the work tree)"
fi
T_END=$(date +%s.%N)
SKIPPED_LINES="$(printf '%s\n' "${SKIPPED[@]+"${SKIPPED[@]}"}")"
STEPS_FILE="$STEPS_FILE" SKIPPED_LINES="$SKIPPED_LINES" "$PY" - "$RESULTS/machine.json" <<EOF
import json, os, platform, re, subprocess, sys
def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True).stdout.strip()
    except Exception:
        return ""
cpuinfo = open("/proc/cpuinfo").read()
model = re.search(r"model name\s*:\s*(.*)", cpuinfo)
mhz = re.search(r"cpu MHz\s*:\s*([\d.]+)", cpuinfo)
steps = []
for line in open(os.environ["STEPS_FILE"]):
    name, secs, note = line.rstrip("\n").split("\t")
    steps.append({"name": name, "seconds": float(secs), "note": note})
m = {
    "date": sh("date -u '+%Y-%m-%d %H:%M UTC'"),
    "mode": "$MODE",
    "scale": $SCALE,
    "pairs": $PAIRS,
    "cpu": (model.group(1) if model else "?") + (f" @ {float(mhz.group(1)):.0f} MHz" if mhz else ""),
    "hypervisor": " hypervisor" in cpuinfo,
    "nproc": os.cpu_count(),
    "mem": sh("free -h | awk '/Mem:/ {print \$2}'"),
    "kernel": platform.release(),
    "os": sh(". /etc/os-release && echo \"\$PRETTY_NAME\""),
    "compiler": sh("c++ --version | head -n1"),
    "rocksdb": sh("dpkg-query -W -f='\${Version}' librocksdb-dev"),
    "rocksdb_builds": "${LABELS[*]}".split(),
    "rocksdb_release": "$ROCKSDB_RELEASE" or None,
    "sqlite": sh("dpkg-query -W -f='\${Version}' libsqlite3-dev"),
    "benchmark": sh("dpkg-query -W -f='\${Version}' libbenchmark-dev"),
    "redis": "$REDIS_VERSION" or None,
    "disk": sh("df -h \"\${TMPDIR:-/tmp}\" | awk 'NR==2 {print \$1\" (\"\$2\")\"}'"),
    "dsync_per_s": "$DSYNC",
    "loadavg_start": "$LOAD_START",
    "loadavg_end": "$LOAD_END",
    "commit": "$COMMIT",
    "steps": steps,
    "total_seconds": $T_END - $T_START,
    "skipped": [s for s in os.environ["SKIPPED_LINES"].split("\n") if s],
}
json.dump(m, open(sys.argv[1], "w"), indent=1)
EOF
for s in "${SKIPPED[@]+"${SKIPPED[@]}"}"; do echo "run_suite: skipped: $s" >&2; done

if [[ "$REPORT" -eq 1 ]]; then
  "$PY" "$ROOT/bench/report.py" --results "$RESULTS" --mode "$MODE" --root "$ROOT" \
    || FAILED=1
  echo "== wrote docs/benchmarks.md, docs/bench/*.png, docs/bench/results.json, README.md table" >&2
fi
exit "$FAILED"
