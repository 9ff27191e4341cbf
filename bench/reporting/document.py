"""docs/benchmarks.md: the template bench/report/benchmarks.md.in with its
{{...}} placeholders filled in from the run.
"""

import os
import re
import subprocess
import sys

from reporting.figures import file_round, num, rate, us, xr
from reporting.plots import plots
from reporting.tables import (builds_table, durable14_table, durable_table,
                              idempotent_table, likes_table, plain_table,
                              readers_table, reads_table, recovery_table,
                              space_table, spread_summary, strategies_tables,
                              table, targets14_table, targets15_table,
                              targets_table, verdict_sentence)


# bench/, which holds the template folder and summarize.py.
BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEMPLATE_DIR = os.path.join(BENCH, "report")


def issue2_section(results_dir, mode):
    path = os.path.join(results_dir, "tally_bench.json")
    if mode != "full" or not os.path.exists(path):
        return ("*Not in this run (`quick` mode runs only the `tally_bench` "
                "pairs of the issue-14 targets): `./scripts/dev bench full` "
                "runs every `BM_Raw*`/`BM_Increment*` benchmark and puts "
                "the issue-2 tables here. Figures of earlier runs are in the "
                "history section below, dated.*")
    out = subprocess.run([sys.executable, os.path.join(BENCH, "summarize.py"), path],
                         capture_output=True, text=True, check=False)
    return out.stdout if out.returncode == 0 else f"summarize.py failed: {out.stderr}"


def fill(text, F, values):
    def include(m):
        with open(os.path.join(TEMPLATE_DIR, m.group(1))) as f:
            return fill(f.read(), F, values)

    def fig(m):
        name, field = m.group(1), m.group(2) or "ops_per_s"
        v = F.get(name, field)
        if field == "ops_per_s":
            return rate(v)
        return us(v) if field.endswith("_us") else num(v)

    def ratio(m):
        r = F.ratios.get(m.group(1))
        return xr(r["value"]) if r else "n/a"

    def verdict(m):
        return verdict_sentence(F, m.group(2), "issue4" if m.group(1) else None)

    text = re.sub(r"\{\{include:([\w.\-]+)\}\}", include, text)
    text = re.sub(r"\{\{fig:([^}|]+)(?:\|(\w+))?\}\}", fig, text)
    text = re.sub(r"\{\{ratio:([^}]+)\}\}", ratio, text)
    text = re.sub(r"\{\{verdict(4?):([^}]+)\}\}", verdict, text)
    for k, v in values.items():
        text = text.replace("{{" + k + "}}", v)
    return text


def machine_text(machine):
    lines = [f"- {machine.get('cpu', '?')}, {machine.get('nproc', '?')} cores"
             f"{' (a VM)' if machine.get('hypervisor') else ''}, "
             f"{machine.get('mem', '?')} RAM; kernel {machine.get('kernel', '?')}",
             f"- {machine.get('os', '?')}; {machine.get('compiler', '?')}, "
             "Release (-O3); RocksDB "
             f"{machine.get('rocksdb', '?')}, SQLite {machine.get('sqlite', '?')}, "
             f"Redis {machine.get('redis', 'not run')}, google-benchmark "
             f"{machine.get('benchmark', '?')}",
             f"- disk holding $TMPDIR: {machine.get('disk', '?')}; synced 4 KiB "
             f"writes measured at the start of the run (`dd oflag=dsync`): "
             f"{machine.get('dsync_per_s', '?')}/s",
             f"- load average at the start: {machine.get('loadavg_start', '?')}, "
             f"at the end: {machine.get('loadavg_end', '?')}",
             f"- commit: {machine.get('commit', '?')}"]
    return "\n".join(lines)


def builds_text(F, machine):
    """Which RocksDB build each figure ran on (issue 32)."""
    names = {"release": "the release RocksDB (Debian's 7.8.3 source built "
             "in Release by `scripts/build_rocksdb`, linked statically)",
             "system": "Debian's librocksdb (built with assertions, "
             "linked as a shared library)"}
    text = (f"Every tally and raw-RocksDB figure and verdict below ran on "
            f"**{names.get(F.label, F.label)}**")
    if F.other is not None:
        text += (f"; the column \"on the {F.other.label} RocksDB build\" "
                 f"and the table under \"Which RocksDB\" give the same "
                 f"figures on {names.get(F.other.label, F.other.label)}, "
                 "measured in the same run (SQLite and Redis ran once and "
                 "serve both)")
    built = machine.get("rocksdb_release")
    if built:
        text += f". Release RocksDB: {built}"
    return text + "."


def steps_text(machine):
    steps = machine.get("steps", [])
    if not steps:
        return ""
    rows = [[s["name"], f"{s['seconds']:.0f} s", s.get("note", "")] for s in steps]
    total = machine.get("total_seconds")
    if total is not None:
        rows.append(["**whole run** (deps, build, benchmarks; not the report)",
                     f"{total:.0f} s", ""])
    return table(["step", "wall time", ""], rows, ["---", "---:", "---"])


def write(root, results_dir, mode, F, machine, errors):
    """Writes root/docs/benchmarks.md and the plots under root/docs/bench/."""
    made = plots(F, os.path.join(root, "docs", "bench"))
    if isinstance(made, list):
        plot_text = "\n\n".join(f"**{title}** (`docs/bench/{p}`)\n\n"
                                  f"![{title}](bench/{p})\n\n*{caption}*"
                                  for p, title, caption in made)
    else:
        plot_text = made
    skipped = machine.get("skipped", [])
    skipped_text = "\n".join(f"- {s}" for s in skipped) or "- none"
    if errors:
        skipped_text += "\n" + "\n".join(
            f"- benchmark `{n}` FAILED its check: {e}" for n, e in sorted(errors.items()))
    values = {
        "DATE": machine.get("date", "?"),
        "MODE": mode,
        "MACHINE": machine_text(machine),
        "STEPS": steps_text(machine),
        "SKIPPED": skipped_text,
        "TABLE_TARGETS": targets_table(F),
        "ROCKSDB_BUILDS": builds_text(F, machine),
        "TABLE_BUILDS": builds_table(F),
        "PAIRS": str(machine.get("pairs") or max(
            [file_round(fn)[1] for fn in os.listdir(results_dir)
             if fn.endswith(".json")] or [1])),
        "TABLE_TARGETS14": targets14_table(F),
        "TABLE_TARGETS15": targets15_table(F),
        "TABLE_LIKES": likes_table(F),
        "SPREAD": spread_summary(F),
        "TABLE_RECOVERY": recovery_table(F),
        "TABLE_READERS": readers_table(F),
        "TABLE_DURABLE14": durable14_table(F),
        "TABLE_STRATEGIES": strategies_tables(F),
        "TABLE_IDEMPOTENT": idempotent_table(F),
        "TABLE_PLAIN": plain_table(F),
        "TABLE_DURABLE": durable_table(F),
        "TABLE_READS": reads_table(F),
        "TABLE_SPACE": space_table(F),
        "PLOTS": plot_text,
        "ISSUE2": issue2_section(results_dir, mode),
    }
    with open(os.path.join(TEMPLATE_DIR, "benchmarks.md.in")) as f:
        doc = fill(f.read(), F, values)
    with open(os.path.join(root, "docs", "benchmarks.md"), "w") as f:
        f.write(doc)
