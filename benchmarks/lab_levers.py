"""The lab's lever table (docs/lab.md, experiment 5): many RL runs from one pretrained base.

Every run uses the ``full`` preset with seed 0 (the same base model, the same
120 held-out problems, the same sampling seeds) and changes only the RL stage:
the estimator, a shaping, the KL coefficient, the group size or the RL seed
(``--rl-seed``). The base is pretrained once (by the first run, or taken from
``--base-from``) and copied into every other run (``lab run --base-from``); each
run samples only the base and its last checkpoint (``--sample last``).

Usage::

    python benchmarks/lab_levers.py run --root /tmp/levers [--base-from lab-full]
    python benchmarks/lab_levers.py table --root /tmp/levers [--json levers.json]

``run`` skips finished runs (``--worker I/N`` splits the plan between parallel loops) (each is a resumable lab folder) and records the
wall and CPU seconds of each; ``table`` prints the markdown table of docs/lab.md
(mean and range over RL seeds) and writes the per-run numbers as JSON.
About 60 CPU seconds per run on one core (GRPO 15-30, sampling 2 x 16, report).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

#: (group name, run name suffix, extra ``lab run`` arguments). Seeds are added below.
LEVERS: list[tuple[str, list[str]]] = [
    ("GRPO", []),
    ("GRPO + perplexity shaping", ["--perplexity-shaping"]),
    ("GRPO + position shaping", ["--position-shaping"]),
    ("pass@k advantage, k = 4", ["--estimator", "passk", "--passk-k", "4"]),
    ("Dr. GRPO", ["--estimator", "dr_grpo"]),
    ("RLOO", ["--estimator", "rloo"]),
    ("REINFORCE++", ["--estimator", "reinforce_pp"]),
    ("GRPO, KL 0.05", ["--kl", "0.05"]),
    ("GRPO, KL 0.1", ["--kl", "0.1"]),
    ("GRPO, KL 0.2", ["--kl", "0.2"]),
    ("GRPO, G = 4", ["--group-size", "4"]),
    ("GRPO, G = 16", ["--group-size", "16"]),
]
#: The order of the runs (lever index, RL seed): every lever once, then more seeds of the
#: main four, then second seeds of the rest, so a stopped loop still fills the table.
ORDER = ([(i, 0) for i in (0, 1, 2, 3, 4, 5, 6, 8, 7, 9, 11, 10)]
         + [(i, s) for s in (1, 2) for i in range(4)]
         + [(i, 1) for i in range(4, len(LEVERS))])


def slug(name: str, seed: int) -> str:
    keep = "".join(c if c.isalnum() else "-" for c in name.lower().replace("++", "pp"))
    return "-".join(p for p in keep.split("-") if p) + f"-s{seed}"


def plan() -> list[tuple[str, int, list[str]]]:
    return [(LEVERS[i][0], seed, LEVERS[i][1]) for i, seed in ORDER]


def cmd_run(ns) -> int:
    root = Path(ns.root)
    root.mkdir(parents=True, exist_ok=True)
    base = ns.base_from
    w, n_workers = (int(v) for v in ns.worker.split("/"))
    for name, seed, extra in plan()[w::n_workers]:
        out = root / slug(name, seed)
        if (out / "lab_result.json").exists():
            base = base or str(out)
            continue
        argv = [sys.executable, "-m", "rlvr_boundary.cli", "lab", "run", "--preset", "full",
                "--sample", "last", "--rl-seed", str(seed), "--out", str(out), *extra]
        if base:
            argv += ["--base-from", base]
        w = time.perf_counter()
        print(f"[{time.strftime('%H:%M:%S')}] {out.name}: {' '.join(argv[3:])}", flush=True)
        rc = subprocess.run(argv, stdout=subprocess.DEVNULL if ns.quiet else None).returncode
        if rc != 0:
            print(f"{out.name}: failed (exit {rc})", flush=True)
            return rc
        t = json.loads((out / "timings.json").read_text())
        print(f"  wall {time.perf_counter() - w:.0f} s, CPU "
              f"{sum(v['cpu_s'] for v in t.values()):.0f} s", flush=True)
        base = base or str(out)
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--root", required=True)
    r.add_argument("--base-from", help="a finished full-preset run (seed 0) to copy the base from")
    r.add_argument("--quiet", action="store_true")
    r.add_argument("--worker", default="0/1", metavar="I/N",
                   help="run only every N-th run of the plan, from the I-th (parallel loops)")
    t = sub.add_parser("table")
    t.add_argument("--root", required=True)
    t.add_argument("--json", help="write the per-run and per-lever numbers here")
    ns = ap.parse_args(argv)
    return cmd_run(ns) if ns.cmd == "run" else cmd_table(ns)


def cmd_table(ns) -> int:
    raise NotImplementedError


if __name__ == "__main__":
    sys.exit(main())
