"""The Markdown tables of docs/benchmarks.md and the README's table,
from a run's figures and ratios.
"""

import re

from reporting.figures import (BATCHES, LAYOUTS, MERGES, PRODUCERS,
                               READ_SHARDS, RMWS, STRATEGIES, fmtv, num, rate,
                               spread_text, us, xr)
from reporting.ratios import (DURABLE_ONE, DURABLE_REFERENCE, MGET_DEPTH,
                              TARGETS_14, TARGETS_15)


def table(header, rows, align=None):
    align = align or ["---"] + ["---:"] * (len(header) - 1)
    out = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


# The issue-4 target rows, in order: each merge target once per variant.
TARGET_KEYS = [f"{m}_vs_{cell}" for cell in ("txn_rmw.hot.batch1.t2",
                                             "best_rmw.cold1m.batch1.t2")
               for m in MERGES] + [
    "tally_batch_vs_mutex_rmw.hot.batch1000",
    "tally_once_vs_sqlite_normal_per_event",
    "tally_once_vs_redis_lua_best",
    "tally_batch_vs_redis_pipelined_best",
    "hot_read_p99_vs_cold_p50.shards10",
]


def side_text(side):
    """A ratio's side or a bound's figure, formatted by its field."""
    if side is None or side["value"] is None:
        return "no data" if side is None else f"no data (`{side['name']}`)"
    f, v = side["field"], side["value"]
    if f.endswith("_us"):
        t = us(v)
    elif f.endswith("_ms"):
        t = f"{v:,.1f} ms"
    elif f.endswith("_mb"):
        t = f"{v:,.1f} MiB"
    else:
        t = rate(v)
    return f"{t} (`{side['name']}`)"


def target_text(r, issue=None):
    t = r["target"] if issue is None else r["targets"][issue]["target"]
    unit = "x" if r["kind"] == "ratio" else f" {r['unit']}"
    return ("<= " if r["target_is_upper_bound"] else ">= ") + f"{t:g}{unit}"


def verdict_of(r, issue=None):
    """met / not met / no data, from the run's median (and, where fewer than
    3 pairs or samples exist, saying so)."""
    met = r["met"] if issue is None else r["targets"][issue]["met"]
    if r["value"] is None:
        return "no data"
    word = "met" if met else "**not met**"
    if r["kind"] == "ratio" and r["pairs"] < 3:
        word += f" ({r['pairs']} {r['sample_word']}{'s' if r['pairs'] > 1 else ''} only)"
    return word


def value_text(r):
    return fmtv(r["value"], "x" if r["kind"] == "ratio" else f" {r['unit']}")


def other_text(F, key, issue=None):
    """The same target on the run's other RocksDB build: median, spread
    and verdict (bench/run_suite.sh --rocksdb both)."""
    if F.other is None:
        return "not run"
    r = F.other.ratios.get(key)
    if r is None or r["value"] is None:
        return "no data"
    met = r["met"] if issue is None else r["targets"][issue]["met"]
    return f"{value_text(r)} ({spread_text(r)}): {'met' if met else 'not met'}"


def target_row(F, key, issue=None):
    r = F.ratios[key]
    den = "—" if r["kind"] == "bound" else side_text(r["denominator"])
    return [r["what"], side_text(r["numerator"]), den, value_text(r),
            spread_text(r), target_text(r, issue), verdict_of(r, issue),
            other_text(F, key, issue)]


def other_label(F):
    return (F.other.label if F.other is not None else
            "system" if F.label == "release" else "release")


def target_header(F):
    return ["what", "numerator (median)", "denominator (median)",
            "median ratio", "spread", "target", "verdict",
            f"on the {other_label(F)} RocksDB build"]


TARGET_ALIGN = ["---", "---", "---", "---:", "---", "---:", "---", "---"]


def targets14_table(F):
    return table(target_header(F),
                 [target_row(F, t.key) for t in TARGETS_14], TARGET_ALIGN)


