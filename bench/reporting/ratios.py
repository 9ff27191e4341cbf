"""The ratios a run is judged by: each target's two sides, its value
(the median of the pairs' ratios) and whether it met its target
(compute_ratios).
"""

from reporting.figures import (BATCHES, Best, LAYOUTS, Largest, MERGES,
                               PRODUCERS, READ_SHARDS, RMWS, Worst, redis_lua)


class Target:
    """One row of the issue-14 target table: a ratio (num / den >= target)
    or, with `field` and `unit`, a bound (the figure's field <= target)."""

    def __init__(self, key, what, num, den=None, target=None, field=None,
                 unit=None, num_field="ops_per_s", den_field="ops_per_s",
                 issue4=None):
        self.key, self.what, self.num, self.den = key, what, num, den
        self.target, self.field, self.unit = target, field, unit
        self.num_field, self.den_field, self.issue4 = num_field, den_field, issue4

    def record(self, F):
        if self.field:
            F.bound(self.key, self.num, self.field, self.target, self.unit,
                    self.what)
        else:
            F.ratio(self.key, self.num, self.den, self.target, self.what,
                    num_field=self.num_field, den_field=self.den_field,
                    targets={"issue4": self.issue4} if self.issue4 else None)


DURABLE_ONE = "BM_DurableIncrement/producers:1"


# Reference rows beside the durable target (no target of their own).
DURABLE_REFERENCE = ["BM_DurableIncrementAsync/inflight:64",
                     "BM_DurableOnceAsync/inflight:64"]


# Issue 14's targets, in the order of the issue. Adding a row is one entry:
# a figure name (docs/bench/results.json `figures`), Best/Worst/Largest for a
# side chosen within the run. A row whose figures are missing (a binary not
# built yet) says "no data".
TARGETS_14 = [
    Target("tally_once_vs_raw_once",
           "`IncrementOnce` vs the raw marker recipe (tally_bench)",
           "BM_IncrementOnce", "BM_RawOnce", 1.5),
    Target("tally_increment_vs_raw_merge",
           "`Increment` vs a raw merge (tally_bench)",
           "BM_Increment", "BM_RawMerge", 1.3),
    Target("tally_once_batch_vs_raw_once_batch.batch1000",
           "`Apply` of 1000 once-increments vs its raw recipe (tally_bench)",
           "BM_IncrementOnceBatch/1000", "BM_RawOnceBatch/1000", 1.5),
    Target("tally_once_vs_sqlite_normal_per_event",
           "`IncrementOnce` vs SQLite NORMAL, one transaction per event",
           "once/dup:0", "sqlite/once/sync:normal/dup:0/batch:1", 8.0,
           issue4=4.0),
    Target("tally_once_vs_redis_lua_best",
           "`IncrementOnce` vs Redis Lua SET NX + INCRBY (pinned or "
           "unpinned, the faster in each round)",
           "once/dup:0", redis_lua(0), 5.0, issue4=3.0),
    Target("tally_once_batch_vs_sqlite_full_batch",
           "`Apply` of 1000 once-increments vs SQLite FULL, 1000 per "
           "transaction", "once_batch/dup:0/batch:1000",
           "sqlite/once/sync:full/dup:0/batch:1000", 3.0),
    Target("counterctl_apply_vs_sqlite.copies1",
           "`counterctl apply --threads 1` vs `sqlite_apply`, distinct "
           "events (lines/s, whole process)",
           "apply/counterctl/copies:1", "apply/sqlite/copies:1", 3.0),
    Target("counterctl_apply_vs_sqlite.copies3",
           "`counterctl apply --threads 1` vs `sqlite_apply`, every event 3 "
           "times (lines/s, whole process)",
           "apply/counterctl/copies:3", "apply/sqlite/copies:3", 3.0),
    Target("recovery.readonly_open_after_close",
           "read-only `Db::Open` after a clean close, longest history run",
           Largest("BM_ReadOnlyOpenAfterClose/"), target=100.0,
           field="open_ms", unit="ms"),
    Target("readers.idle.max_ms",
           "counterctl read command, no writer: slowest read (max), worst "
           "command", Worst(r"^BM_CounterctlRead/[^/]+/idle$",
                            "BM_CounterctlRead/<cmd>/idle (worst cmd)"),
           target=100.0, field="max_ms", unit="ms"),
    Target("readers.beside_writer.p95_ms",
           "counterctl read command beside a writer running apply: p95, "
           "worst command",
           Worst(r"^BM_CounterctlRead/[^/]+/beside_writer$",
                 "BM_CounterctlRead/<cmd>/beside_writer (worst cmd)"),
           target=300.0, field="p95_ms", unit="ms"),
    Target("durable_increment.t64_vs_t1",
           "synced `Increment`, 64 producer threads vs 1",
           "BM_DurableIncrement/producers:64", DURABLE_ONE, 20.0),
]


