"""Benchmark: whole processes, as a user runs them.

1. ``rlvr-boundary compare`` against the ``passk-inference`` command line on the
   two DeepScaleR count files shipped with the package (1,060 prompts, n = 128),
   B = 4,000, seed 0: each tool started as a fresh process, interleaved, best of
   ``--repeat``. Three pairings:
   - numbers only: ours ``--json FILE`` against theirs printing its JSON;
   - files: ours ``--out DIR`` (result.json, curves.csv, two figures as PNG)
     against theirs ``--output DIR`` (result.json, curves.csv, one PNG);
   - files with PDF: ours ``--out DIR --pdf`` (the two figures also as PDF)
     against the same peer run.
   The curves, standard errors and band ends are compared after the runs.
   Besides wall time, CPU time (user + system) of each process is reported: on a
   shared, loaded machine it is the steadier of the two.
2. With ``--big N``: ``compare`` against ``report`` on two synthetic JSONL
   rollout tables with text (N prompts x 1,000 samples per model; N = 1,500
   gives 1.5 million rows, about 680 MB, per file), written to a temporary
   directory (or ``--big-dir``, reused if the files exist). The report reads its
   inputs once; the target is report time <= 2 x compare time.

Run:  python benchmarks/bench_cli.py [--repeat 5] [--big 1500 [--big-dir /tmp/big]]
Peer: ``pip install passk-inference==0.3.1`` (its console script must be on PATH
or beside this Python).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "src" / "rlvr_boundary" / "examples" / "data" / "deepscaler32k"


def run(cmd: list[str], env: dict) -> tuple[float, float]:
    """Wall and CPU seconds (user + system of the child) of one process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def peer_command() -> str:
    found = shutil.which("passk-inference") or str(Path(sys.executable).with_name("passk-inference"))
    if not Path(found).exists():
        raise SystemExit("passk-inference is not installed: pip install passk-inference==0.3.1")
    return found


def bench_compare(repeat: int, env: dict, tmp: Path) -> None:
    ours = [sys.executable, "-m", "rlvr_boundary.cli", "compare", "--base", str(DATA / "base.jsonl"),
            "--rl", str(DATA / "rl.jsonl"), "--bootstrap", "4000", "--seed", "0"]
    peer = [peer_command(), "--base", str(DATA / "base.jsonl"), "--rl", str(DATA / "rl.jsonl"),
            "--bootstrap", "4000", "--seed", "0"]
    pairs = {
        "numbers only": (ours + ["--json", str(tmp / "ours.json")], peer),
        "files (json, csv, PNG)": (ours + ["--out", str(tmp / "ours_dir")],
                                   peer + ["--output", str(tmp / "peer_dir")]),
        "files, ours with --pdf": (ours + ["--out", str(tmp / "ours_pdf"), "--pdf"],
                                   peer + ["--output", str(tmp / "peer_dir")]),
    }
    for cmd in (ours + ["--json", str(tmp / "warm.json")], peer):  # warm the file cache
        run(cmd, env)
    print(f"\n1. compare vs passk-inference CLI, DeepScaleR 1,060 x 128, B = 4,000; "
          f"best of {repeat}, interleaved")
    print(f"{'pairing':30s} {'ours wall':>10s} {'peer wall':>10s} {'ratio':>6s}   "
          f"{'ours cpu':>9s} {'peer cpu':>9s} {'ratio':>6s}")
    for name, (a, b) in pairs.items():
        wa, wb, ca, cb = [], [], [], []
        for _ in range(repeat):
            w, c = run(a, env)
            wa.append(w)
            ca.append(c)
            w, c = run(b, env)
            wb.append(w)
            cb.append(c)
        print(f"{name:30s} {min(wa):9.2f}s {min(wb):9.2f}s {min(wb) / min(wa):5.2f}x   "
              f"{min(ca):8.2f}s {min(cb):8.2f}s {min(cb) / min(ca):5.2f}x")
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    ours_res = json.loads((tmp / "ours_dir" / "result.json").read_text())
    peer_res = json.loads((tmp / "peer_dir" / "result.json").read_text())
    base, rl = ours_res["models"]["base"], ours_res["models"]["rl"]
    same_curves = max(np.max(np.abs(np.subtract(ours_res["pass_at_k"][base],
                                                peer_res["base_pass_at_k"]))),
                      np.max(np.abs(np.subtract(ours_res["pass_at_k"][rl],
                                                peer_res["rl_pass_at_k"]))))
    se = np.max(np.abs(np.subtract(ours_res["band"]["se"], peer_res["se"])))
    print(f"same figures: pass@k curves differ by at most {same_curves:.1e}, standard errors "
          f"by {se:.1e}; critical value ours {ours_res['band']['critical_value']:.4f}, peer "
          f"{peer_res['critical_value']:.4f}; supported gain k = {ours_res['gain_budgets'][0]}-"
          f"{ours_res['gain_budgets'][-1]} (peer {peer_res['certified_positive_budgets'][0]}-"
          f"{peer_res['certified_positive_budgets'][-1]}), loss from k = "
          f"{ours_res['loss_budgets'][0]} (peer {peer_res['certified_negative_budgets'][0]})")