def targets15_table(F):
    return table(target_header(F),
                 [target_row(F, t.key) for t in TARGETS_15], TARGET_ALIGN)


# The field a figure is compared by across RocksDB builds: its rate, else
# its first latency or size field in this order.
BUILD_FIELDS = ["ops_per_s", "p50_ms", "open_ms", "refresh_ms", "p50_us",
                "bytes_per_counter", "vmhwm_mb"]


def builds_table(F):
    """Every tally and raw-RocksDB figure of the run on both RocksDB builds
    (the peers' figures are shared and left out)."""
    if F.other is None:
        return ("*This run used one RocksDB build only (`bench/run_suite.sh "
                "--rocksdb release|system`).*")
    rows = []
    for name in sorted(F.other.own):
        mine, theirs = F.f.get(name, {}), F.other.f.get(name, {})
        field = next((k for k in BUILD_FIELDS
                      if mine.get(k) is not None and theirs.get(k)), None)
        if field is None:
            continue
        a, b = mine[field], theirs[field]
        fmt = rate if field == "ops_per_s" else (
            us if field.endswith("_us") else lambda v: f"{v:,.1f}")
        rows.append([f"`{name}`", field, fmt(a), fmt(b), xr(a / b)])
    return table(["figure", "field", f"{F.label} RocksDB",
                  f"{F.other.label} RocksDB",
                  f"{F.label} / {F.other.label}"], rows,
                 ["---", "---", "---:", "---:", "---:"])


def likes_table(F):
    """The likes workload's rows: every side's rate and latency, the
    reference ratios, space, TopKeys, feed-page reads and RSS."""
    sides = [
        ("tally `IncrementOnce`, one call per like", "likes/tally/once"),
        ("tally `Apply`, 1000 likes per batch", "likes/tally/batch:1000"),
        ("SQLite, one transaction per like", "likes/sqlite/batch:1"),
        ("SQLite, 1000 likes per transaction", "likes/sqlite/batch:1000"),
        ("Redis Lua, one call per like", "likes/redis/lua"),
        ("Redis Lua, pipelined 1000 deep",
         "likes/redis/lua_pipelined/depth:1000"),
    ]
    out = [table(LAT_HEADER, [lat_row(F, label, name) for label, name in sides])]
    w = F.f.get("likes/tally/batch:1000", {})
    out.append(
        f"Workload: {num(w.get('posts'))} posts, {num(w.get('distinct_likes'))} "
        f"distinct likes on {num(w.get('posts_liked'))} of them and "
        f"{num(w.get('copies'))} second deliveries per batch-side run (the "
        "other sides replay a prefix of the same stream: fewer deliveries, "
        "the same popularity). ops/s counts deliveries; latency is per call, "
        "transaction, `Apply` or pipelined round. Reference ratios: tally "
        "`IncrementOnce` / SQLite per like "
        f"{xr(F.ratios['likes.tally_once_vs_sqlite_per_like']['value'])}, "
        "tally `IncrementOnce` / Redis Lua per call "
        f"{xr(F.ratios['likes.tally_once_vs_redis_lua']['value'])}, tally "
        "`Apply` / Redis pipelined "
        f"{xr(F.ratios['likes.tally_batch_vs_redis_pipelined']['value'])}.")
    sq = F.f.get("likes/sqlite/batch:1000", {})
    rd = F.f.get("likes/redis/lua_pipelined/depth:1000", {})
    rows = [
        ["tally, whole directory after `tally::Compact`",
         num(w.get("disk_bytes_per_key"), " B"),
         num(w.get("disk_bytes_per_like"), " B")],
        ["tally, live SST files after `tally::Compact`",
         num(w.get("sst_bytes_per_key"), " B"),
         num(w.get("sst_bytes_per_like"), " B")],
        ["SQLite, file after a WAL checkpoint and `VACUUM`",
         num(sq.get("disk_bytes_per_key"), " B"),
         num(sq.get("disk_bytes_per_like"), " B")],
        ["Redis, `used_memory` growth (in memory; `used_memory_rss` "
         f"{num(rd.get('used_memory_rss_mb'), ' MiB')})",
         num(rd.get("memory_bytes_per_key"), " B"),
         num(rd.get("memory_bytes_per_like"), " B")],
    ]
    out.append(table(["space (pair 0 of the batched sides)", "per post",
                      "per like"], rows, ["---", "---:", "---:"]))
    top_r, top_e = "likes/top10/rollup", "likes/top10/exact"
    out.append(
        f"TopKeys(10) on the loaded batch-side database "
        f"({num(F.get(top_r, 'keys'))} keys): from the roll-up p50 "
        f"{us(F.get(top_r, 'p50_us'))} (after a `RollupNow` of "
        f"{num(F.get(top_r, 'rollup_ms'), ' ms')}), exact scan p50 "
        f"{us(F.get(top_e, 'p50_us'))}; both equal the generator's top 10 "
        "(asserted).")
    out.append(feed_table(F))
    rss = [n for n in F.f if re.fullmatch(r"likes/rss/keys:\d+", n)]
    if rss:
        r = F.f[max(rss, key=lambda n: int(n.rsplit(":", 1)[1]))]
        out.append(
            f"RSS after writing {num(r.get('keys'))} distinct keys of one "
            f"keyed counter: VmRSS {num(r.get('vmrss_mb'), ' MiB')}, peak "
            f"(VmHWM) {num(r.get('vmhwm_mb'), ' MiB')}, against the bound "
            f"{num(r.get('rss_bound_mb'), ' MiB')} (block cache + "
            "write_buffer_size x max_write_buffer_number of every column "
            "family + 64 MiB, from the default `Options`).")
    return "\n\n".join(out)