# Issue 15's targets (tally_likes_bench, one run: each benchmark runs
# three times in turn, /pair:K, so a ratio's pairs come from within that
# run). The exactness checks (every post's value, Verify, TopKeys from the
# roll-up equal to an exact scan and to the generator's top 10) are asserted
# by the benchmark itself: a failure fails it and shows under "Skipped or
# failed", and its rows then say "no data".
LIKES_TALLY_BEST = Best(["likes/tally/once", "likes/tally/batch:1000"],
                        "likes/tally/{once,batch:1000} (faster per pair)")


LIKES_RSS = Largest("likes/rss/keys:")


# Feed pages per pipelined round trip of the Redis MGET side
# (bench/likes_bench.cc, kMgetDepth).
MGET_DEPTH = 16


TARGETS_15 = [
    Target("likes.tally_batch_vs_sqlite_batch",
           "likes: tally `Apply` of 1000 once-increments vs SQLite (WAL, "
           "NORMAL), 1000 likes per transaction",
           "likes/tally/batch:1000", "likes/sqlite/batch:1000", 3.0),
    Target("likes.tally_best_vs_redis_pipelined",
           "likes: tally at its best (`IncrementOnce` or `Apply` of 1000, "
           "the faster per pair) vs Redis Lua SET NX + INCR pipelined 1000 "
           "deep", LIKES_TALLY_BEST, "likes/redis/lua_pipelined/depth:1000",
           1.5),
    Target("likes.feed_page_vs_sqlite_in",
           "a feed page of 50 Zipf-drawn posts: tally one `ReadKeys` vs "
           "SQLite one prepared `SELECT post, likes FROM posts WHERE post IN "
           "(50 ids)` (WAL), on the same likes (keys/s)",
           "likes/read50/read_keys", "likes/read50/sqlite_in", 2.0),
    Target("likes.feed_page_vs_redis_mget",
           "a feed page of 50 Zipf-drawn posts: tally one `ReadKeys` vs "
           f"Redis one `MGET` of 50 `post:<id>` keys, {MGET_DEPTH} pages per "
           "round trip (pipelined), on the same likes (keys/s)",
           "likes/read50/read_keys",
           f"likes/read50/redis_mget/depth:{MGET_DEPTH}", 1.0),
    Target("likes.rss_bound_vs_peak",
           "memory bound (block cache + every family's memtables + 64 MiB) "
           "over peak RSS after writing N distinct keys (N = 10M in full "
           "mode)", LIKES_RSS, LIKES_RSS, 1.0, num_field="rss_bound_mb",
           den_field="vmhwm_mb"),
]


