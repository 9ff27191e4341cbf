#!/usr/bin/env python3
"""Turns one suite run (bench/run_suite.sh) into docs/benchmarks.md,
docs/bench/results.json, the PNG plots under docs/bench/ and the README's
benchmark table.

Usage: bench/report.py --results DIR [--mode quick|full] [--root REPO]

DIR holds the google-benchmark JSON files of the run (*.json, pair rounds
as *.rR.json) and machine.json (written by run_suite.sh: machine, date,
step times). Every figure and ratio gets a stable name (see
figure_name); the doc is bench/report/benchmarks.md.in with its
{{...}} placeholders filled in; hand-written text lives in
bench/report/*.md, which the template includes, so regenerating never
loses it. Inline placeholders usable in those files:
  {{fig:NAME|FIELD}}  a figure (FIELD: ops_per_s, p50_us, p99_us, max_us or
                      any counter), formatted
  {{ratio:NAME}}      a ratio, e.g. 2.3x
  {{verdict:NAME}}    the verdict sentence of a target ratio or bound:
                      met / not met, median, spread of the pairs, target
  {{verdict4:NAME}}   the same against its issue-4 target (ratios whose
                      target issue 14 raised)
No verdict and no figure is written by hand: every one comes from the run.

The parts live in bench/reporting/, one module per concern: figures (the
run read back), ratios (the targets judged), tables, plots, document
(docs/benchmarks.md), results_json (docs/bench/results.json) and readme
(the README's table). This file only runs them in order.

Pairs: bench/run_suite.sh runs every target's two sides in PAIRS rounds
(NAME.json is round 1, NAME.rR.json round R); a figure's samples are its
rows in run order (round, then repetition_index), sample i of a ratio's
numerator is paired with sample i of its denominator, and the ratio's value
is the median of the pairs' ratios, with their min and max
(docs/bench/results.json: ratios.NAME.value, .pairs, .min, .max, .pair_values).
A figure (figures.NAME) is the median of each field over its samples.
"""

import argparse
import json
import os
import sys

from reporting import document, readme, results_json
from reporting.figures import Figures, load_results, spread_text
from reporting.ratios import compute_ratios
from reporting.tables import target_text, value_text


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--results", required=True)
    ap.add_argument("--mode", default="quick")
    ap.add_argument("--root", default=os.path.dirname(document.BENCH))
    args = ap.parse_args()
    root = args.root
    figures, samples, errors = load_results(args.results)
    machine = {}
    mpath = os.path.join(args.results, "machine.json")
    if os.path.exists(mpath):
        with open(mpath) as f:
            machine = json.load(f)
    builds = machine.get("rocksdb_builds") or ["system"]
    F = Figures(figures, samples, errors, builds[0])
    compute_ratios(F)
    # The other RocksDB build (bench/run_suite.sh --rocksdb both): its own
    # figures overlaid on the shared peer figures, its ratios beside.
    for label in builds[1:]:
        other = os.path.join(args.results, label)
        if os.path.isdir(other):
            F.other = Figures(*load_results(args.results, other), label)
            F.other.own = set(load_results(other)[0])
            compute_ratios(F.other)
    document.write(root, args.results, args.mode, F, machine, errors)
    results_json.write(root, args.mode, machine, figures, F, errors)
    readme.write(root, machine, args.mode, F)
    missing = [k for k, r in F.ratios.items() if r["target"] and r["met"] is None]
    print(f"report: {len(figures)} figures, {len(F.ratios)} ratios, "
          f"{len(errors)} failed, targets without data: {missing or 'none'}")
    for key, r in F.ratios.items():
        if r["target"]:
            also = ""
            if F.other is not None and key in F.other.ratios:
                also = (f"; {F.other.label} RocksDB "
                        f"{value_text(F.other.ratios[key])}")
            print(f"  {key}: {value_text(r)} ({spread_text(r)}; target "
                  f"{target_text(r)}): "
                  f"{ {True: 'met', False: 'NOT met', None: 'no data'}[r['met']] }"
                  f"{also}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
