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

``run`` skips finished runs and runs another loop has claimed (start several loops to
run in parallel) (each is a resumable lab folder) and records the
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
#: main four, then second and third seeds of the rest, so a stopped loop still fills the table.
ORDER = ([(i, 0) for i in (0, 1, 2, 3, 4, 5)]
         + [(i, 1) for i in range(4)] + [(6, 0), (8, 0), (10, 0)]
         + [(i, 2) for i in range(4)] + [(9, 0), (11, 0), (7, 0)]
         + [(i, 1) for i in range(4, len(LEVERS))]
         + [(i, 2) for i in range(4, len(LEVERS))])


def slug(name: str, seed: int) -> str:
    keep = "".join(c if c.isalnum() else "-" for c in name.lower().replace("++", "pp"))
    return "-".join(p for p in keep.split("-") if p) + f"-s{seed}"


def plan() -> list[tuple[str, int, list[str]]]:
    return [(LEVERS[i][0], seed, LEVERS[i][1]) for i, seed in ORDER]


def cmd_run(ns) -> int:
    root = Path(ns.root)
    root.mkdir(parents=True, exist_ok=True)
    base = ns.base_from
    for name, seed, extra in plan():
        out = root / slug(name, seed)
        if (out / "lab_result.json").exists():
            base = base or str(out)
            continue
        if not _claim(root / f"{out.name}.claim"):
            continue  # another loop is running it
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


def _claim(path: Path) -> bool:
    """Claim a run for this loop: a file holding our pid (a dead loop's claim is taken over)."""
    import os

    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        try:
            pid = int(path.read_text() or 0)
            os.kill(pid, 0)
            return pid == os.getpid()
        except (ValueError, ProcessLookupError, PermissionError):
            path.write_text(str(os.getpid()))
            return True
    os.write(fd, str(os.getpid()).encode())
    os.close(fd)
    return True


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--root", required=True)
    r.add_argument("--base-from", help="a finished full-preset run (seed 0) to copy the base from")
    r.add_argument("--quiet", action="store_true")
    t = sub.add_parser("table")
    t.add_argument("--root", required=True)
    t.add_argument("--json", help="write the per-run and per-lever numbers here")
    ns = ap.parse_args(argv)
    return cmd_run(ns) if ns.cmd == "run" else cmd_table(ns)


def run_numbers(folder: Path) -> dict:
    """The lever-table numbers of one finished run folder."""
    from rlvr_boundary.report.words import ranges

    d = json.loads((folder / "lab_result.json").read_text(encoding="utf-8"))
    last = d["final_checkpoint"]
    gain, loss = d.get("gain_budgets") or [], d.get("loss_budgets") or []
    verdict = "; ".join(x for x in (f"gain at {ranges(gain)}" if gain else "no supported gain",
                                    f"loss at {ranges(loss)}" if loss else "no supported loss"))
    t = json.loads((folder / "timings.json").read_text(encoding="utf-8"))
    return {"pass_at_1": d["pass_at_1"]["rl"], "pass_at_K": d["pass_at_K"]["rl"],
            "K": d["pass_at_K"]["K"], "base_pass_at_1": d["pass_at_1"]["base"],
            "base_pass_at_K": d["pass_at_K"]["base"], "price": d["price"]["points"],
            "price_k": d["price"]["k"], "k_star": d["k_star"], "verdict": verdict,
            "loss_supported_at_K": d["loss_supported_at_K"],
            "shares": d["strategy"]["shares"][last],
            "cpu_s": sum(v["cpu_s"] for v in t.values()), "options": d["options"]}


def _spread(xs: list[float], scale: float = 1.0, digits: int = 3) -> str:
    xs = [x * scale for x in xs]
    m = sum(xs) / len(xs)
    if len(xs) == 1:
        return f"{m:.{digits}f}"
    return f"{m:.{digits}f} ({min(xs):.{digits}f}-{max(xs):.{digits}f})"


def cmd_table(ns) -> int:
    root = Path(ns.root)
    groups: dict[str, list[tuple[int, dict]]] = {}
    for name, seed, _ in plan():
        folder = root / slug(name, seed)
        if (folder / "lab_result.json").exists():
            groups.setdefault(name, []).append((seed, run_numbers(folder)))
    if not groups:
        print("no finished runs under", root)
        return 1
    first = next(iter(groups.values()))[0][1]
    K = first["K"]
    print(f"base: pass@1 {first['base_pass_at_1']:.3f}, pass@{K} {first['base_pass_at_K']:.3f}\n")
    print(f"| run | RL seeds | pass@1 | pass@{K} | price (points, at k) | k* | band verdict "
          "| add / mul / sub |")
    print("|---|---|---|---|---|---|---|---|")
    out = {"K": K, "base": {"pass_at_1": first["base_pass_at_1"],
                            "pass_at_K": first["base_pass_at_K"]}, "levers": {}}
    for name, _ in LEVERS:
        runs = groups.get(name)
        if not runs:
            continue
        rs = [r for _, r in runs]
        seeds = ", ".join(str(s) for s, _ in runs)
        price = _spread([r["price"] for r in rs], digits=1) + " at " + \
            "/".join(str(r["price_k"]) for r in rs)
        kstar = "/".join(str(r["k_star"]) for r in rs)
        verdicts = sorted({r["verdict"] for r in rs})
        verdict = verdicts[0] if len(verdicts) == 1 else " \\| ".join(
            f"{v} ({sum(r['verdict'] == v for r in rs)})" for v in verdicts)
        mix = " / ".join(f"{sum(r['shares'].get(s, 0) for r in rs) / len(rs):.2f}"
                         for s in ("add", "mul", "sub"))
        print(f"| {name} | {seeds} | {_spread([r['pass_at_1'] for r in rs])} | "
              f"{_spread([r['pass_at_K'] for r in rs])} | {price} | {kstar} | {verdict} | {mix} |")
        out["levers"][name] = {"runs": {str(s): {k: v for k, v in r.items() if k != "options"}
                                        for s, r in runs}}
    cpu = sum(r["cpu_s"] for runs in groups.values() for _, r in runs)
    n = sum(len(v) for v in groups.values())
    print(f"\n{n} runs, {cpu / 60:.1f} CPU minutes in total")
    if ns.json:
        Path(ns.json).write_text(json.dumps(out, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