def compute_ratios(F):
    """Every ratio of the issue-4 targets, plus the reference ones."""
    s = "strategy/{}/{}/batch:{}/threads:{}"
    # Every strategy cell against each merge variant, for the tables and the
    # analysis.
    for layout in LAYOUTS:
        for batch in BATCHES:
            for t in (1, 2):
                for m in MERGES:
                    for rmw in RMWS:
                        F.ratio(f"{m}_vs_{rmw}.{layout}.batch{batch}.t{t}",
                                s.format(m, layout, batch, t),
                                s.format(rmw, layout, batch, t))
                F.ratio(f"merge_blind_vs_merge.{layout}.batch{batch}.t{t}",
                        s.format("merge_blind", layout, batch, t),
                        s.format("merge", layout, batch, t))
            F.ratio(f"merge.{layout}_vs_hot.batch{batch}.t1",
                    s.format("merge", layout, batch, 1),
                    s.format("merge", "hot", batch, 1))
    # The targets last: their keys name cells of the loop above. Each merge
    # target is recorded for both variants, each named in its row.
    # Issue 32 raised the met targets to what the suite had shown (2x to
    # 3x, 5x to 10x, 2x to 5x; the read bound 10x to 5x): a met target is
    # the floor, not the goal.
    for m, label in MERGES.items():
        F.ratio(f"{m}_vs_txn_rmw.hot.batch1.t2", s.format(m, "hot", 1, 2),
                s.format("txn_rmw", "hot", 1, 2), 3.0,
                f"{label} vs TransactionDB RMW, hot key, 1 write/batch, "
                "2 threads")
        # Retired as a target (issue 32): with 1000 writes per batch both
        # sides insert 1000 memtable entries per batch by construction
        # (the RMW's read is answered by its own batch's index), so no merge
        # variant can reach 3x. A reference row; the target below compares
        # what tally does about it.
        F.ratio(f"{m}_vs_mutex_rmw.hot.batch1000.t2",
                s.format(m, "hot", 1000, 2),
                s.format("mutex_rmw", "hot", 1000, 2))
        F.ratio(f"{m}_vs_best_rmw.cold1m.batch1.t2",
                s.format(m, "cold1m", 1, 2),
                Best([s.format(r, "cold1m", 1, 2) for r in RMWS],
                     "strategy/{mutex_rmw,txn_rmw}/cold1m/batch:1/threads:2 "
                     "(faster per round)"), 10.0,
                f"{label} vs the faster RMW, 1M cold counters (direct I/O), "
                "1 write/batch, 2 threads")
    F.ratio("tally_batch_vs_mutex_rmw.hot.batch1000",
            "increment_batch/batch:1000", s.format("mutex_rmw", "hot", 1000, 2),
            3.0, "tally `Apply` of 1000 plain increments (folded per counter "
            "before the write) vs striped-mutex RMW, 1000 writes/batch on a "
            "hot key, 2 threads")
    redis_pipe = Best([f"redis/{p}/incr_pipelined/depth:{d}"
                       for p in ("pinned", "unpinned") for d in (100, 1000)],
                      "redis/{pinned,unpinned}/incr_pipelined/depth:{100,1000} "
                      "(fastest per round)")
    F.ratio("tally_batch_vs_redis_pipelined_best",
            "increment_batch/batch:1000", redis_pipe, 5.0,
            "tally Apply(1000 plain) vs Redis pipelined INCR at its best")
    for shards in READ_SHARDS:
        hot, cold = f"read/shards:{shards}/hot:1", f"read/shards:{shards}/hot:0"
        F.ratio(f"hot_read_p99_vs_cold_p50.shards{shards}", hot, cold,
                lower_is_better=True, num_field="p99_us", den_field="p50_us")
        F.ratio(f"hot_read_p99_vs_cold_p99.shards{shards}", hot, cold,
                lower_is_better=True, num_field="p99_us", den_field="p99_us")
    F.ratio("hot_read_p99_vs_cold_p50.shards10", "read/shards:10/hot:1",
            "read/shards:10/hot:0", 5.0,
            "ReadExact p99 during a write burst vs a cold read (p50), 10 shards",
            lower_is_better=True, num_field="p99_us", den_field="p50_us")
    for dup in (0, 50, 90):
        F.ratio(f"tally_once_vs_sqlite_normal_per_event.dup{dup}",
                f"once/dup:{dup}", f"sqlite/once/sync:normal/dup:{dup}/batch:1")
        F.ratio(f"tally_once_batch_vs_sqlite_normal_batch.dup{dup}",
                f"once_batch/dup:{dup}/batch:1000",
                f"sqlite/once/sync:normal/dup:{dup}/batch:1000")
        F.ratio(f"tally_once_vs_redis_lua_best.dup{dup}", f"once/dup:{dup}",
                redis_lua(dup))
    F.ratio("tally_increment_vs_redis_incr_best", "increment",
            Best([f"redis/{p}/incr" for p in ("pinned", "unpinned")]))
    F.ratio("redis_pinned_vs_unpinned.incr", "redis/pinned/incr",
            "redis/unpinned/incr")
    F.ratio("redis_pinned_vs_unpinned.once_lua", "redis/pinned/once_lua/dup:0",
            "redis/unpinned/once_lua/dup:0")
    for p in PRODUCERS:
        F.ratio(f"durable_sync1_vs_sync0.p{p}", f"durable/sync:1/threads:{p}",
                f"durable/sync:0/threads:{p}")
    F.ratio("durable_sync1.p64_vs_p1", "durable/sync:1/threads:64",
            "durable/sync:1/threads:1")
    F.ratio("tally_durable_vs_sqlite_full_per_event",
            "durable/sync:1/threads:1", "sqlite/increment/sync:full/batch:1")
    for name in DURABLE_REFERENCE:
        F.ratio(f"durable_increment.{name.split('/', 1)[0][len('BM_Durable'):].lower()}"
                f".{name.split('/', 1)[1].replace(':', '')}_vs_t1", name,
                DURABLE_ONE)
    # The issue-14 targets last: some share a key with a row above and
    # take over its `target` (the issue-4 target stays under `targets`).
    for t in TARGETS_14:
        t.record(F)
    F.ratio("likes.tally_once_vs_sqlite_per_like", "likes/tally/once",
            "likes/sqlite/batch:1")
    F.ratio("likes.tally_once_vs_redis_lua", "likes/tally/once",
            "likes/redis/lua")
    F.ratio("likes.tally_batch_vs_redis_pipelined", "likes/tally/batch:1000",
            "likes/redis/lua_pipelined/depth:1000")
    F.ratio("likes.read_keys50_vs_read_exact50", "likes/read50/read_keys",
            "likes/read50/read_exact")
    F.ratio("likes.feed_page_vs_redis_mget_unpipelined",
            "likes/read50/read_keys", "likes/read50/redis_mget/depth:1")
    for t in TARGETS_15:
        t.record(F)