def targets_table(F):
    rows = [target_row(F, key, "issue4" if "targets" in F.ratios[key] else None)
            for key in TARGET_KEYS]
    return table(target_header(F), rows, TARGET_ALIGN)


def readme_table(F):
    rows = []
    for key, issue in ([(t.key, None) for t in TARGETS_15] +
                       [(t.key, None) for t in TARGETS_14] +
                       [(k, "issue4" if "targets" in F.ratios[k] else None)
                        for k in TARGET_KEYS if k not in
                        {t.key for t in TARGETS_14}]):
        r = F.ratios[key]
        rows.append(["15" if key in {t.key for t in TARGETS_15} else
                     "14" if key in {t.key for t in TARGETS_14} else "4",
                     r["what"], value_text(r), spread_text(r),
                     target_text(r, issue), verdict_of(r, issue),
                     other_text(F, key, issue)])
    return table(["issue", "what", "median", "spread", "target", "verdict",
                  f"{other_label(F)} RocksDB"],
                 rows, ["---", "---", "---:", "---", "---:", "---", "---"])


def verdict_sentence(F, key, issue=None):
    """One generated sentence: the verdict of ratio or bound `key` in this
    run, with its median, spread and target."""
    r = F.ratios.get(key)
    if r is None or r["value"] is None:
        return (f"no data in this run for `{key}` (one of its figures is "
                "missing)")
    met = r["met"] if issue is None else r["targets"][issue]["met"]
    if r["pairs"] > 1:
        spread = (f" of {r['pairs']} {r['sample_word']}s "
                  f"({fmtv(r['min'], 'x' if r['kind'] == 'ratio' else ' ' + r['unit'])}"
                  f"..{fmtv(r['max'], 'x' if r['kind'] == 'ratio' else ' ' + r['unit'])})")
    else:
        spread = f" of 1 {r['sample_word']}"
    return (f"{'met' if met else '**not met**'} in this run: median "
            f"{value_text(r)}{spread}, target {target_text(r, issue)}")


