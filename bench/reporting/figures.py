"""One suite run read back: the google-benchmark JSON files of a run
(load_results), each row under its stable name (figure_name), the
medians and pairs of a figure (Figures), and how figures are written
(rate, us, num, xr).
"""

import json
import os
import re
import statistics


# Benchmark families whose stable name carries the thread count.
THREADED = ("strategy/", "durable/")


# Fields of google-benchmark's JSON that are not counters.
STANDARD = {
    "name", "family_index", "per_family_instance_index", "run_name",
    "run_type", "repetitions", "repetition_index", "threads", "iterations",
    "real_time", "cpu_time", "time_unit", "items_per_second",
    "error_occurred", "error_message", "aggregate_name", "aggregate_unit",
    "bytes_per_second", "label",
}


STRATEGIES = ["merge", "merge_blind", "mutex_rmw", "txn_rmw"]


# The two merge variants of strategies_bench: tally's default bound on
# pending operands (max_pending_operands = max_successive_merges = 16) and
# none (0: a blind write).
MERGES = {"merge": "merge, tally default (max_pending_operands=16)",
          "merge_blind": "blind merge (max_pending_operands=0)"}


RMWS = ("mutex_rmw", "txn_rmw")


LAYOUTS = ["hot", "shards10", "shards100", "cold1m"]


BATCHES = [1, 10, 100, 1000]


PRODUCERS = [1, 2, 4, 8, 16, 32, 64]


READ_SHARDS = [1, 10, 100, 1000]


def figure_name(b):
    """The stable name of one benchmark result. A `/pair:K` suffix (a
    benchmark that alternates its two sides within one run, K = 0, 1, ...)
    is not part of the name: K orders the samples (pair_index)."""
    name = re.sub(r"/(iterations:\d+|real_time|manual_time|process_time|"
                  r"pair:\d+)", "", b["name"])
    if name.startswith("BM_Durable"):
        # Its `producers:N` already names the thread count.
        name = re.sub(r"/threads:\d+", "", name)
    elif name.startswith(THREADED):
        name = re.sub(r"/threads:\d+", "", name)
        name += f"/threads:{b.get('threads', 1)}"
    return name


def pair_index(b):
    """The sample's place within its round: K of a `/pair:K` name, else
    google-benchmark's repetition index."""
    m = re.search(r"/pair:(\d+)", b["name"])
    return int(m.group(1)) if m else b.get("repetition_index", 0)


def file_round(fn):
    """(step name, round) of a results file: NAME.json is round 1 and
    NAME.rR.json round R (bench/run_suite.sh's pair rounds)."""
    m = re.fullmatch(r"(.+?)(?:\.r(\d+))?\.json", fn)
    return m.group(1), int(m.group(2) or 1)


def result_files(results_dir, overlay_dir=None):
    """{file name: path} of a run's google-benchmark files; a file of the
    same name in `overlay_dir` (the other RocksDB build's folder) replaces
    the one in `results_dir`, so the peers' files serve both builds."""
    files = {}
    for d in (results_dir, overlay_dir):
        if d is None:
            continue
        for fn in os.listdir(d):
            if fn.endswith(".json") and fn != "machine.json":
                files[fn] = os.path.join(d, fn)
    return files


