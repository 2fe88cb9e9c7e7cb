"""Print the tables of docs/lab.md from finished lab run folders (the numbers are not typed by hand).

    python benchmarks/lab_tables.py narrowing lab-full        # experiment 1: pass@k per checkpoint
    python benchmarks/lab_tables.py tilt lab-full             # experiment 3: the strategy view
    python benchmarks/lab_tables.py cue lab-full-cued         # the cued family: cue view per checkpoint
    python benchmarks/lab_tables.py seeds seeds-plain seeds-cued   # the headline over seeds
    python benchmarks/lab_tables.py prolonged prolonged-plain      # the prolonged-RL trajectory

Each reads ``lab_result.json`` (and ``report.json``) of the folder(s) and prints markdown.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

KS = (1, 2, 4, 8, 16, 32, 64)


def _load(folder: str) -> tuple[dict, dict]:
    f = Path(folder)
    return (json.loads((f / "lab_result.json").read_text(encoding="utf-8")),
            json.loads((f / "report.json").read_text(encoding="utf-8")))


def narrowing(folder: str) -> str:
    doc, rep = _load(folder)
    ks = list(rep["ks"])
    cols = [k for k in KS if k in ks]
    head = ("| model | " + " | ".join(f"pass@{k}" for k in cols) + " | add / mul / sub share |\n"
            "|---|" + "---|" * len(cols) + "---|\n")
    rows = []
    for m in rep["models"]:
        sh = doc["strategy"]["shares"][m]
        rows.append(f"| {m} | " + " | ".join(f"{rep['pass_at_k'][m][ks.index(k)]:.3f}"
                                            for k in cols)
                    + " | " + " / ".join(f"{sh.get(s, 0):.2f}" for s in ("add", "mul", "sub"))
                    + " |")
    return head + "\n".join(rows) + "\n"


def tilt(folder: str) -> str:
    doc, _ = _load(folder)
    view = doc["strategy"]["tilt_view"]
    head = ("| checkpoint | measured add / mul / sub | tilt at equal entropy | beta | TV | "
            "mean per-prompt TV | pass@1 of the strategy model: tilt / measured |\n"
            "|---|---|---|---|---|---|---|\n")
    rows = []
    for m, v in view.items():
        rows.append(f"| {m} | " + " / ".join(f"{x:.3f}" for x in v["pi"]) + " | "
                    + " / ".join(f"{x:.3f}" for x in v["tilt"])
                    + f" | {v['beta']:.1f} | {v['tv']:.3f} | {v['per_prompt_tv']:.3f} | "
                    f"{v['pass1_tilt']:.3f} / {v['pass1_measured']:.3f} |")
    fbar = doc["strategy"]["fbar"]
    pi0 = next(iter(view.values()))["pi0"]
    return (head + "\n".join(rows) + "\n\nfbar = " + " / ".join(f"{x:.3f}" for x in fbar)
            + "; base mixture = " + " / ".join(f"{x:.3f}" for x in pi0) + "\n")


def cue(folder: str) -> str:
    doc, rep = _load(folder)
    view = doc["strategy"]["cue_view"]
    head = ("| model | pass@1 | pass@64 | cued strategy used | same share if blind to the cue "
            "| I(cue; strategy), nats | add share given cue ox / elk / yak |\n"
            "|---|---|---|---|---|---|---|\n")
    rows = []
    for m, v in view.items():
        by = v["by_cue"]
        rows.append(f"| {m} | {rep['pass_at_k'][m][0]:.3f} | {rep['pass_at_k'][m][-1]:.3f} | "
                    f"{v['following']:.3f} | {v['blind']:.3f} | {v['mutual_information']:.3f} | "
                    + " / ".join(f"{by[s]['add']:.2f}" for s in ("add", "mul", "sub")) + " |")
    return head + "\n".join(rows) + "\n"


def seeds(*folders: str) -> str:
    out = []
    for f in folders:
        doc = json.loads((Path(f) / "lab_result.json").read_text(encoding="utf-8"))
        out.append(f"{doc['task']} task:\n\n" + (Path(f) / "seeds.md").read_text(encoding="utf-8"))
        n = doc["nesting"]
        out.append(f"between-base share of the RL runs' spread: pass@1 "
                   f"{n['pass_at_1']['between_share']:.2f}, pass@64 "
                   f"{n['pass_at_K']['between_share']:.2f}; units' CPU "
                   f"{doc['units_cpu_s']['total'] / 60:.1f} min, wall {doc['wall_s'] / 60:.1f} min "
                   "(this call)\n")
    return "\n".join(out)


def prolonged(folder: str) -> str:
    doc = json.loads((Path(folder) / "lab_result.json").read_text(encoding="utf-8"))
    return ((Path(folder) / "prolonged.md").read_text(encoding="utf-8")
            + f"\nCPU {doc['cpu_s_total'] / 60:.1f} min\n")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("table", choices=["narrowing", "tilt", "cue", "seeds", "prolonged"])
    ap.add_argument("folders", nargs="+")
    ns = ap.parse_args(argv)
    fn = globals()[ns.table]
    print(fn(*ns.folders))
    return 0


if __name__ == "__main__":
    sys.exit(main())