def spread_summary(F):
    """How far the pairs of the target ratios spread in this run."""
    keys = [t.key for t in TARGETS_15 + TARGETS_14] + TARGET_KEYS
    widest = []
    for k in dict.fromkeys(keys):
        r = F.ratios.get(k)
        if r and r["kind"] == "ratio" and r["pairs"] >= 2 and r["value"]:
            widest.append(((r["max"] - r["min"]) / r["value"], k, r))
    if not widest:
        return ("No target ratio had two or more pairs in this run, so its "
                "spread is unknown.")
    widest.sort()
    lo, hi = widest[0], widest[-1]
    return (f"In this run the pairs of a target ratio spread over "
            f"{lo[0] * 100:.0f}% (`{lo[1]}`) to {hi[0] * 100:.0f}% "
            f"(`{hi[1]}`: {fmtv(hi[2]['min'], 'x')}..{fmtv(hi[2]['max'], 'x')}) "
            "of their median.")


def strategies_table(F, layout):
    rows = []
    for batch in BATCHES:
        for t in (1, 2):
            row = [f"{batch}", f"{t}"]
            for strat in STRATEGIES:
                n = f"strategy/{strat}/{layout}/batch:{batch}/threads:{t}"
                row.append(f"{rate(F.get(n))} ({us(F.get(n, 'p50_us'))} / "
                           f"{us(F.get(n, 'p99_us'))})")
            for m in MERGES:
                for rmw in RMWS:
                    row.append(xr(F.ratios[f"{m}_vs_{rmw}.{layout}.batch{batch}.t{t}"]["value"]))
            rows.append(row)
    return table(["writes/batch", "threads",
                  "merge (default, 64): inc/s (p50 / p99 per batch)",
                  "blind merge (0)", "mutex RMW", "txn RMW", "merge / mutex",
                  "merge / txn", "blind / mutex", "blind / txn"], rows)


def strategies_tables(F):
    out = []
    titles = {"hot": "One hot key", "shards10": "10 shards (random)",
              "shards100": "100 shards (random)",
              "cold1m": "1,000,000 cold counters (uniform)"}
    for layout in LAYOUTS:
        out.append(f"#### {titles[layout]}\n\n{strategies_table(F, layout)}")
    cold = F.f.get("strategy/merge/cold1m/batch:1/threads:1", {})
    if cold:
        direct = ("on (`use_direct_reads`, "
                  "`use_direct_io_for_flush_and_compaction`: SST reads bypass "
                  "the OS page cache and go to the disk)"
                  if cold.get("direct_io") else
                  "**off**: the filesystem refused O_DIRECT, so SST reads "
                  "came from the OS page cache, not the disk")
        out.append(f"Cold layout: {num(cold.get('data_mb'))} MiB of compacted "
                   f"SST data against a {num(cold.get('cache_mb'))} MiB block "
                   f"cache, for every strategy; direct I/O {direct}. Loading "
                   "and compacting the 1,000,000 counters took "
                   f"{num(cold.get('cold_load_s'), ' s')} (once per run).")
    rows = []
    for batch in BATCHES:
        rows.append([batch] + [xr(F.ratios[f"merge.{l}_vs_hot.batch{batch}.t1"]["value"])
                               for l in LAYOUTS[1:]])
    out.append("Merge, 1 thread, each layout against the hot key (does "
               "sharding help a local merge?):\n\n" +
               table(["writes/batch", "10 shards / hot", "100 shards / hot",
                      "1M cold / hot"], rows))
    return "\n\n".join(out)