def load_results(results_dir, overlay_dir=None):
    """Every benchmark's samples, in run order (round, then repetition),
    and its figure: the median of each field over its samples."""
    samples, errors = {}, {}
    for fn, path in sorted(result_files(results_dir, overlay_dir).items()):
        step, rnd = file_round(fn)
        with open(path) as f:
            data = json.load(f)
        for b in data.get("benchmarks", []):
            if b.get("run_type", "iteration") != "iteration":
                continue
            name = figure_name(b)
            if b.get("error_occurred"):
                errors[name] = b.get("error_message", "error")
                continue
            fig = {"ops_per_s": b.get("items_per_second"),
                   "seconds": b["real_time"] * b["iterations"] / 1e9
                   if b.get("time_unit") == "ns" else None}
            for k, v in b.items():
                if k not in STANDARD and isinstance(v, (int, float)):
                    fig[k] = v
            key = (rnd, pair_index(b))
            samples.setdefault(name, []).append((key, step, fig))
    figures, ordered = {}, {}
    for name, got in samples.items():
        got.sort(key=lambda g: g[0])
        ordered[name] = [fig for _, _, fig in got]
        fields = {k for fig in ordered[name] for k in fig}
        fig = {}
        for k in sorted(fields):
            vals = [f[k] for f in ordered[name] if f.get(k) is not None]
            fig[k] = statistics.median(vals) if vals else None
        fig["n_samples"] = len(ordered[name])
        fig["source"] = got[0][1]
        figures[name] = fig
    return figures, ordered, errors


class Best:
    """A side of a ratio that is, pair by pair, the largest value among
    several figures (e.g. Redis pinned or unpinned, whichever was faster
    in that round): the stricter denominator."""

    def __init__(self, names, label=None):
        self.names = list(names)
        self.label = label or " or ".join(self.names)


class Worst(Best):
    """A bound's side: pair by pair the largest value among the figures whose
    names match `pattern` (e.g. the slowest counterctl read command)."""

    def __init__(self, pattern, label=None):
        super().__init__([], label or pattern)
        self.pattern = pattern


class Largest:
    """The figure among NAME/<n> with the largest n (e.g. the longest
    history a recovery benchmark ran)."""

    def __init__(self, prefix):
        self.prefix = prefix


def median_of(values):
    """The median of the values that exist, or None."""
    got = [v for v in values if v is not None]
    return statistics.median(got) if got else None


def spread_text(r):
    if r["value"] is None:
        return "no data"
    unit = "x" if r["kind"] == "ratio" else f" {r['unit']}"
    if r["pairs"] == 1:
        return f"1 {r['sample_word']} only"
    return (f"{fmtv(r['min'], unit)}..{fmtv(r['max'], unit)} "
            f"({r['pairs']} {r['sample_word']}s)")


def fmtv(v, unit):
    if v is None:
        return "n/a"
    if unit == "x":
        return f"{v:.2f}x"
    return (f"{v:,.0f}" if abs(v) >= 100 else f"{v:.1f}") + unit


