"""docs/bench/results.json: every figure and ratio of a run under its stable
name, for tools (figures.NAME.ops_per_s; ratios.NAME.value and its pairs).
`rocksdb_build` names the build the figures ran on; a run on both builds
adds the other's under `other_build` (its label, figures and ratios; the
peers' figures are the same in both).
"""

import json
import os


def write(root, mode, machine, figures, F, errors):
    summary = {
        "schema": 2,
        "mode": mode,
        "rocksdb_build": F.label,
        "machine": {k: v for k, v in machine.items() if k != "steps"},
        "steps": machine.get("steps", []),
        "figures": dict(sorted(figures.items())),
        "ratios": dict(sorted(F.ratios.items())),
        "failed": errors,
        "skipped": machine.get("skipped", []),
    }
    if F.other is not None:
        summary["other_build"] = {
            "rocksdb_build": F.other.label,
            "figures": dict(sorted(F.other.f.items())),
            "ratios": dict(sorted(F.other.ratios.items())),
            "failed": F.other.errors,
        }
    with open(os.path.join(root, "docs", "bench", "results.json"), "w") as f:
        json.dump(summary, f, indent=1, sort_keys=False)
        f.write("\n")
