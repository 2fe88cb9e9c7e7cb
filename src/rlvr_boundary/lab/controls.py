"""Two controls for an RL run: the sharpened base and the random-template baseline.

**Sharpened base.** The base sampled at a lower temperature. Sharpening alone
raises pass@1 when the base's most likely choices are the right ones more
often than its average draw, and it costs diversity at large k, as RL does
(Karan and Du, "Reasoning with Sampling: Your Base Model is Smarter Than You
Think", arXiv 2510.14901, who sharpen by power sampling). We choose the
temperature whose pass@1 on the audited problems equals RL's
(:func:`match_temperature`, bisection on a calibration draw with its own
seed), then sample the base at that temperature for the audit, so the report
can say how much of RL's pass@1 gain sharpening buys and what it costs at
large k. When even the lowest temperature tried stays below RL's pass@1 the
control is the base at that temperature, and the result says so.

**Cue-following fine-tune** (cued family only). The base fine-tuned, with
the loss on the completion, on traces that always use the strategy the cue
names (:func:`rlvr_boundary.lab.splits.cue_sft_corpus`; train triples only).
It shows that the tiny model can learn to read the cue: the prompt-conditional
policy RL could have found exists and is learnable, so an RL run that tilts
globally instead has not met a capacity limit.

**Random template.** No model: each sample picks one of the three strategies
uniformly at random and writes its faithful trace (right arithmetic, right
operands). It is what a prompt-blind template guesser that never miscopies
gets; its pass@1 is ``mean_x (1/3) sum_s F[s, x]`` and it solves every
problem at a large budget.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from rlvr_boundary.lab import task as T

#: Label of the random-template baseline in rollouts and reports.
RANDOM_LABEL = "random-template"

#: Temperatures the sharpened base may take (bisection inside, in this range).
TEMPERATURE_RANGE = (0.1, 1.0)

#: Label of the cue-following fine-tune.
CUE_SFT_LABEL = "cue-sft"

#: Fine-tuning of the cue-following control: steps, batch, peak learning rate.
CUE_SFT = {"steps": 200, "batch_size": 64, "lr": 3e-3}


def cue_sft(cfg, base: Path, dest: Path, say=None) -> Path:
    """Fine-tune the base at ``base`` on cue-following traces into ``dest`` (resumable)."""
    import numpy as np

    from rlvr_boundary.lab import splits
    from rlvr_boundary.lab.model import is_complete, load_checkpoint, save_checkpoint
    from rlvr_boundary.lab.pretrain import fit

    if is_complete(dest):
        return dest
    model, tok = load_checkpoint(base)
    prompts, comps = splits.cue_sft_corpus(cfg)
    losses = fit(model, tok, prompts, comps, seed=cfg.seed + 3, max_len=cfg.model.max_len,
                 completion_only=True, **CUE_SFT)
    save_checkpoint(model, tok, dest, extra={"stage": "cue-sft",
                                             "final_loss": float(np.mean(losses[-20:]))})
    if say is not None:
        say(f"cue-following fine-tune: {CUE_SFT['steps']} steps on {len(prompts)} traces")
    return dest


def random_template_rows(problems, n: int, seed: int, *, label: str = RANDOM_LABEL
                         ) -> list[dict]:
    """``n`` samples per problem of the random-template baseline, as rollout rows.

    Sample ``j`` of problem ``x`` uses strategy ``rng.integers(3)`` of the generator
    seeded with ``(seed, index of x, j)``; its text is :func:`rlvr_boundary.lab.task.trace`
    and its verdict the task's verifier.
    """
    names = list(T.STRATEGIES)
    rows = []
    for i, p in enumerate(problems):
        for j in range(n):
            s = names[int(np.random.default_rng([seed, i, j]).integers(len(names)))]
            text = T.trace(p, s)
            rows.append({"prompt_id": p.prompt_id, "model": label, "sample_idx": j,
                         "text": text, "finish_reason": "stop", "truncated": False,
                         **T.verify(p, text)})
    return rows


def random_template_pass1(problems) -> float:
    """Exact pass@1 of the random-template baseline: ``mean_x (1/S) sum_s F[s, x]``."""
    return float(T.fitness_matrix(problems).mean())


def write_random_template(folder: Path, problems, n: int, seed: int, *,
                          label: str = RANDOM_LABEL) -> Path:
    """The baseline's rollout shard in ``folder`` (resumable: a finished shard is kept)."""
    import pyarrow as pa

    from rlvr_boundary.io.rollouts import validate_batch
    from rlvr_boundary.io.store import ShardedWriter

    manifest = {"engine": "none (random template)", "sampling": {"n": n, "seed": seed},
                "models": {label: {"model_path": None, "model_hash": None}},
                "verifier": {"name": "rlvr-boundary lab task", "version": "2"},
                "source": "rlvr-boundary lab: a uniformly random strategy's faithful trace",
                "dataset": [p.prompt_id for p in problems]}
    writer = ShardedWriter(folder, manifest, must_match=("sampling", "models", "dataset"))
    if label not in writer.done():
        table = pa.Table.from_pylist(random_template_rows(problems, n, seed, label=label))
        writer.write(label, validate_batch(table, folder, 1))
    writer.finish({"models": [label]})
    return folder


