#!/usr/bin/env python3
"""Turns tally_bench JSON output into the Markdown tables of
docs/benchmarks.md: items/s per benchmark and the issue-2 ratios, one column
per run, so that every figure in the doc comes from a file a run wrote.

Usage: bench/summarize.py RUN1.json [RUN2.json ...]

A ratio is always taken within one run (one JSON file): runs on this shared
machine drift by more than the engine's overhead, ratios drift less. With
--benchmark_repetitions the median of the repetitions is used.
"""

import json
import statistics
import sys

# Row order of the items/s table: the pairs side by side, as registered.
ORDER = [
    "BM_RawMerge", "BM_Increment", "BM_RawOnce", "BM_IncrementOnce",
    "BM_RawOnce_Dup50", "BM_IncrementOnce_Dup50", "BM_RawMergeBatch/1000",
    "BM_IncrementBatch/100", "BM_IncrementBatch/1000",
    "BM_IncrementOnceBatch/100", "BM_IncrementOnceBatch/1000",
]

# (numerator, denominator, target or None, what it answers)
RATIOS = [
    ("BM_Increment", "BM_RawMerge", 0.9, "Increment vs raw merge"),
    ("BM_IncrementOnce", "BM_RawOnce", 0.85, "IncrementOnce vs raw marker recipe"),
    ("BM_IncrementOnce_Dup50", "BM_RawOnce_Dup50", None,
     "IncrementOnce vs raw, 50% duplicates"),
    ("BM_IncrementBatch/100", "BM_Increment", 8.0, "Apply(100 plain) vs Increment"),
    ("BM_IncrementBatch/1000", "BM_Increment", 8.0,
     "Apply(1000 plain) vs Increment"),
    ("BM_IncrementBatch/1000", "BM_RawMergeBatch/1000", None,
     "Apply(1000 plain) vs raw 1000-merge WriteBatch"),
    ("BM_IncrementOnceBatch/100", "BM_IncrementOnce", 1.3,
     "Apply(100 once) vs IncrementOnce"),
    ("BM_IncrementOnceBatch/1000", "BM_IncrementOnce", 1.3,
     "Apply(1000 once) vs IncrementOnce"),
]


def load(path):
    """Returns ({benchmark name: [items/s of each repetition]}, context)."""
    with open(path) as f:
        data = json.load(f)
    samples = {}
    for b in data["benchmarks"]:
        if b.get("run_type", "iteration") != "iteration" or b.get("error_occurred"):
            continue
        name = b["name"].replace("/real_time", "")
        samples.setdefault(name, []).append(b["items_per_second"])
    return samples, data["context"]


def fmt(v):
    return f"{v / 1e3:,.0f}k" if v < 1e6 else f"{v / 1e6:,.2f}M"


def main(paths):
    loaded = [load(p) for p in paths]
    runs = [({k: statistics.median(v) for k, v in samples.items()}, ctx)
            for samples, ctx in loaded]
    names = [n for n in ORDER if any(n in r for r, _ in runs)]
    for rates, _ in runs:
        names += sorted(n for n in rates if n not in names)
    cols = " | ".join(f"run {i + 1}" for i in range(len(runs)))
    print("items/s: median of the repetitions (min-max of the repetitions); "
          "'runs differ by' compares the run medians.")
    print()
    print(f"| benchmark | {cols} | runs differ by |")
    print("|---|" + "---:|" * (len(runs) + 1))
    for n in names:
        cells = []
        for samples, _ in loaded:
            v = samples.get(n)
            if not v:
                cells.append("n/a")
            elif len(v) == 1:
                cells.append(fmt(v[0]))
            else:
                cells.append(f"{fmt(statistics.median(v))} "
                             f"({fmt(min(v))}-{fmt(max(v))})")
        got = [r[n] for r, _ in runs if n in r]
        spread = (f"{(max(got) - min(got)) / min(got) * 100:.0f}%"
                  if len(got) > 1 else "")
        print(f"| `{n}` | {' | '.join(cells)} | {spread} |")
    print()
    print(f"| ratio | target | {cols} | verdict |")
    print("|---|---:|" + "---:|" * len(runs) + "---|")
    for num, den, target, what in RATIOS:
        ratios = []
        for rates, _ in runs:
            if num in rates and den in rates:
                ratios.append(rates[num] / rates[den])
            else:
                ratios.append(None)
        cells = " | ".join(f"{r:.2f}x" if r is not None else "n/a" for r in ratios)
        got = [r for r in ratios if r is not None]
        if target is None or not got:
            verdict = "reference" if target is None else "n/a"
        elif all(r >= target for r in got):
            verdict = "met"
        elif any(r >= target for r in got):
            verdict = "met in some runs"
        else:
            verdict = "NOT met"
        tgt = f">= {target:g}x" if target is not None else "-"
        print(f"| {what}: `{num}` / `{den}` | {tgt} | {cells} | {verdict} |")
    print()
    for i, (_, ctx) in enumerate(runs):
        print(f"- run {i + 1}: {ctx.get('date', '?')}, "
              f"{ctx.get('num_cpus', '?')} CPUs @ {ctx.get('mhz_per_cpu', '?')} MHz, "
              f"load avg {ctx.get('load_avg', '?')}, "
              f"tally {ctx.get('tally_version', '?')}, "
              f"RocksDB {ctx.get('rocksdb_version', '?')}, "
              f"libbenchmark built as {ctx.get('library_build_type', '?')}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
