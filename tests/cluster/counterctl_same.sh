#!/usr/bin/env bash
# counterctl on a cluster target answers as on a local database: the same
# commands (create, incr with and without event ids, apply, get, shards,
# keys, list, describe, events, delete of a key and of a counter, and the
# errors of bad input) run against a fresh local database and against a
# fresh namespace of the test cluster, and their outputs and exit codes
# must be equal line for line (times of creation aside: each side's
# clock; plain increments carry an affinity key, since a random shard is
# each side's own draw). A call the cluster has not built must exit 1 with one line on
# stderr naming itself.
#
# Usage: counterctl_same.sh COUNTERCTL ENV_FILE
# exit 77 when ENV_FILE does not exist (no cluster started: skipped).
set -uo pipefail

ctl="$1"
# shellcheck source=tests/cluster/cluster_env.sh
. "$(dirname "$0")/cluster_env.sh"
use_cluster counterctl_same "$2"

cat >"$work/events.jsonl" <<'EOF'
{"counter":"orders","event_id":"ord-1","delta":2}
{"counter":"orders","event_id":"ord-1","delta":2}
{"counter":"orders","event_id":"ord-2","delta":5}
{"counter":"orders","event_id":"ord-2","delta":6}
{"counter":"likes","key":"post-1","event_id":"u1"}
{"counter":"likes","key":"post-2","event_id":"u1"}
{"counter":"likes","key":"post-1","event_id":"u1"}
EOF

commands=(
  "create orders --shards 4"
  "create likes --shards 2 --keyed"
  "create orders --shards 4"
  "create bad --shards 0"
  "incr orders --by 3 --affinity edge-1"
  "incr orders --by 2 --event-id e1"
  "incr orders --by 2 --event-id e1"
  "incr orders --by 4 --event-id e1"
  "incr orders --by 7 --event-id e2 --affinity edge-9"
  "incr orders --by 7 --event-id e2"
  "incr likes --key post-3 --by 4 --affinity edge-1"
  "incr likes --by 4"
  "incr missing --by 1"
  "apply --file $work/events.jsonl"
  "get orders"
  "get orders --json"
  "get likes --key post-1"
  "get likes --key never"
  "shards orders"
  "keys likes"
  "keys likes --json"
  "list"
  "describe likes --json"
  "events orders"
  "top likes"
  "rollup likes"
  "top likes"
  "top likes --exact --json"
  "rollup"
  "verify"
  "delete likes --key post-1 --yes"
  "keys likes"
  "delete orders --yes"
  "list"
)

# Runs every command against database $1, one block per command: the
# command, its exit code, stdout, stderr; times of creation masked.
run_all() {
  local db="$1"
  for cmd in "${commands[@]}"; do
    # shellcheck disable=SC2086
    "$ctl" --db "$db" $cmd >"$work/out" 2>"$work/err"
    echo "== $cmd -> $?"
    # Times differ between the runs, and a cluster has no RocksDB
    # sequence number (0).
    sed -E 's/created_at[=:" ]+[0-9TZ:.-]+/created_at=T/g; s/"created_at_ms":[0-9]+/"created_at_ms":T/g;
            s/as_of[=:" ]+[0-9TZ:.-]+/as_of=T/g; s/"as_of_ms":[0-9]+/"as_of_ms":T/g;
            s/lag_ms[=:" ]+[0-9]+/lag_ms=L/g; s/"sequence":[0-9]+/"sequence":S/g' \
      "$work/out" "$work/err"
  done
}

run_all "$work/local" >"$work/local.txt"
run_all "$TALLY_REDIS_TARGET/same$$" >"$work/cluster.txt"
# Error messages name their database: the path or the target.
sed -i "s|$work/local|DB|g" "$work/local.txt"
sed -i "s|$TALLY_REDIS_TARGET/same$$|DB|g" "$work/cluster.txt"
if ! diff -u "$work/local.txt" "$work/cluster.txt"; then
  echo "counterctl_same: the cluster's answers differ from the local ones (above)" >&2
  exit 1
fi

# Not built on the cluster, or a command of local files: exit 1, one line
# on stderr naming the call.
db="$TALLY_REDIS_TARGET/same$$"
"$ctl" --db "$db" create c --shards 1 --keyed >/dev/null || exit 1
for cmd in "outbox status" "compact" "checkpoint $work/cp" "wal dump" \
           "ldb scan"; do
  # shellcheck disable=SC2086
  "$ctl" --db "$db" $cmd >"$work/out" 2>"$work/err"
  rc=$?
  if [[ $rc -ne 1 || $(wc -l <"$work/err") -ne 1 ]] ||
     ! grep -q "NotSupported" "$work/err"; then
    echo "counterctl_same: '$cmd' on the cluster: exit $rc, stderr:" >&2
    cat "$work/err" >&2
    exit 1
  fi
done
# stats works on both (its figures differ by nature: RocksDB's families
# have no counterpart on a cluster).
"$ctl" --db "$db" stats >"$work/out" 2>"$work/err" ||
  { echo "counterctl_same: stats on the cluster failed:" >&2; cat "$work/err" >&2; exit 1; }
"$ctl" --db "$db" delete c --yes >/dev/null || exit 1
# A local database moved to the cluster and back (export, import): the
# same counters, keys, values and markers at each step, and redeliveries
# answered as duplicates there.
src="$work/src" back="$work/back" moved="$TALLY_REDIS_TARGET/moved$$"
"$ctl" --db "$src" create likes --shards 4 --keyed >/dev/null &&
  "$ctl" --db "$src" create orders --shards 3 >/dev/null &&
  "$ctl" --db "$src" apply --file "$work/events.jsonl" >/dev/null &&
  "$ctl" --db "$src" incr likes --key post-7 --by 3 --affinity edge-1 >/dev/null &&
  "$ctl" --db "$src" export "$work/export.jsonl" >/dev/null &&
  "$ctl" --db "$moved" import "$work/export.jsonl" >/dev/null &&
  "$ctl" --db "$moved" export "$work/again.jsonl" >/dev/null &&
  "$ctl" --db "$back" import "$work/again.jsonl" >/dev/null ||
  { echo "counterctl_same: export/import through the cluster failed" >&2; exit 1; }
look() {
  local db="$1"
  for cmd in "list" "keys likes" "shards orders" "events orders" \
             "incr likes --key post-2 --event-id u1" \
             "incr orders --by 5 --event-id ord-2" "verify"; do
    # shellcheck disable=SC2086
    "$ctl" --db "$db" $cmd 2>&1 | sed -E 's/created_at[=:" ]+[0-9TZ:.-]+/created_at=T/g'
  done
}
look "$src" >"$work/src.txt"
look "$moved" >"$work/moved.txt"
look "$back" >"$work/back.txt"
if ! diff -u "$work/src.txt" "$work/moved.txt" ||
   ! diff -u "$work/src.txt" "$work/back.txt"; then
  echo "counterctl_same: a database moved through the cluster differs (above)" >&2
  exit 1
fi
"$ctl" --db "$moved" delete likes --yes >/dev/null
"$ctl" --db "$moved" delete orders --yes >/dev/null

echo "counterctl_same: ${#commands[@]} commands answered alike on both backends; a database moved to the cluster and back kept every counter, key and marker"
