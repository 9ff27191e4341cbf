#!/usr/bin/env bash
# apply_vs_sqlite.sh: times `counterctl apply` against sqlite_apply (the same
# once-events applied to SQLite, WAL mode, synchronous=NORMAL, 1000 events
# per transaction) on one shuffled JSON Lines file, checks that both reach
# the totals the file implies, and prints both rates and their ratio.
#
# The file holds ceil(LINES/COPIES) distinct events over COUNTERS counters,
# each event COPIES times (a queue that redelivers), shuffled with a fixed seed
# and cut to LINES lines: with the default of 3 copies about two lines in
# three are duplicates; with --copies 1 every line is a new event. Deltas are
# 1..7 so that a lost or doubled event changes the totals.
#
# Usage: bench/apply_vs_sqlite.sh [options]
#   --lines N          lines in the generated file (default 1000000)
#   --counters N       counters c0..c{N-1} (default 10)
#   --copies N         deliveries of each event (default 3)
#   --shards N         shards per counter (default 10)
#   --threads N        counterctl apply --threads (default 1)
#   --build-dir DIR    where to find or build the binaries
#                      (default: <repo>/build-bench)
#   --counterctl PATH  counterctl binary (default: DIR/tools/counterctl)
#   --sqlite-apply PATH
#                      sqlite_apply binary (default: DIR/bench/sqlite_apply)
#                      Unless both are given, both are (re)built in DIR
#                      (Release, tools on, tests off) before the run.
#   --jobs N           parallel jobs when building (default 1)
#   --workdir DIR      where the file and databases go (default: a new
#                      directory under $TMPDIR, removed at exit)
#   --keep             keep the work directory
#   --repeat N         alternate the two runs N times on the same file
#                      (counterctl, sqlite_apply, counterctl, ...; each on a
#                      fresh database), so that the ratio comes from N pairs
#                      (default 1)
#   --json FILE        also write every run as a google-benchmark-style
#                      JSON file (bench/run_suite.sh's "apply" step):
#                      benchmarks apply/counterctl/copies:C and
#                      apply/sqlite/copies:C, one row per run with its
#                      repetition_index, items_per_second = lines/s
#
# Exit status: 0 when both runs succeed and the totals agree (whether or not
# the 3x target is met), 1 otherwise.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LINES=1000000
COUNTERS=10
COPIES=3
SHARDS=10
THREADS=1
BUILD_DIR="$ROOT/build-bench"
COUNTERCTL=""
SQLITE_APPLY=""
JOBS=1
WORKDIR=""
KEEP=0
REPEAT=1
JSON=""
TARGET_RATIO=3

die() { echo "apply_vs_sqlite: $*" >&2; exit 1; }
usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//' >&2; exit 2; }

while [[ $# -gt 0 ]]; do
  case "$1" in
    --lines) LINES="$2"; shift 2 ;;
    --counters) COUNTERS="$2"; shift 2 ;;
    --copies) COPIES="$2"; shift 2 ;;
    --shards) SHARDS="$2"; shift 2 ;;
    --threads) THREADS="$2"; shift 2 ;;
    --build-dir) BUILD_DIR="$2"; shift 2 ;;
    --counterctl) COUNTERCTL="$2"; shift 2 ;;
    --sqlite-apply) SQLITE_APPLY="$2"; shift 2 ;;
    --jobs) JOBS="$2"; shift 2 ;;
    --workdir) WORKDIR="$2"; shift 2 ;;
    --keep) KEEP=1; shift ;;
    --repeat) REPEAT="$2"; shift 2 ;;
    --json) JSON="$2"; shift 2 ;;
    -h|--help) usage ;;
    *) echo "apply_vs_sqlite: unknown argument: $1" >&2; usage ;;
  esac
done
for n in "$LINES" "$COUNTERS" "$COPIES" "$SHARDS" "$THREADS" "$JOBS" "$REPEAT"; do
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || die "expected a positive integer, got '$n'"
done