def make_rollouts(path: Path, model: str, prompts: int, n: int, seed: int) -> None:
    """JSONL rollout rows with a 60-word reasoning text and a boxed answer."""
    rng = np.random.default_rng(seed)
    rate = rng.beta(0.6, 0.6, prompts)
    words = np.array("we compute the sum of the first terms and then simplify the expression "
                     "to get".split())
    with open(path, "w") as fh:
        for p in range(prompts):
            ok = rng.random(n) < rate[p]
            wrong = rng.integers(0, 9, n)
            body = words[rng.integers(0, words.size, (n, 60))]
            for i in range(n):
                a = "42" if ok[i] else str(wrong[i])
                fh.write(json.dumps({"prompt_id": f"q{p:05d}", "model": model, "sample_idx": i,
                                     "text": f"Let us think. {' '.join(body[i])} So the answer "
                                             f"is \\boxed{{{a}}}.",
                                     "answer": a, "correct": bool(ok[i])}) + "\n")


def bench_big(prompts: int, folder: Path, env: dict) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    files = [folder / "base.jsonl", folder / "rl.jsonl"]
    for f, seed in zip(files, (0, 1)):
        if not f.exists():
            print(f"writing {f} ...", flush=True)
            make_rollouts(f, f.stem, prompts, 1000, seed)
    size = sum(f.stat().st_size for f in files) / 2**20
    print(f"\n2. compare vs report on two JSONL rollout tables with text: {prompts:,} prompts x "
          f"1,000 samples each ({size:,.0f} MB in all)")
    compare = [sys.executable, "-m", "rlvr_boundary.cli", "compare", "--base", str(files[0]),
               "--rl", str(files[1]), "--json", str(folder / "compare.json")]
    report = [sys.executable, "-m", "rlvr_boundary.cli", "report", *map(str, files), "--base",
              "base", "--out", str(folder / "report.html")]
    wc, cc = run(compare, env)
    wr, cr = run(report, env)
    print(f"compare {wc:.1f} s (cpu {cc:.1f} s); report {wr:.1f} s (cpu {cr:.1f} s); "
          f"report / compare = {wr / wc:.2f} wall, {cr / cc:.2f} cpu (target <= 2)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--big", type=int, metavar="PROMPTS", help="also run part 2 with this many "
                    "prompts per model (1,500 = 1.5 million rows per file)")
    ap.add_argument("--big-dir", type=Path, help="where the big files are kept (default: temp)")
    args = ap.parse_args()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    import passk_inference
    import pyarrow
    import scipy

    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}, Python "
          f"{platform.python_version()}, numpy {np.__version__}, scipy {scipy.__version__}, "
          f"pyarrow {pyarrow.__version__}, passk-inference {passk_inference.__version__}")
    with tempfile.TemporaryDirectory() as tmp:
        bench_compare(args.repeat, env, Path(tmp))
        if args.big:
            bench_big(args.big, args.big_dir or Path(tmp) / "big", env)


if __name__ == "__main__":
    main()
