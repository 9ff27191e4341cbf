#!/usr/bin/env bash
# Edge to cluster, killed at random moments (docs/cluster.md, "Edge to
# cluster"): an edge database counts events into outbox counters (a named
# one and a keyed one, once-increments with redeliveries and plain
# increments); each cycle adds a chunk of events to the edge and starts
# `counterctl --db EDGE sync --to redis://...`, then SIGKILLs it after a
# random delay (a kill time, not a wait for anything: the sync may be in
# any step, opening, applying a batch on the cluster, acknowledging it on
# the edge, or done). After the cycles one more sync must succeed, and the
# cluster must hold exactly what the edge holds: each counter's total, each
# key's value, one marker per outbox entry the edge ever wrote, nothing
# left in the edge's outbox.
#
# Usage: sync_killed.sh COUNTERCTL ENV_FILE [CYCLES [EVENTS_PER_CYCLE]]
# ENV_FILE is the test cluster's (scripts/redis_cluster); exit 77 when it
# does not exist (no cluster started: skipped).
set -euo pipefail

ctl="$1"
cycles="${3:-20}"
per_cycle="${4:-3000}"
# shellcheck source=tests/cluster/cluster_env.sh
. "$(dirname "$0")/cluster_env.sh"
use_cluster sync_killed "$2"
edge="$work/edge"
hub="$TALLY_REDIS_TARGET/sync$$"

fail() {
  echo "sync_killed: $*" >&2
  exit 1
}

"$ctl" --db "$hub" create views --shards 8 >/dev/null
"$ctl" --db "$hub" create likes --shards 4 --keyed >/dev/null
"$ctl" --db "$edge" create views --shards 2 --outbox >/dev/null
"$ctl" --db "$edge" create likes --shards 2 --keyed --outbox >/dev/null

# Chunk C: per event i, a once-increment of views (every 5th delivered
# twice), a like of post-(i mod 50) by user C.i, and every 7th a plain
# increment of views by 3.
chunk() {
  local c="$1"
  awk -v c="$c" -v n="$per_cycle" 'BEGIN {
    for (i = 0; i < n; i++) {
      line = sprintf("{\"counter\":\"views\",\"event_id\":\"v%d.%d\",\"delta\":%d}", c, i, 1 + i % 4)
      print line
      if (i % 5 == 0) print line
      printf("{\"counter\":\"likes\",\"key\":\"post-%d\",\"event_id\":\"u%d.%d\"}\n", i % 50, c, i)
      if (i % 7 == 0) print "{\"counter\":\"views\",\"delta\":3}"
    }
  }'
}

entries=0   # outbox entries the edge wrote: its applied increments
killed=0    # syncs the kill found still running
for ((c = 1; c <= cycles; c++)); do
  chunk "$c" >"$work/chunk.jsonl"
  applied="$("$ctl" --db "$edge" apply --file "$work/chunk.jsonl" --json |
             sed -n 's/.*"applied":\([0-9]*\).*/\1/p')"
  [[ -n "$applied" ]] || fail "cycle $c: apply printed no applied count"
  entries=$((entries + applied))
  "$ctl" --db "$edge" sync --to "$hub" --batch 200 >/dev/null 2>&1 &
  pid=$!
  sleep "0.$(printf '%03d' $((RANDOM % 700)))"
  if kill -9 "$pid" 2>/dev/null; then killed=$((killed + 1)); fi
  wait "$pid" 2>/dev/null || true
done

"$ctl" --db "$edge" sync --to "$hub" >"$work/final" ||
  fail "the final sync failed: $(cat "$work/final")"

edge_views="$("$ctl" --db "$edge" get views)"
hub_views="$("$ctl" --db "$hub" get views)"
[[ "$edge_views" == "$hub_views" ]] ||
  fail "views: edge $edge_views, cluster $hub_views"
"$ctl" --db "$edge" keys likes --limit 10000 >"$work/edge_keys"
"$ctl" --db "$hub" keys likes --limit 10000 >"$work/hub_keys"
cmp -s "$work/edge_keys" "$work/hub_keys" ||
  fail "likes per key differ: $(diff "$work/edge_keys" "$work/hub_keys" | head -5)"
markers=0
for counter in views likes; do
  m="$("$ctl" --db "$hub" describe "$counter" | sed -n 's/^markers: //p')"
  markers=$((markers + m))
done
[[ "$markers" -eq "$entries" ]] ||
  fail "the cluster holds $markers markers for $entries outbox entries"
pending="$("$ctl" --db "$edge" outbox status | sed -n 's/^entries: //p')"
[[ "$pending" == "0" ]] || fail "the edge's outbox still holds $pending entries"
"$ctl" --db "$hub" delete views --yes >/dev/null
"$ctl" --db "$hub" delete likes --yes >/dev/null

echo "sync_killed: $cycles cycles, $killed syncs killed while running," \
     "$entries outbox entries; cluster equals edge (views $hub_views," \
     "$(wc -l <"$work/hub_keys") keys, $markers markers)"