# ---- binaries: given (used as they are) or built, incrementally, in the
# build dir, so that a run never times a stale binary ----
if [[ -z "$COUNTERCTL" || -z "$SQLITE_APPLY" ]]; then
  echo "building counterctl and sqlite_apply in $BUILD_DIR (-j$JOBS)" >&2
  # The suite's configuration (scripts/build_configs.sh): tools and
  # benchmarks on, every option passed, so a cached value never wins.
  # shellcheck source=scripts/build_configs.sh
  source "$ROOT/scripts/build_configs.sh"
  cmake -S "$ROOT" -B "$BUILD_DIR" "${BENCH_CMAKE_ARGS[@]}" >/dev/null \
    || die "cmake configure failed in $BUILD_DIR"
  cmake --build "$BUILD_DIR" -j"$JOBS" --target counterctl sqlite_apply \
    >/dev/null || die "build failed in $BUILD_DIR"
fi
[[ -n "$COUNTERCTL" ]] || COUNTERCTL="$BUILD_DIR/tools/counterctl"
[[ -n "$SQLITE_APPLY" ]] || SQLITE_APPLY="$BUILD_DIR/bench/sqlite_apply"
[[ -x "$COUNTERCTL" ]] || die "no counterctl at $COUNTERCTL"
[[ -x "$SQLITE_APPLY" ]] || die "no sqlite_apply at $SQLITE_APPLY"

if [[ -z "$WORKDIR" ]]; then
  WORKDIR="$(mktemp -d "${TMPDIR:-/tmp}/apply-vs-sqlite-XXXXXX")"
  if [[ "$KEEP" -eq 0 ]]; then trap 'rm -rf "$WORKDIR"' EXIT; fi
else
  mkdir -p "$WORKDIR"
fi
EVENTS="$WORKDIR/events.jsonl"
TALLY_DB="$WORKDIR/tally"
SQLITE_DB="$WORKDIR/events.sqlite"
rm -rf "$TALLY_DB" "$SQLITE_DB" "$SQLITE_DB-wal" "$SQLITE_DB-shm"

now_ns() { date +%s%N; }
seconds_since() { awk -v a="$1" -v b="$(now_ns)" 'BEGIN { printf "%.3f", (b - a) / 1e9 }'; }

# ---- the events file ----
# A random sort key per line (awk, fixed seed), sorted, then cut away: a
# deterministic shuffle for a given awk that needs no seeded `shuf`.
t0=$(now_ns)
LC_ALL=C awk -v lines="$LINES" -v counters="$COUNTERS" -v copies="$COPIES" 'BEGIN {
  srand(42)
  distinct = int((lines + copies - 1) / copies)
  for (k = 0; k < distinct; k++)
    for (copy = 0; copy < copies; copy++)
      printf "%.12f\t{\"counter\":\"c%d\",\"event_id\":\"evt-%d\",\"delta\":%d}\n",
             rand(), k % counters, k, k % 7 + 1
}' | LC_ALL=C sort -t "$(printf '\t')" -k1,1 -S 256M | cut -f2- \
   | head -n "$LINES" >"$EVENTS"
echo "events: $EVENTS: $(wc -l <"$EVENTS") lines, $(du -h "$EVENTS" | cut -f1)," \
     "generated in $(seconds_since "$t0") s"

# What the totals must be: the first delivery of each (counter, event) counts.
EXPECTED="$WORKDIR/expected.txt"
LC_ALL=C awk -F'"' '{
  key = $4 SUBSEP $8
  if (!(key in seen)) { seen[key] = 1; d = $11; gsub(/[:}]/, "", d); total[$4] += d }
} END { for (c in total) print c, total[c] }' "$EVENTS" | LC_ALL=C sort >"$EXPECTED"