def feed_table(F):
    """The feed-page sides (likes/read50/...): keys/s and latency per page
    (per round trip for pipelined Redis), then the reference ratios."""
    pipelined = f"likes/read50/redis_mget/depth:{MGET_DEPTH}"
    sides = [
        ("tally, one `ReadKeys` of the 50 keys", "likes/read50/read_keys"),
        ("tally, 50 `ReadExact`", "likes/read50/read_exact"),
        ("SQLite, one `SELECT ... WHERE post IN (50 ids)`",
         "likes/read50/sqlite_in"),
        ("Redis, one `MGET` of 50 keys per round trip",
         "likes/read50/redis_mget/depth:1"),
        (f"Redis, `MGET` of 50 keys, {MGET_DEPTH} pages per round trip",
         pipelined),
    ]
    rows = [lat_row(F, label, name) for label, name in sides]
    exact = F.ratios["likes.read_keys50_vs_read_exact50"]["value"]
    mget1 = F.ratios["likes.feed_page_vs_redis_mget_unpipelined"]["value"]
    return (table(["feed page of 50 posts", "keys/s", "p50", "p99", "max"],
                  rows) +
            "\n\nLatency is per page (pipelined Redis: per round trip of "
            f"{MGET_DEPTH} pages); every value read is checked against the "
            "generator's count. Reference ratios: one `ReadKeys` / 50 "
            f"`ReadExact` {xr(exact)}, one `ReadKeys` / one unpipelined "
            f"Redis `MGET` {xr(mget1)}.")


def lat_row(F, label, name, extra=()):
    return [label, rate(F.get(name)), us(F.get(name, "p50_us")),
            us(F.get(name, "p99_us")), us(F.get(name, "max_us"))] + list(extra)


LAT_HEADER = ["what", "ops/s", "p50", "p99", "max"]


def idempotent_table(F):
    rows = []
    for dup in (0, 50, 90):
        rows.append(lat_row(F, f"tally `IncrementOnce`, {dup}% duplicates",
                            f"once/dup:{dup}"))
        rows.append(lat_row(F, f"tally `Apply` of 1000 once, {dup}% duplicates",
                            f"once_batch/dup:{dup}/batch:1000"))
        rows.append(lat_row(F, f"SQLite NORMAL, 1 event/txn, {dup}%",
                            f"sqlite/once/sync:normal/dup:{dup}/batch:1"))
        rows.append(lat_row(F, f"SQLite NORMAL, 1000 events/txn, {dup}%",
                            f"sqlite/once/sync:normal/dup:{dup}/batch:1000"))
        for p in ("pinned", "unpinned"):
            rows.append(lat_row(F, f"Redis Lua SET NX + INCRBY, {p}, {dup}%",
                                f"redis/{p}/once_lua/dup:{dup}"))
    rows.append(lat_row(F, "SQLite FULL, 1 event/txn, 0%",
                        "sqlite/once/sync:full/dup:0/batch:1"))
    rows.append(lat_row(F, "SQLite FULL, 1000 events/txn, 0%",
                        "sqlite/once/sync:full/dup:0/batch:1000"))
    rows = [r for r in rows if r[1] != "n/a"]
    ratio_rows = []
    for dup in (0, 50, 90):
        ratio_rows.append([
            f"{dup}%",
            xr(F.ratios[f"tally_once_vs_sqlite_normal_per_event.dup{dup}"]["value"]),
            xr(F.ratios[f"tally_once_batch_vs_sqlite_normal_batch.dup{dup}"]["value"]),
            xr(F.ratios[f"tally_once_vs_redis_lua_best.dup{dup}"]["value"])])
    return (table(LAT_HEADER, rows) + "\n\nLatency is per call (batched rows: "
            "per transaction or `Apply`).\n\n" +
            table(["duplicates", "tally once / SQLite per-event",
                   "tally Apply(1000) / SQLite 1000 per txn",
                   "tally once / Redis Lua (best)"], ratio_rows))


