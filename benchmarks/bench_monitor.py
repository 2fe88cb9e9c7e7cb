"""The boundary monitor: false alarms of the stop rule, band widths, and overhead.

Run on demand, never under pytest::

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_monitor.py false-alarms [--reps 500]
    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_monitor.py widths
    python benchmarks/bench_monitor.py overhead-trl      # TRL GRPO on a tiny model, CPU
    python benchmarks/bench_monitor.py overhead-lab      # the lab's GRPO loop, CPU
    python benchmarks/bench_monitor.py all --json monitor_bench.json

false-alarms
    RL changes nothing: the policy equals the base. Truth: the per-prompt
    success rates c/n of the embedded DeepScaleR base model (1,060 prompts, n =
    128; 11% never solved, 17% always). A replication draws ``--prompts``
    prompts with replacement, the base's counts once (``--n`` samples each),
    and at each of ``--looks`` looks fresh counts of the policy from the same
    rates. At each look the monitor's rule band
    (:func:`rlvr_boundary.monitor.assess.rule_band`, the band whose supported
    losses the rules read) is drawn at each correction's level for that look.
    A false alarm is a rule firing at any look. Rules: ``stop:loss>=1`` (a
    supported loss at any budget), ``stop:loss>=n/2``, and the point rule
    ``warn:kstar<n`` (fires when D(k) < 0 somewhere: no error control).
    Seeds: replication r uses ``numpy.random.default_rng([2, r])`` for the data
    and seed r for the multipliers.

widths
    The plain one-look band's half-width at k = 1, n/4 and n under the same
    truth (policy = base), for held-out prompt counts P and samples per prompt
    n: the median over 40 simulated replications (not a formula); a budget
    where every per-prompt difference is equal has no interval and is left out
    (its share at k = n is reported).

overhead-trl, overhead-lab
    The monitor's own wall time (base sampling once, then every look) against
    the training's wall time in the same run, at the default schedule
    (``MonitorOptions``: a look every 20 steps, n = 16): TRL's GRPOTrainer on
    the tiny Qwen2 of ``examples/trl_shaped_grpo.py`` (its 25 prompts held out,
    4 prompts x 4 completions per step), and the lab's GRPO loop
    (:func:`rlvr_boundary.lab.grpo.train`, driven from here through its
    ``progress`` hook, unmodified; full-preset RL settings: 16 prompts x 8
    completions per step, 32 new tokens; a base pretrained with the quick
    preset's settings; 120 held-out lab problems).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

CORRECTIONS = ("none", "bonferroni", "spending", "open")


def _machine() -> dict:
    return {"cpus": os.cpu_count(), "python": platform.python_version(),
            "numpy": np.__version__, "load_average": os.getloadavg()[0]}


def _truth() -> np.ndarray:
    from rlvr_boundary.examples import example_files
    from rlvr_boundary.io.inputs import load_inputs

    ct = load_inputs([example_files("deepscaler32k")["base"]]).counts[0]
    return ct.c / ct.n  # (1060,)


def false_alarms(reps: int, looks: int, prompts: int, n: int, B: int, alpha: float) -> dict:
    from rlvr_boundary.core.passk import pass_at_k
    from rlvr_boundary.monitor.assess import rule_band
    from rlvr_boundary.monitor.options import MonitorOptions
    from rlvr_boundary.monitor.rules import Rule, look_alpha, rule_fires
    from rlvr_boundary.core.compare import first_negative

    rates = _truth()
    ks = np.arange(1, n + 1)
    rules = {"stop:loss>=1": Rule("stop", loss_at=1),
             f"stop:loss>={n // 2}": Rule("stop", loss_at=n // 2)}
    fired = {(c, r): 0 for c in CORRECTIONS for r in rules}
    first_look = {(c, r): [] for c in CORRECTIONS for r in rules}
    kstar_fired = 0
    per_look_none = np.zeros(looks)
    t0 = time.perf_counter()
    for rep in range(reps):
        rng = np.random.default_rng([2, rep])
        p = rates[rng.integers(0, rates.size, prompts)]  # (P,)
        nn = np.full(prompts, n)
        cb = pass_at_k(nn, rng.binomial(n, p), ks)  # (P, K)
        hit = {key: False for key in fired}
        hit_k = False
        for j in range(1, looks + 1):
            cr = pass_at_k(nn, rng.binomial(n, p), ks)  # (P, K) fresh policy samples
            diff = (cr - cb).mean(axis=0)
            opts = MonitorOptions(n=n, bootstrap=B, alpha=alpha, seed=rep, looks=looks)
            plain = rule_band(cb, cr, ks, diff, alpha, None, opts)
            k_star = first_negative(ks, diff)
            if k_star is not None and k_star < n:
                hit_k = True
            if any(k >= 1 for k in plain["loss_budgets"]):
                per_look_none[j - 1] += 1
            for corr in CORRECTIONS:
                a_j = look_alpha(alpha, corr, j, looks)
                band = plain if corr == "none" else rule_band(
                    cb, cr, ks, diff, a_j, plain["critical_value"], opts)
                for name, rule in rules.items():
                    if not hit[(corr, name)] and rule_fires(rule, band["loss_budgets"], None):
                        hit[(corr, name)] = True
                        first_look[(corr, name)].append(j)
        for key, h in hit.items():
            fired[key] += h
        kstar_fired += hit_k
    se = lambda x: float(np.sqrt(x * (1 - x) / reps))  # noqa: E731
    table = [{"correction": c, "rule": r, "false_alarm_rate": fired[(c, r)] / reps,
              "mc_se": se(fired[(c, r)] / reps),
              "median_first_look": float(np.median(first_look[(c, r)]))
              if first_look[(c, r)] else None}
             for c in CORRECTIONS for r in rules]
    return {"reps": reps, "looks": looks, "prompts": prompts, "n": n, "B": B, "alpha": alpha,
            "table": table,
            "per_look_rate_uncorrected": (per_look_none / reps).tolist(),
            "kstar_point_rule": {"rule": f"warn:kstar<{n}", "rate": kstar_fired / reps,
                                 "mc_se": se(kstar_fired / reps)},
            "seconds": time.perf_counter() - t0}


def widths(reps: int, B: int) -> dict:
    from rlvr_boundary.core.compare import simultaneous_band
    from rlvr_boundary.core.passk import pass_at_k

    rates = _truth()
    rows = []
    for n in (8, 16, 32):
        ks = np.arange(1, n + 1)
        for P in (50, 100, 200, 400):
            half, degenerate = [], np.zeros(n)
            for rep in range(reps):
                rng = np.random.default_rng([3, n, P, rep])
                p = rates[rng.integers(0, rates.size, P)]
                nn = np.full(P, n)
                d = pass_at_k(nn, rng.binomial(n, p), ks) - pass_at_k(nn, rng.binomial(n, p), ks)
                band = simultaneous_band(d, n_multipliers=B, seed=rep)
                w = (band["upper"] - band["lower"]) / 2  # (K,)
                w[band["degenerate"]] = np.nan  # no variance: no interval (compare shows D)
                degenerate[band["degenerate"]] += 1
                half.append(w)
            h = np.nanmedian(np.array(half), axis=0)
            rows.append({"n": n, "prompts": P, "half_width_k1": float(h[0]),
                         "half_width_k_quarter": float(h[n // 4 - 1]),
                         "half_width_kn": float(h[-1]),
                         "no_variance_share_kn": float(degenerate[-1] / reps)})
    return {"reps": reps, "B": B, "rows": rows}


class _Timer:
    def __init__(self) -> None:
        self.seconds = 0.0
        self.calls = 0

    def wrap(self, fn):
        def inner(*a, **k):
            t = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                self.seconds += time.perf_counter() - t
                self.calls += 1
        return inner


def overhead_trl(max_steps: int, out: Path) -> dict:
    import importlib.util
    import re
    import shutil

    from trl import GRPOConfig, GRPOTrainer

    from rlvr_boundary.monitor import BoundaryMonitor, MonitorOptions
    from rlvr_boundary.monitor.trl import BoundaryCallback

    spec = importlib.util.spec_from_file_location("ex", ROOT / "examples/trl_shaped_grpo.py")
    ex = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ex)
    shutil.rmtree(out, ignore_errors=True)
    tok = ex.build_tokenizer()
    model = ex.build_model(tok, seed=0)
    args = GRPOConfig(output_dir=str(out / "trainer"), use_cpu=True, max_steps=max_steps,
                      per_device_train_batch_size=16, num_generations=4,
                      max_completion_length=6, learning_rate=1e-2, logging_steps=10,
                      report_to=[], save_strategy="no", seed=0, bf16=False, beta=0.0,
                      dataloader_num_workers=0, disable_tqdm=True)
    trainer = GRPOTrainer(model=model, processing_class=tok, reward_funcs=ex.correct_sum,
                          args=args, train_dataset=ex.build_dataset(seed=0))
    heldout = [{"prompt_id": f"{a}+{b}", "prompt": f"{a} + {b} =", "target": str(a + b)}
               for a in range(5) for b in range(5)]

    def verify(prompt, text):
        return prompt["target"] in re.findall(r"\d+", text)

    opts = MonitorOptions(max_new_tokens=6)  # the default schedule and n
    mon = BoundaryMonitor(heldout, verify, out / "monitor", opts)
    timer = _Timer()
    mon.step = timer.wrap(mon.step)
    mon.sample_base = timer.wrap(mon.sample_base)
    BoundaryCallback.attach(trainer, mon)
    t = time.perf_counter()
    trainer.train()
    total = time.perf_counter() - t
    train = total - timer.seconds
    return {"steps": max_steps, "every": opts.every, "n": opts.n, "heldout_prompts": 25,
            "looks": len(mon.history), "monitor_seconds": timer.seconds,
            "training_seconds": train, "overhead_share": timer.seconds / train}


def overhead_lab(steps: int, out: Path) -> dict:
    import shutil

    import torch

    from dataclasses import replace

    from rlvr_boundary.lab import splits
    from rlvr_boundary.lab import task as T
    from rlvr_boundary.lab.config import LabConfig
    from rlvr_boundary.lab.grpo import train
    from rlvr_boundary.lab.model import build_model, is_complete, load_checkpoint, save_checkpoint
    from rlvr_boundary.lab.pretrain import pretrain
    from rlvr_boundary.lab.tokenizer import train_tokenizer
    from rlvr_boundary.monitor import BoundaryMonitor, MonitorOptions

    torch.set_num_threads(1)
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    quick, cfg = LabConfig.from_preset("quick"), LabConfig.from_preset("full")
    cached = out.parent / "lab-base"  # the pretrained base is kept for reruns
    t = time.perf_counter()
    if is_complete(cached):
        model, tok = load_checkpoint(cached)
    else:
        tok = train_tokenizer(splits.tokenizer_corpus(quick))
        model = build_model(quick.model, tok, seed=0)
        pretrain(model, tok, quick.pretrain, *splits.pretrain_corpus(quick),
                 max_len=quick.model.max_len)
        save_checkpoint(model, tok, cached)
    pretrain_s = time.perf_counter() - t
    problems = splits.audit_problems(cfg)  # the held-out problems of the lab's audit
    by_id = {p.prompt_id: p for p in problems}
    heldout = [{"prompt_id": p.prompt_id, "prompt": p.prompt} for p in problems]

    def verify(prompt, text):
        return bool(T.verify(by_id[prompt["prompt_id"]], text)["correct"])

    g = replace(cfg.grpo, steps=steps, save_every=steps + 1 if steps > 1 else 1)
    opts = MonitorOptions(max_new_tokens=g.max_new_tokens, batch_size=256)
    mon = BoundaryMonitor(heldout, verify, out / "monitor", opts)
    timer = _Timer()
    model.eval()
    timer.wrap(mon.sample_base)(model, tok)
    step_seconds = []
    last = [time.perf_counter()]

    def progress(step, rec):
        step_seconds.append(time.perf_counter() - last[0])
        if mon.due(step):
            timer.wrap(mon.step)(step, model, tok)
        last[0] = time.perf_counter()

    (out / "rl").mkdir()  # train() keeps its optimizer state and log there
    t = time.perf_counter()
    train(model, tok, g, lambda s: splits.rl_problems(cfg, s), out / "rl", progress=progress)
    total = time.perf_counter() - t
    training = float(np.sum(step_seconds))
    return {"steps": steps, "every": opts.every, "n": opts.n, "heldout_prompts": len(heldout),
            "prompts_per_step": g.prompts_per_step, "group_size": g.group_size,
            "max_new_tokens": g.max_new_tokens, "looks": len(mon.history),
            "pretrain_seconds": pretrain_s, "monitor_seconds": timer.seconds,
            "training_seconds": training, "total_seconds": total,
            "overhead_share": timer.seconds / training,
            "alarms": mon.alarms(),
            "pass_at_1": {s: d["metrics"]["boundary/pass@k/1"] for s, d in mon.history.items()},
            "base_pass_at_1": next(iter(mon.history.values()))["metrics"][
                "boundary/base_pass@k/1"] if mon.history else None}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("part", choices=["false-alarms", "widths", "overhead-trl", "overhead-lab",
                                    "all"])
    p.add_argument("--reps", type=int, default=500)
    p.add_argument("--looks", type=int, default=10)
    p.add_argument("--prompts", type=int, default=200)
    p.add_argument("--n", type=int, default=16)
    p.add_argument("--B", type=int, default=1000)
    p.add_argument("--alpha", type=float, default=0.05)
    p.add_argument("--trl-steps", type=int, default=60)
    p.add_argument("--lab-steps", type=int, default=40)
    p.add_argument("--work", default="/tmp/rlvr-bench-monitor")
    p.add_argument("--json", metavar="FILE")
    a = p.parse_args(argv)
    res: dict = {"machine": _machine()}
    parts = ["false-alarms", "widths", "overhead-trl", "overhead-lab"] if a.part == "all" \
        else [a.part]
    for part in parts:
        if part == "false-alarms":
            res[part] = false_alarms(a.reps, a.looks, a.prompts, a.n, a.B, a.alpha)
        elif part == "widths":
            res[part] = widths(40, a.B)
        elif part == "overhead-trl":
            res[part] = overhead_trl(a.trl_steps, Path(a.work) / "trl")
        else:
            res[part] = overhead_lab(a.lab_steps, Path(a.work) / "lab")
        print(json.dumps({part: res[part]}, indent=1), flush=True)
    if a.json:
        Path(a.json).write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
