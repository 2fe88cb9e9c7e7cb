"""Every corpus of a lab run, rebuilt from its seeds: the one place that draws them.

The 729 digit triples (a, b, c) are split once per ``split_seed`` into
``n_eval_triples`` audit triples and the rest (train triples):

============================  ====================================================
corpus                        drawn from
============================  ====================================================
tokenizer texts               train triples (``seed``)
pretraining traces            train triples (``pretrain.seed``)
RL problems, every step       train triples (``grpo.seed``, step)
cue-following traces (SFT)    train triples (``seed``; cued family, seeds experiment)
distillation: teacher traces  train triples (``seed``)
distillation: teacher data    train triples (``seed``)
audited problems              audit triples only (``split_seed``)
============================  ====================================================

A prompt is its triple, target and (cued family) cue, so no audited prompt can
occur in any training corpus; ``tests/lab/test_splits.py`` rebuilds every
corpus of every preset from these functions and checks it word for word. The
stages call exactly these functions, so the test sees what training saw.

Only numpy: the corpora can be rebuilt without torch.
"""

from __future__ import annotations

import numpy as np

from rlvr_boundary.lab import task as T

#: Tokenizer training texts (problems written out by the pretraining mixture).
TOKENIZER_TEXTS = 2000

#: Traces of the cue-following control (cued family): each prompt's cued strategy.
CUE_SFT_TRACES = 2000


def triples(cfg) -> tuple[list[tuple], list[tuple]]:
    """``(train, audit)`` digit triples of the run (:func:`rlvr_boundary.lab.task.eval_split`)."""
    return T.eval_split(cfg.n_eval_triples, seed=cfg.split_seed)


def audit_problems(cfg) -> list[T.Problem]:
    """The audit's distinct held-out problems (fixed by ``split_seed``), in draw order."""
    _, ev = triples(cfg)
    rng = np.random.default_rng([cfg.split_seed, 7])
    seen: dict[str, T.Problem] = {}
    while len(seen) < cfg.eval_prompts:
        for p in T.make_problems(cfg.eval_prompts, rng, triples=ev, cued=cfg.cued):
            if len(seen) < cfg.eval_prompts:
                seen.setdefault(p.prompt_id, p)
    return list(seen.values())


def traces(n: int, rng: np.random.Generator, train, *, cued: bool,
           mix=None) -> tuple[list[str], list[str]]:
    """``n`` (prompt, completion) pairs over the ``train`` triples; each completion's
    strategy drawn from ``mix`` (default the pretraining mixture), not from the prompt."""
    w = T._check_mix(T.PRETRAIN_MIX if mix is None else mix)
    names = list(T.STRATEGIES)
    problems = T.make_problems(n, rng, triples=train, cued=cued)
    strategies = rng.choice(len(names), size=n, p=w)
    return ([p.prompt for p in problems],
            [T.trace(p, names[s]) for p, s in zip(problems, strategies)])


def pretrain_corpus(cfg) -> tuple[list[str], list[str]]:
    """The base model's pretraining corpus: ``pretrain.traces`` traces over the train triples."""
    train, _ = triples(cfg)
    return traces(cfg.pretrain.traces, np.random.default_rng(cfg.pretrain.seed), train,
                  cued=cfg.cued)


def tokenizer_corpus(cfg) -> list[str]:
    """The tokenizer's training texts (prompt + completion) over the train triples."""
    train, _ = triples(cfg)
    prompts, comps = traces(TOKENIZER_TEXTS, np.random.default_rng([cfg.seed, 1]), train,
                            cued=cfg.cued)
    return [p + c for p, c in zip(prompts, comps)]


def rl_problems(cfg, step: int, make=None) -> list[T.Problem]:
    """The problems of RL step ``step`` (1-based): ``grpo.prompts_per_step`` over the train
    triples, from the seed ``(grpo.seed, step)``, so a resumed run draws the same.

    ``make(count, rng, triples)`` draws them (default: the task's prompt distribution; the
    distillation experiment passes its four-strategy distribution).
    """
    train, _ = triples(cfg)
    rng = np.random.default_rng([cfg.grpo.seed, step])
    if make is None:
        return T.make_problems(cfg.grpo.prompts_per_step, rng, triples=train, cued=cfg.cued)
    return make(cfg.grpo.prompts_per_step, rng, train)


def rl_corpus(cfg, make=None) -> list[T.Problem]:
    """Every problem the RL stage draws, steps 1..``grpo.steps`` in order."""
    return [p for s in range(1, cfg.grpo.steps + 1) for p in rl_problems(cfg, s, make)]


def cue_sft_corpus(cfg) -> tuple[list[str], list[str]]:
    """The cue-following control's fine-tuning data (cued family): problems over the train
    triples, each written out by the strategy its cue names (which always solves it)."""
    train, _ = triples(cfg)
    problems = T.make_problems(CUE_SFT_TRACES, np.random.default_rng([cfg.seed, 21]),
                               triples=train, cued=True)
    return [p.prompt for p in problems], [T.trace(p, p.cued_strategy) for p in problems]