def plain_table(F):
    rows = [lat_row(F, "tally `Increment`", "increment")]
    for n in (100, 1000):
        rows.append(lat_row(F, f"tally `Apply` of {n} plain (4 counters)",
                            f"increment_batch/batch:{n}"))
    for mode in ("normal", "full"):
        for n in (1, 1000):
            rows.append(lat_row(F, f"SQLite {mode.upper()} UPDATE, {n}/txn",
                                f"sqlite/increment/sync:{mode}/batch:{n}"))
    for p in ("pinned", "unpinned"):
        rows.append(lat_row(F, f"Redis INCR one at a time, {p}",
                            f"redis/{p}/incr"))
        for d in (100, 1000):
            rows.append(lat_row(F, f"Redis INCR pipelined {d}, {p}",
                                f"redis/{p}/incr_pipelined/depth:{d}"))
    rows = [r for r in rows if r[1] != "n/a"]
    return table(LAT_HEADER, rows) + (
        "\n\nRedis pinned / unpinned: INCR "
        f"{xr(F.ratios['redis_pinned_vs_unpinned.incr']['value'])}, Lua "
        f"{xr(F.ratios['redis_pinned_vs_unpinned.once_lua']['value'])}.")


def durable_table(F):
    rows = []
    for p in PRODUCERS:
        a, b = f"durable/sync:0/threads:{p}", f"durable/sync:1/threads:{p}"
        rows.append([p, rate(F.get(a)), us(F.get(a, "p50_us")),
                     us(F.get(a, "p99_us")), rate(F.get(b)),
                     us(F.get(b, "p50_us")), us(F.get(b, "p99_us")),
                     xr(F.ratios[f"durable_sync1_vs_sync0.p{p}"]["value"])])
    return table(["producers", "sync=false inc/s", "p50", "p99",
                  "sync=true inc/s", "p50", "p99", "sync / no sync"], rows)


def reads_table(F):
    rows = []
    for shards in READ_SHARDS:
        c, h = f"read/shards:{shards}/hot:0", f"read/shards:{shards}/hot:1"
        rows.append([shards, us(F.get(c, "p50_us")), us(F.get(c, "p99_us")),
                     us(F.get(c, "max_us")), us(F.get(h, "p50_us")),
                     us(F.get(h, "p99_us")), us(F.get(h, "max_us")),
                     xr(F.ratios[f"hot_read_p99_vs_cold_p50.shards{shards}"]["value"]),
                     xr(F.ratios[f"hot_read_p99_vs_cold_p99.shards{shards}"]["value"]),
                     num(F.get(h, "writes_during"))])
    out = table(["shards", "cold p50", "cold p99", "cold max", "hot p50",
                 "hot p99", "hot max", "hot p99 / cold p50",
                 "hot p99 / cold p99", "writes during hot"], rows)
    rc = "read_cached/hot:1"
    if rc in F.f:
        out += ("\n\n`ReadCached` of a 10-shard counter during a write burst "
                f"(roll-ups every {num(F.get(rc, 'interval_ms'))} ms): p50 "
                f"{us(F.get(rc, 'p50_us'))}, p99 {us(F.get(rc, 'p99_us'))}, "
                f"max {us(F.get(rc, 'max_us'))}; largest lag seen "
                f"{num(F.get(rc, 'max_lag_ms'))} ms.")
    return out


def space_table(F):
    m, c = "space/markers", "space/counters"
    rows = [
        ["tally, per marker (events SST, after compaction)",
         num(F.get(m, "bytes_per_marker"), " B"),
         f"{num(F.get(m, 'markers'))} markers, ids `evt-K`"],
        ["tally, per marker (whole directory)",
         num(F.get(m, "disk_bytes_per_marker"), " B"), ""],
        ["tally, per 10-shard counter (SST, after compaction)",
         num(F.get(c, "bytes_per_counter"), " B"),
         f"{num(F.get(c, 'counters'))} counters, 10 increments each"],
        ["tally, per counter (whole directory)",
         num(F.get(c, "disk_bytes_per_counter"), " B"),
         "WAL, MANIFEST, LOG, OPTIONS included"],
        ["SQLite, per event (file after a WAL checkpoint)",
         num(F.get("sqlite/once/sync:normal/dup:0/batch:1000", "bytes_per_event"), " B"),
         "events table + primary-key index"],
        ["Redis, per marker key (used_memory growth)",
         num(F.best([f"redis/{p}/once_lua/dup:0" for p in ("pinned", "unpinned")],
                    "bytes_per_marker")[0], " B"), "in memory"],
    ]
    out = table(["what", "bytes", "setup"], rows, ["---", "---:", "---"])
    out += (f"\n\nPeak RSS of the space benchmark process: "
            f"{num(F.get(m, 'peak_rss_mb'), ' MiB')} while writing "
            f"{num(F.get(m, 'markers'))} markers, "
            f"{num(F.get(c, 'peak_rss_mb'), ' MiB')} with "
            f"{num(F.get(c, 'counters'))} counters (default options: 32 MiB "
            "block cache, 16 MiB memtables). `CreateCounter` took "
            f"{us(F.get(c, 'create_us'))} each.")
    return out


