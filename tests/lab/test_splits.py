"""Clean splits: every training corpus rebuilt from its seeds holds no audited prompt (no torch).

The corpora are rebuilt with the functions the stages call
(:mod:`rlvr_boundary.lab.splits`, :mod:`rlvr_boundary.lab.distill`), for both
presets, both task families and every seed the documented experiments use.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from rlvr_boundary.lab import distill as D
from rlvr_boundary.lab import splits
from rlvr_boundary.lab import task as T
from rlvr_boundary.lab.config import LabConfig
from rlvr_boundary.lab.prolonged import ProlongedConfig, long_config

_PROMPT = re.compile(r"make \d from \d \d \d(?: [a-z]+)?:")


def _prompts_in(texts) -> set[str]:
    """Every prompt written anywhere in the texts (not only at their start)."""
    return {m.group(0) for t in texts for m in _PROMPT.finditer(t)}


def _corpora(cfg) -> dict[str, set[str]]:
    prompts, comps = splits.pretrain_corpus(cfg)
    out = {"tokenizer": _prompts_in(splits.tokenizer_corpus(cfg)),
           "pretraining": _prompts_in(p + c for p, c in zip(prompts, comps)),
           "RL": {p.prompt for p in splits.rl_corpus(cfg)}}
    # every prompt the pretraining texts hold is also found by the prompt list itself
    assert out["pretraining"] == set(prompts)
    if cfg.cued:  # the cue-following fine-tune of the seeds experiment
        sft_prompts, sft_comps = splits.cue_sft_corpus(cfg)
        out["cue SFT"] = _prompts_in(p + c for p, c in zip(sft_prompts, sft_comps))
    return out


@pytest.mark.parametrize("preset", ["quick", "full"])
@pytest.mark.parametrize("task", T.TASKS)
def test_no_audited_prompt_in_any_training_corpus(preset, task):
    audited = {p.prompt for p in splits.audit_problems(LabConfig.from_preset(preset, task=task))}
    assert len(audited) == LabConfig.from_preset(preset).eval_prompts
    for seed in (0, 1, 2):  # the pretraining seeds of the seeds experiment
        for rl_seed in (0, 1, 2):
            cfg = LabConfig.from_preset(preset, task=task, seed=seed, rl_seed=rl_seed)
            assert {p.prompt for p in splits.audit_problems(cfg)} == audited  # split_seed only
            for name, corpus in _corpora(cfg).items():
                assert corpus, name
                assert not corpus & audited, (name, sorted(corpus & audited)[:3])


def test_no_audited_digit_triple_is_trained_on():
    """Stronger than the prompts: the audited triples (a, b, c) never occur in training."""
    cfg = LabConfig.from_preset("full")
    train, held = splits.triples(cfg)
    assert len(held) == cfg.n_eval_triples and not set(train) & set(held)
    assert {(p.a, p.b, p.c) for p in splits.audit_problems(cfg)} <= set(held)
    prompts, _ = splits.pretrain_corpus(cfg)
    seen = {tuple(int(x) for x in re.findall(r"\d", p)[1:4]) for p in prompts}
    assert seen <= set(train) and len(seen) > 0.95 * len(train)


def test_the_check_finds_a_leak():
    """The corpus of the earlier lab (problems over all 729 triples, seed 0) held almost every
    audited prompt: the same check counts them."""
    cfg = LabConfig.from_preset("full")
    audited = {p.prompt for p in splits.audit_problems(cfg)}
    prompts, comps = splits.traces(cfg.pretrain.traces, np.random.default_rng(0), None,
                                   cued=False)
    leaked = _prompts_in(p + c for p, c in zip(prompts, comps)) & audited
    assert len(leaked) > 100


def test_distillation_corpora_hold_no_audited_prompt():
    cfg = LabConfig.from_preset("full", experiment="distillation")
    dcfg = D.DistillConfig.from_preset("full")
    audited = {p.prompt for p in D.eval_problems4(cfg, dcfg)}
    teacher_prompts, _ = D.teacher_corpus(cfg, dcfg)

    def four(count, rng, triples):
        return D.make_problems4(count, rng, triples, gold_mix=dcfg.gold_mix)

    corpora = {"tokenizer (mad traces)": _prompts_in(D.tokenizer_texts(cfg)),
               "teacher": set(teacher_prompts),
               "distillation data": {p.prompt for p in D.distill_problems(cfg, dcfg)},
               "RL": {p.prompt for p in splits.rl_corpus(cfg, four)},
               "base": _corpora(cfg)["pretraining"]}
    for name, corpus in corpora.items():
        assert corpus and not corpus & audited, name


def test_prolonged_rl_corpus_holds_no_audited_prompt():
    for task in T.TASKS:
        cfg = LabConfig.from_preset("full", task=task, experiment="prolonged")
        opts = ProlongedConfig.from_preset("full")
        audited = {p.prompt for p in splits.audit_problems(cfg)}
        for r in opts.rl_seeds:
            long = long_config(cfg, opts, r)
            corpus = {p.prompt for p in splits.rl_corpus(long)}
            assert long.grpo.steps == 200 and corpus and not corpus & audited


def test_the_two_families_share_their_problems_draw_for_draw():
    """The cued family is the plain one plus the gold strategy's cue: same digits, targets
    and fitness; the cue always names a strategy that solves the prompt."""
    cued = splits.audit_problems(LabConfig.from_preset("full", task="cued"))
    rng_a, rng_b = np.random.default_rng(5), np.random.default_rng(5)
    a = T.make_problems(500, rng_a)
    b = T.make_problems(500, rng_b, cued=True)
    assert [(p.a, p.b, p.c, p.t) for p in a] == [(q.a, q.b, q.c, q.t) for q in b]
    np.testing.assert_array_equal(T.fitness_matrix(a), T.fitness_matrix(b))
    names = list(T.STRATEGIES)
    for q in b + cued:
        assert T.fitness(q)[names.index(q.cued_strategy)] == 1
        assert q.prompt.endswith(f" {q.cue}:") and T.problem_of_id(q.prompt_id) == q
    assert len({q.prompt_id for q in cued}) == len(cued) == 120
