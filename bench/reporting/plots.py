"""The PNG plots under docs/bench/ (matplotlib; a run without it gets a
sentence instead).
"""

import os
import re

from reporting.figures import (BATCHES, LAYOUTS, PRODUCERS, READ_SHARDS,
                               STRATEGIES)
from reporting.ratios import TARGETS_14, TARGETS_15
from reporting.tables import RECOVERY, TARGET_KEYS, arg_sizes


def plots(F, out_dir):
    """Writes the PNGs; returns [(file, title, caption)] or a sentence
    saying why there are none."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
    except ImportError:
        return "Plots skipped: python3-matplotlib is not installed."
    os.makedirs(out_dir, exist_ok=True)
    made = []

    def si(v, _pos=None):
        if v >= 1e6:
            return f"{v / 1e6:g}M"
        if v >= 1e3:
            return f"{v / 1e3:g}k"
        return f"{v:g}"

    def log_axis(axis):
        """Log scale with labels at 1, 2 and 5 of every decade, so that even
        a range narrower than a decade has several labelled ticks."""
        axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        axis.set_major_formatter(FuncFormatter(si))
        axis.set_minor_formatter(NullFormatter())

    def save(fig, file_name, title, caption, rect=(0, 0, 1, 1)):
        fig.tight_layout(rect=rect)
        fig.savefig(os.path.join(out_dir, file_name), dpi=90)
        plt.close(fig)
        made.append((file_name, title, caption))

    names = {"merge": "merge (tally default: bound 64)",
             "merge_blind": "blind merge (bound 0)",
             "mutex_rmw": "read-modify-write, striped mutexes",
             "txn_rmw": "read-modify-write, TransactionDB"}
    titles = {"hot": "one hot key", "shards10": "10 random shards",
              "shards100": "100 random shards",
              "cold1m": "1M cold counters (direct I/O)"}
    if any(F.get(f"strategy/{s_}/{l}/batch:{b}/threads:{t}")
           for s_ in STRATEGIES for l in LAYOUTS for b in BATCHES for t in (1, 2)):
        fig, axes = plt.subplots(1, 4, figsize=(17, 5.4), sharey=True)
        for ax, layout in zip(axes, LAYOUTS):
            for strat, color in zip(STRATEGIES, ("C0", "C4", "C1", "C2")):
                for t, style in ((1, "-"), (2, "--")):
                    ys = [F.get(f"strategy/{strat}/{layout}/batch:{b}/threads:{t}")
                          for b in BATCHES]
                    if any(ys):
                        ax.plot(BATCHES, ys, style, color=color, marker="o",
                                label=f"{names[strat]}, {t} thread{'s' if t > 1 else ''}")
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xticks(BATCHES)
            ax.xaxis.set_major_formatter(FuncFormatter(si))
            ax.xaxis.set_minor_formatter(NullFormatter())
            log_axis(ax.yaxis)
            ax.set_title(titles[layout])
            ax.set_xlabel("increments per WriteBatch")
            ax.grid(True, which="both", alpha=0.3)
        axes[0].set_ylabel("increments per second (log)")
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=8,
                   frameon=False)
        fig.suptitle("Raw RocksDB increment strategies: throughput against "
                     "batch size, per key layout")
        save(fig, "strategies_batch.png", "Increment strategies by batch size",
             "Where a merge line (blue, purple) runs above the read-modify-"
             "write lines (orange, green), merging wins; compare the panels "
             "for the effect of the key layout.", rect=(0, 0.12, 1, 1))

    def line_plot(file_name, title, xlabel, ylabel, xs, draw, caption):
        fig, ax = plt.subplots(figsize=(7.5, 4.6))
        if not draw(ax):
            plt.close(fig)
            return
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(xs)
        ax.xaxis.set_major_formatter(FuncFormatter(si))
        ax.xaxis.set_minor_formatter(NullFormatter())
        log_axis(ax.yaxis)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=9)
        save(fig, file_name, title, caption)

    def durable(ax):
        drawn = False
        for sync in (0, 1):
            ys = [F.get(f"durable/sync:{sync}/threads:{p}") for p in PRODUCERS]
            if any(ys):
                ax.plot(PRODUCERS, ys, marker="o",
                        label="sync=true (acknowledged after fsync)" if sync
                        else "sync=false (WAL written, not synced)")
                drawn = True
        return drawn

    def reads(ax):
        drawn = False
        for hot, label in ((0, "no writer"), (1, "during a write burst")):
            for field, style, what in (("p50_us", "-", "p50"),
                                       ("p99_us", "--", "p99")):
                ys = [F.get(f"read/shards:{s_}/hot:{hot}", field)
                      for s_ in READ_SHARDS]
                if any(ys):
                    ax.plot(READ_SHARDS, ys, style, marker="o",
                            color="C0" if hot == 0 else "C3",
                            label=f"{what}, {label}")
                    drawn = True
        return drawn

    def recovery(ax):
        drawn = False
        for (prefix, what), color in zip(RECOVERY, ("C0", "C3", "C2", "C1")):
            xs = arg_sizes(F, prefix)
            ys = [F.get(f"{prefix}{n}", "open_ms") for n in xs]
            if any(ys):
                ax.plot(xs, ys, marker="o", color=color,
                        label=what.replace("`", ""))
                drawn = True
        if drawn:
            ax.axhline(100, color="grey", linestyle=":",
                       label="target for a read-only open: 100 ms")
        return drawn

    line_plot("durable_producers.png",
              "tally Increment on one 10-shard counter: throughput against "
              "producer threads", "producer threads", "increments per second (log)",
              PRODUCERS, durable,
              "How far the sync=true line climbs from 1 to 64 threads is what "
              "group commit buys; the sync=false line is the ceiling without "
              "fsync.")
    line_plot("read_latency_shards.png",
              "ReadExact latency against shard count",
              "shards of the counter", "latency per read (µs, log)",
              READ_SHARDS, reads,
              "The gap between the red (write burst) and blue (no writer) "
              "lines of the same style is what a concurrent writer costs a "
              "read.")
    sizes = sorted(set().union(*(arg_sizes(F, p) for p, _ in RECOVERY)))
    if sizes:
        line_plot("recovery_open.png",
                  "Open time against history (increments written before "
                  "the close or kill)", "increments written", "open time (ms, log)",
                  sizes, recovery,
                  "Flat lines mean the open does not replay the history; "
                  "the read-only after-close line must stay under the dotted "
                  "100 ms target.")

    rows = [F.ratios[k] for k in dict.fromkeys([t.key for t in TARGETS_15 + TARGETS_14] +
                                               TARGET_KEYS)
            if F.ratios[k]["kind"] == "ratio" and F.ratios[k]["pair_values"]]
    if rows:
        import textwrap
        from matplotlib.lines import Line2D
        fig, ax = plt.subplots(figsize=(11, 0.55 * len(rows) + 2.2))
        for i, r in enumerate(rows):
            y = len(rows) - 1 - i
            ax.scatter(r["pair_values"], [y] * len(r["pair_values"]),
                       color="C2" if r["met"] else "C3", zorder=3, s=24)
            ax.scatter([r["value"]], [y], marker="|", s=300, color="black",
                       zorder=4)
            if r["target"] is not None:
                ax.scatter([r["target"]], [y], marker="^", s=70,
                           facecolors="none", edgecolors="grey", zorder=2)
        ax.set_yticks(range(len(rows)))
        ax.set_yticklabels(["\n".join(textwrap.wrap(re.sub(r"[`*]", "", r["what"]), 48))
                            for r in reversed(rows)], fontsize=7)
        ax.set_ylim(-0.6, len(rows) - 0.4)
        ax.set_xscale("log")
        log_axis(ax.xaxis)
        ax.set_xlabel("ratio, numerator / denominator (log scale)")
        ax.set_title("Target ratios of this run, pair by pair")
        ax.grid(True, axis="x", which="both", alpha=0.3)
        fig.legend(handles=[
            Line2D([], [], marker="o", color="C2", linestyle="", label="a pair (median meets the target)"),
            Line2D([], [], marker="o", color="C3", linestyle="", label="a pair (median misses the target)"),
            Line2D([], [], marker="|", color="black", linestyle="", markersize=14, label="median of the pairs"),
            Line2D([], [], marker="^", color="grey", markerfacecolor="none", linestyle="", label="target"),
        ], fontsize=8, loc="lower center", ncol=4, frameon=False)
        save(fig, "target_ratios.png", "Target ratios, pair by pair",
             "A row whose dots fall on both sides of its triangle is not "
             "decided by this run; a tight cluster far from it is.",
             rect=(0, 0.6 / (0.55 * len(rows) + 2.2), 1, 1))
    return made