class Figures:
    """Figures and ratios of one run, with formatting helpers."""

    def __init__(self, figures, samples, errors, label="release"):
        self.f = figures
        self.samples = samples
        self.errors = errors
        self.ratios = {}
        # Which RocksDB build ran the tally and raw-RocksDB figures, and
        # the other build's Figures when the run had both (its column).
        self.label = label
        self.other = None

    def get(self, name, field="ops_per_s"):
        fig = self.f.get(name)
        return None if fig is None else fig.get(field)

    def series(self, name, field):
        """The values of `field` of each sample of `name`, in run order."""
        return [fig.get(field) for fig in self.samples.get(name, [])]

    def best(self, names, field="ops_per_s"):
        """(value, name) of the largest figure among `names` that exist."""
        got = [(self.get(n, field), n) for n in names if self.get(n, field)]
        return max(got) if got else (None, None)

    def resolve(self, side, field):
        """(label, values in run order) of one side of a ratio or bound."""
        if isinstance(side, Largest):
            cands = [(int(m.group(1)), n) for n in self.f
                     for m in [re.fullmatch(re.escape(side.prefix) + r"(\d+)", n)]
                     if m]
            if not cands:
                return side.prefix + "<n>", []
            name = max(cands)[1]
            return name, self.series(name, field)
        if isinstance(side, Best):
            names = side.names
            if isinstance(side, Worst):
                names = sorted(n for n in self.f if re.search(side.pattern, n))
            cols = [self.series(n, field) for n in names]
            cols = [c for c in cols if c]
            if not cols:
                return side.label, []
            n = min(len(c) for c in cols)
            vals = []
            for i in range(n):
                got = [c[i] for c in cols if c[i] is not None]
                vals.append(max(got) if got else None)
            label = side.label if len(names) != 1 else names[0]
            return label, vals
        return side, self.series(side, field)

    def record(self, key, kind, what, num_label, num_field, num_vals,
               den_label=None, den_field=None, den_vals=None, target=None,
               upper=False, unit="x", targets=None):
        if kind == "ratio":
            n = min(len(num_vals), len(den_vals))
            vals = [a / b for a, b in zip(num_vals[:n], den_vals[:n])
                    if a and b]
        else:
            vals = [v for v in num_vals if v is not None]
        value = statistics.median(vals) if vals else None
        targets = dict(targets or {})

        def verdict(t):
            if t is None or value is None:
                return None
            return value <= t if upper else value >= t
        met = verdict(target)
        for k in targets:
            targets[k] = {"target": targets[k], "met": verdict(targets[k])}
        self.ratios[key] = {
            "kind": kind, "value": value, "pairs": len(vals),
            "min": min(vals) if vals else None,
            "max": max(vals) if vals else None,
            "pair_values": vals, "target": target, "met": met, "what": what,
            "unit": unit,
            "sample_word": "pair" if kind == "ratio" else "run",
            "numerator": {"name": num_label, "field": num_field,
                          "value": median_of(num_vals)},
            "denominator": None if kind != "ratio" else {
                "name": den_label, "field": den_field,
                "value": median_of(den_vals)},
            "target_is_upper_bound": upper,
        }
        if targets:
            self.ratios[key]["targets"] = targets
        return value

    def ratio(self, key, num, den, target=None, what="", lower_is_better=False,
              num_field="ops_per_s", den_field="ops_per_s", targets=None):
        """Records ratio `key` = num/den, pair by pair (sample i of the
        numerator over sample i of the denominator: both from round i of the
        run); its value is the median of the pairs' ratios. `num` and `den`
        are figure names, Best or Largest."""
        nl, nv = self.resolve(num, num_field)
        dl, dv = self.resolve(den, den_field)
        return self.record(key, "ratio", what, nl, num_field, nv, dl,
                           den_field, dv, target, lower_is_better,
                           targets=targets)

    def bound(self, key, side, field, limit, unit, what=""):
        """Records bound `key`: the median over the samples of `side`'s
        `field` must be at most `limit` (a figure, not a ratio)."""
        label, vals = self.resolve(side, field)
        return self.record(key, "bound", what, label, field, vals,
                           target=limit, upper=True, unit=unit)


def rate(v):
    if v is None:
        return "n/a"
    if v >= 1e6:
        return f"{v / 1e6:.2f}M/s"
    if v >= 1e3:
        return f"{v / 1e3:.1f}k/s"
    return f"{v:.0f}/s"


def us(v):
    if v is None:
        return "n/a"
    if v >= 1000:
        return f"{v / 1000:.2f} ms"
    return f"{v:.1f} µs" if v >= 10 else f"{v:.2f} µs"


def num(v, unit=""):
    if v is None:
        return "n/a"
    return (f"{v:,.0f}" if abs(v) >= 100 else f"{v:.1f}") + unit


def xr(v):
    return "n/a" if v is None else f"{v:.2f}x"


def redis_lua(dup):
    """Redis's Lua SET NX + INCRBY, pinned or unpinned, whichever was faster
    in each round: pinning client and server to one core helped Redis in
    some runs and hurt it in others on the 2-core VM, so choosing one in
    advance would flatter tally in half the runs."""
    return Best([f"redis/{p}/once_lua/dup:{dup}" for p in ("pinned", "unpinned")],
                f"redis/{{pinned,unpinned}}/once_lua/dup:{dup} (faster per round)")
