"""docs/bench/results.json: every figure and ratio of a run under its stable
name, for tools (figures.NAME.ops_per_s; ratios.NAME.value and its pairs).
"""

import json
import os


def write(root, mode, machine, figures, F, errors):
    summary = {
        "schema": 1,
        "mode": mode,
        "machine": {k: v for k, v in machine.items() if k != "steps"},
        "steps": machine.get("steps", []),
        "figures": dict(sorted(figures.items())),
        "ratios": dict(sorted(F.ratios.items())),
        "failed": errors,
        "skipped": machine.get("skipped", []),
    }
    with open(os.path.join(root, "docs", "bench", "results.json"), "w") as f:
        json.dump(summary, f, indent=1, sort_keys=False)
        f.write("\n")
