"""Benchmark: ``verify`` on the local pool vs on Ray (2 actors), same items, same verdicts.

Items: the 500 official MATH500 solutions, each graded against its own gold
answer and against other problems' answers (as ``bench_verify.py`` builds them;
about 1 in 20 is correct), written as one rollout table. Both runs go through
:func:`rlvr_boundary.pipelines.verify.verify_table` end to end (read, grade with a
hard timeout and a memory cap per item, quality flags, shards written atomically):
``--runner local --workers 2`` and ``--runner ray --workers 2`` on a local Ray
instance with 2 CPUs (its start-up timed apart). A third run on Ray SIGKILLs one
grading actor once a fifth of the items are back (on progress) and must still end
with every item in the output exactly once and the same verdicts.

Run:  python benchmarks/bench_verify_ray.py [--items 2000] [--backend math-verify]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import signal
import tempfile
import time
from pathlib import Path


def _load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def _verdicts(path: Path) -> dict:
    from rlvr_boundary.io.rollouts import read_rollouts

    t = read_rollouts(path, ["prompt_id", "model", "sample_idx", "correct", "verify_status",
                             "answer"])
    keys = list(zip(*(t.column(c).to_pylist() for c in ("prompt_id", "model", "sample_idx"))))
    vals = list(zip(*(t.column(c).to_pylist() for c in ("correct", "verify_status", "answer"))))
    return {"rows": len(keys), "unique": len(set(keys)), "verdicts": dict(zip(keys, vals))}


def _actors() -> list[int]:
    import psutil

    out = []
    for p in psutil.process_iter(["cmdline"]):
        try:
            if "MapWorker(MapBatches(_GradeUDF))" in " ".join(p.info["cmdline"] or []):
                out.append(p.pid)
        except psutil.Error:
            continue
    return out


def _driver_cost(src: Path, gold: Path, items: int, opts) -> None:
    """Seconds per item of the driver's own work on Ray, grading left out.

    Reading the batches, the JSON string per item, the quality flags and the shard
    write (with stand-in verdicts): what one ``verify --runner ray`` process does
    for every item whatever the cluster's size.
    """
    import tempfile as tf

    from rlvr_boundary.io.store import ShardedWriter
    from rlvr_boundary.pipelines import verify as P
    from rlvr_boundary.verify.math import as_text

    g = P.read_gold(gold, opts)
    with tf.TemporaryDirectory() as d:
        writer = ShardedWriter(Path(d) / "out", {"verifier": {}}, must_match=("verifier",))
        t0 = time.process_time()
        w0 = time.perf_counter()
        for key, batch, texts, prompts, golds in P._pending_batches(src, g, gold, opts, set(),
                                                                    "text", None):
            jobs = [json.dumps([gg, as_text(t)], ensure_ascii=True)
                    for gg, t in zip(golds, texts)]
            res = [{"answer": "1", "correct": False, "verify_status": "ok"} for _ in jobs]
            writer.write(key, P._with_results(batch, res, texts, prompts, opts, golds))
        cpu, wall = time.process_time() - t0, time.perf_counter() - w0
    print(f"driver work per item (read, JSON, quality flags, shard write; no grading): "
          f"{cpu / items * 1e3:.2f} ms CPU, {wall / items * 1e3:.2f} ms wall "
          f"({items / cpu:.0f} items per CPU-second); load {_load()}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=2000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--backend", default="math-verify", choices=("math-verify", "canonical"))
    ap.add_argument("--rounds", type=int, default=2, help="alternating local / Ray rounds")
    ap.add_argument("--no-kill", action="store_true", help="skip the run with a killed actor")
    args = ap.parse_args()

    import ray

    from rlvr_boundary.examples import example_dir
    from rlvr_boundary.pipelines.verify import VerifyOptions, math_options, verify_table
    from rlvr_boundary.verify.ray_grade import init_ray

    rows = [json.loads(x) for x in (example_dir("math500") / "test.jsonl").read_text().splitlines()]
    tmp = Path(tempfile.mkdtemp(prefix="bench-verify-ray-"))
    try:
        src, gold = tmp / "items.jsonl", tmp / "gold.jsonl"
        gold.write_text("".join(json.dumps({"id": f"q{i}", "answer": r["answer"]}) + "\n"
                                for i, r in enumerate(rows)))
        with src.open("w") as fh:  # item j: solution of problem i against the gold of problem g
            for j in range(args.items):
                i, k = j % len(rows), j // len(rows)
                g = (i + k * 7) % len(rows)
                fh.write(json.dumps({"prompt_id": f"q{g}", "model": "m", "sample_idx": j,
                                     "text": rows[i]["solution"]}) + "\n")
        math = math_options(args.backend, timeout=10.0)
        base = {"workers": args.workers, "timeout": 10.0, "math": math, "batch_rows": 1024}
        print(f"machine: {os.cpu_count()} cores, Python {platform.python_version()}, "
              f"ray {ray.__version__}; {args.items:,} items, backend {args.backend}, "
              f"{args.workers} workers")

        src_dir = str(Path(__import__("rlvr_boundary").__file__).resolve().parents[1])
        os.environ["PYTHONPATH"] = os.pathsep.join(
            p for p in (src_dir, os.environ.get("PYTHONPATH")) if p)
        ray_opts = VerifyOptions(**base, runner="ray")

        def start_ray() -> float:
            t0 = time.perf_counter()
            ray.init(num_cpus=args.workers, include_dashboard=False, log_to_driver=False,
                     runtime_env={"env_vars": {"PYTHONPATH": os.environ["PYTHONPATH"]}})
            assert not init_ray(None)  # the grader joins this instance
            return time.perf_counter() - t0

        # Rounds alternate local and Ray; Ray runs only during its own phase (its idle
        # actors would otherwise take CPU from the local run).
        print(f"{'round':6s}{'runner':34s} {'seconds':>8s} {'items/s':>8s}  load (1/5/15 min) "
              "before -> after")
        ref = None
        for r in range(args.rounds):
            load0 = _load()
            t0 = time.perf_counter()
            s_local = verify_table(src, gold, tmp / f"local{r}", VerifyOptions(**base))
            t_local = time.perf_counter() - t0
            print(f"{r:<6d}{'local pool (2 workers)':34s} {t_local:8.1f} "
                  f"{args.items / t_local:8.1f}  {load0} -> {_load()}", flush=True)
            t_init = start_ray()
            load0 = _load()
            t0 = time.perf_counter()
            s_ray = verify_table(src, gold, tmp / f"ray{r}", ray_opts)
            t_ray = time.perf_counter() - t0
            print(f"{r:<6d}{'Ray, 2 actors (start-up apart)':34s} {t_ray:8.1f} "
                  f"{args.items / t_ray:8.1f}  {load0} -> {_load()}; ray.init {t_init:.1f} s",
                  flush=True)
            if r + 1 < args.rounds:
                ray.shutdown()
            a, b = _verdicts(tmp / f"local{r}"), _verdicts(tmp / f"ray{r}")
            ref = ref or a
            print(f"      same verdicts: {a['verdicts'] == b['verdicts'] == ref['verdicts']}; "
                  f"rows {a['rows']} / {b['rows']} (unique {b['unique']}); correct "
                  f"{s_local['correct']} / {s_ray['correct']}; statuses {s_local['statuses']} "
                  f"/ {s_ray['statuses']}", flush=True)

        if not args.no_kill:
            killed: list[int] = []
            seen: list[int] = []
            before: set[int] = set()
            after: set[int] = set()

            def kill_on_progress(k: int) -> None:
                seen.append(k)
                if not killed and sum(seen) >= args.items // 5:
                    pids = _actors()
                    before.update(pids)
                    if pids:
                        os.kill(pids[0], signal.SIGKILL)
                        killed.append(pids[0])
                elif killed and len(seen) % 50 == 0:
                    after.update(_actors())

            t0 = time.perf_counter()
            s_kill = verify_table(src, gold, tmp / "killed", ray_opts, progress=kill_on_progress)
            t_kill = time.perf_counter() - t0
            c = _verdicts(tmp / "killed")
            print(f"{'kill':6s}{'Ray, one actor SIGKILLed at 20%':34s} {t_kill:8.1f} "
                  f"{args.items / t_kill:8.1f}  {_load()}")
            print(f"killed actor pid {killed}; new actor started after it: "
                  f"{bool(after - before)}; rows {c['rows']}, unique {c['unique']}, every "
                  f"item once: {c['rows'] == c['unique'] == args.items}; same verdicts as "
                  f"local: {c['verdicts'] == ref['verdicts']}; repeated results ignored "
                  f"{s_kill['ray']['duplicates_ignored']}")
        ray.shutdown()
        _driver_cost(src, gold, args.items, VerifyOptions(**base))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":  # required: the pool's forkserver re-imports this module
    main()