def pass1_at(temperature: float, backend, problems, n: int, seed: int, max_new_tokens: int
             ) -> float:
    """pass@1 (mean verdict) of ``n`` samples per problem at ``temperature``."""
    from rlvr_boundary.backends import SamplingParams

    by_id = {p.prompt_id: p for p in problems}
    prompts = [{"prompt_id": p.prompt_id, "prompt": p.prompt} for p in problems]
    params = SamplingParams(temperature=temperature, top_p=1.0, top_k=0,
                            max_new_tokens=max_new_tokens, seed=seed, logprobs_mode="raw")
    ok = [T.verify(by_id[r["prompt_id"]], r["text"])["correct"]
          for r in backend.generate(prompts, n, params)]
    return float(np.mean(ok))


def match_temperature(pass1, target: float, *, lo: float = TEMPERATURE_RANGE[0],
                      hi: float = TEMPERATURE_RANGE[1], iterations: int = 7) -> dict:
    """The temperature whose pass@1 equals ``target``, by bisection on ``[lo, hi]``.

    Parameters
    ----------
    pass1
        ``pass1(temperature) -> float``, decreasing in the temperature over the
        range (sharper sampling solves more, for a base whose likeliest choices are
        its best ones; a calibration draw with common random numbers keeps the
        estimate nearly monotone).
    target
        The pass@1 to match (RL's).
    lo, hi
        The range searched.
    iterations
        Bisection steps after the two ends (the interval shrinks by 2^iterations).

    Returns
    -------
    dict
        ``temperature`` (the one chosen), ``pass_at_1`` (its calibration
        pass@1), ``reached`` (False when pass@1 at ``lo`` is still below the
        target: the control is then the base at ``lo``), and ``trace`` (every
        temperature tried with its pass@1).
    """
    trace = []

    def f(t):
        v = pass1(t)
        trace.append({"temperature": t, "pass_at_1": v})
        return v

    f_hi = f(hi)
    if f_hi >= target:
        return {"temperature": hi, "pass_at_1": f_hi, "reached": True, "trace": trace}
    f_lo = f(lo)
    if f_lo < target:
        return {"temperature": lo, "pass_at_1": f_lo, "reached": False, "trace": trace}
    a, b = lo, hi  # pass1(a) >= target > pass1(b)
    best = (lo, f_lo)
    for _ in range(iterations):
        m = 0.5 * (a + b)
        v = f(m)
        if v >= target:
            a, best = m, (m, v)
        else:
            b = m
    # the highest temperature found that still reaches the target
    return {"temperature": best[0], "pass_at_1": best[1], "reached": True, "trace": trace}