def arg_sizes(F, prefix):
    """The n of every figure named PREFIX<n>, ascending."""
    return sorted({int(m.group(1)) for n in F.f
                   for m in [re.fullmatch(re.escape(prefix) + r"(\d+)", n)] if m})


RECOVERY = [("BM_OpenAfterClose/", "`Db::Open` after a clean close"),
            ("BM_OpenAfterKill/", "`Db::Open` after SIGKILL"),
            ("BM_ReadOnlyOpenAfterClose/", "read-only open after a clean close"),
            ("BM_ReadOnlyOpenAfterKill/", "read-only open after SIGKILL")]


def recovery_table(F):
    sizes = sorted(set().union(*(arg_sizes(F, p) for p, _ in RECOVERY)))
    if not sizes:
        return ("*No data: `tally_recovery_bench` was not built or not run "
                "(see Skipped above).*")
    rows = []
    for n in sizes:
        row = [f"{n:,}"]
        for prefix, _ in RECOVERY:
            name = f"{prefix}{n}"
            row.append("n/a" if F.get(name, "open_ms") is None else
                       f"{F.get(name, 'open_ms'):,.1f} ms (WAL "
                       f"{num((F.get(name, 'wal_bytes') or 0) / 2**20, ' MiB')})")
        rows.append(row)
    return table(["history (n)"] + [w for _, w in RECOVERY], rows)


def readers_table(F):
    names = sorted(n for n in F.f if n.startswith("BM_CounterctlRead/"))
    out = []
    if names:
        rows = [[f"`{n}`", num(F.get(n, "p50_ms"), " ms"),
                 num(F.get(n, "p95_ms"), " ms"), num(F.get(n, "max_ms"), " ms"),
                 num(F.get(n, "samples"))] for n in names]
        out.append(table(["command / setting", "p50", "p95", "max", "samples"],
                         rows))
    refresh = sorted(n for n in F.f if n.startswith("BM_Refresh/"))
    if refresh:
        out.append(table(["long-lived reader", "catch-up time"],
                         [[f"`{n}`", num(F.get(n, "refresh_ms"), " ms")]
                          for n in refresh]))
    return "\n\n".join(out) or ("*No data: `tally_reader_bench` was not built "
                                "or not run (see Skipped above).*")


def durable14_table(F):
    names = [DURABLE_ONE, "BM_DurableIncrement/producers:64"] + DURABLE_REFERENCE
    if not any(n in F.f for n in names):
        return ("*No data: the `BM_Durable*` benchmarks were not in this "
                "run (see Skipped above).*")
    rows = []
    for n in names:
        key = next((k for k, r in F.ratios.items() if r["kind"] == "ratio"
                    and r["numerator"]["name"] == n
                    and r["denominator"]["name"] == DURABLE_ONE), None)
        rows.append([f"`{n}`", rate(F.get(n)), us(F.get(n, "p50_us")),
                     us(F.get(n, "p99_us")),
                     value_text(F.ratios[key]) if key else "1.00x",
                     fmtv(F.get(n, "group_avg"), ""),
                     num(F.get(n, "group_largest"))])
    return table(["benchmark", "inc/s (median)", "p50", "p99",
                  "vs 1 thread (median of pairs)",
                  "commits per synced group (median)", "largest group"],
                 rows)