# ---- the runs: counterctl, then sqlite_apply, REPEAT times ----
TALLY_TOTALS="$WORKDIR/tally.txt"
SQLITE_TOTALS="$WORKDIR/sqlite.txt"
run_tally() {  # sets TALLY_S; writes TALLY_TOTALS
  rm -rf "$TALLY_DB"
  for ((c = 0; c < COUNTERS; c++)); do
    "$COUNTERCTL" --db "$TALLY_DB" create "c$c" --shards "$SHARDS" >/dev/null \
      || die "counterctl create c$c failed"
  done
  local t0 out v
  t0=$(now_ns)
  out="$("$COUNTERCTL" --db "$TALLY_DB" apply --file "$EVENTS" \
          --threads "$THREADS")" || die "counterctl apply failed"
  TALLY_S=$(seconds_since "$t0")
  echo "counterctl apply --threads $THREADS: $(echo "$out" | tail -n1)"
  : >"$TALLY_TOTALS"
  for ((c = 0; c < COUNTERS; c++)); do
    v="$("$COUNTERCTL" --db "$TALLY_DB" get "c$c" | tail -n1)" \
      || die "counterctl get c$c failed"
    echo "c$c $v" >>"$TALLY_TOTALS"
  done
  LC_ALL=C sort -o "$TALLY_TOTALS" "$TALLY_TOTALS"
}
run_sqlite() {  # sets SQLITE_S; writes SQLITE_TOTALS
  rm -f "$SQLITE_DB" "$SQLITE_DB-wal" "$SQLITE_DB-shm"
  local t0 out
  t0=$(now_ns)
  out="$("$SQLITE_APPLY" "$EVENTS" "$SQLITE_DB")" || die "sqlite_apply failed"
  SQLITE_S=$(seconds_since "$t0")
  echo "sqlite_apply: $(echo "$out" | head -n1)"
  echo "$out" | awk '$1 == "total" { print $2, $3 }' | LC_ALL=C sort >"$SQLITE_TOTALS"
}

ok=1
check_totals() {  # check_totals NAME FILE
  if ! cmp -s "$EXPECTED" "$2"; then
    echo "MISMATCH: $1 totals differ from the file's:" >&2
    diff "$EXPECTED" "$2" >&2 || true
    ok=0
  fi
}
ROWS=()
json_row() {  # json_row SIDE REPETITION SECONDS
  ROWS+=("$(awk -v side="$1" -v rep="$2" -v t="$3" -v n="$LINES" \
    -v copies="$COPIES" -v reps="$REPEAT" 'BEGIN {
      printf "{\"name\": \"apply/%s/copies:%d\", \"run_type\": \"iteration\", ", side, copies
      printf "\"repetitions\": %d, \"repetition_index\": %d, \"iterations\": 1, ", reps, rep
      printf "\"real_time\": %.0f, \"time_unit\": \"ns\", ", t * 1e9
      printf "\"items_per_second\": %.3f, \"lines\": %d, \"seconds\": %.3f}", n / t, n, t
    }')")
}
RATIOS=()
for ((rep = 0; rep < REPEAT; rep++)); do
  run_tally
  check_totals counterctl "$TALLY_TOTALS"
  run_sqlite
  check_totals sqlite "$SQLITE_TOTALS"
  json_row counterctl "$rep" "$TALLY_S"
  json_row sqlite "$rep" "$SQLITE_S"
  RATIOS+=("$(awk -v t="$TALLY_S" -v s="$SQLITE_S" 'BEGIN { printf "%.3f", s / t }')")
done
if [[ -n "$JSON" ]]; then
  { echo '{"context": {"executable": "bench/apply_vs_sqlite.sh"}, "benchmarks": ['
    (IFS=,; echo "${ROWS[*]}")
    echo ']}'; } >"$JSON"
fi

# ---- verdict (the last pair's rates; the median of every pair's ratio) ----
[[ "$ok" -eq 1 ]] && echo "totals: counterctl == sqlite == expected ($COUNTERS counters, sum $(awk '{ s += $2 } END { print s }' "$EXPECTED"))"

echo "sizes: tally $(du -sh "$TALLY_DB" | cut -f1), sqlite $(du -ch "$SQLITE_DB"* | tail -n1 | cut -f1)"
MEDIAN="$(printf '%s\n' "${RATIOS[@]}" | sort -g | awk '{ r[NR] = $1 } END {
  printf "%.3f", (NR % 2) ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2 }')"
awk -v n="$LINES" -v t="$TALLY_S" -v s="$SQLITE_S" -v target="$TARGET_RATIO" \
    -v med="$MEDIAN" -v pairs="$REPEAT" -v all="${RATIOS[*]}" 'BEGIN {
  printf "counterctl apply: %d lines in %.3f s = %.0f lines/s (wall, whole process)\n", n, t, n / t
  printf "sqlite_apply:     %d lines in %.3f s = %.0f lines/s (wall, whole process)\n", n, s, n / s
  verdict = (med >= target) ? "met" : "NOT met"
  printf "ratio counterctl/sqlite: median %.2fx of %d pair(s) (%s) (target >= %gx: %s)\n", med, pairs, all, target, verdict
}'
[[ "$ok" -eq 1 ]]
