"""The distillation experiment's task extension (the fourth strategy) and its solved-set counts."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from rlvr_boundary.lab import distill as D
from rlvr_boundary.lab import task as T


def test_mad_trace_is_verified_and_labelled():
    p = T.Problem(7, 8, 4, 0)  # 7*8 = 56, 6 + 4 = 10 -> 0
    text = D.trace4(p, "mad")
    assert text == " mad: 7*8 ends 6, 6+4 ends 0. answer 7*8+4"
    v = D.verify4(p, text)
    assert v == {"answer": "7*8+4", "correct": True, "verify_status": "ok", "strategy": "mad"}
    # the name and the operators must agree
    assert D.parse_strategy(" mad: 7*8 ends 6, 6*4 ends 4. answer 7*8*4") == "mixed"
    assert D.parse_strategy(" mul: 7*8 ends 6, 6+4 ends 0. answer 7*8+4") == "mixed"
    assert D.parse_strategy(" mad: 7*8 ends 6") == "mad"
    # the base strategies keep the task's labels
    for s in T.STRATEGIES:
        assert D.parse_strategy(T.trace(p, s)) == s
        assert D.trace4(p, s) == T.trace(p, s)


def test_fitness4_matches_brute_force_and_every_trace():
    problems = [T.Problem(a, b, c, t) for a, b, c in itertools.product(range(1, 10), repeat=3)
                for t in (0, 5)][::7]
    F = D.fitness4(problems)  # (4, X)
    assert F.shape == (4, len(problems))
    for x, p in enumerate(problems):
        ref = [(p.a + p.b + p.c) % 10, (p.a * p.b * p.c) % 10, (p.a - p.b - p.c) % 10,
               (p.a * p.b + p.c) % 10]
        assert F[:, x].tolist() == [float(r == p.t) for r in ref]
        for s, name in enumerate(D.STRATEGIES4):
            assert D.verify4(p, D.trace4(p, name))["correct"] == bool(F[s, x])
    # the first three rows are the task's own fitness matrix
    np.testing.assert_array_equal(F[:3], T.fitness_matrix(problems))


def test_prompt_set_has_prompts_only_the_new_strategy_solves():
    problems = D.make_problems4(4000, np.random.default_rng(0))
    F = D.fitness4(problems)
    assert F.max(axis=0).min() == 1  # every prompt is solved by its gold strategy
    mad_only = (F[3] == 1) & (F[:3].sum(axis=0) == 0)
    assert 0.18 < mad_only.mean() < 0.26  # about one prompt in five
    # restricted to a triple list, and refusing a mixture without the four strategies
    tr, _ = T.eval_split(200)
    ps = D.make_problems4(50, np.random.default_rng(1), tr)
    assert all((p.a, p.b, p.c) in set(tr) for p in ps)
    with pytest.raises(ValueError):
        D.make_problems4(3, np.random.default_rng(0), gold_mix=T.GOLD_MIX)


def test_solved_sets_count_by_model_group_and_pair():
    solved = {"base": np.array([1, 1, 0, 0, 0], bool), "rl": np.array([1, 0, 0, 0, 0], bool),
              "distilled": np.array([1, 1, 1, 0, 1], bool)}
    groups = {"mad_only": np.array([0, 0, 1, 1, 1], bool)}
    s = D.solved_sets(solved, groups)
    assert s["sizes"] == {"all": 5, "mad_only": 3}
    assert s["by_model"]["distilled"] == {"all": 4, "mad_only": 2}
    assert s["by_model"]["base"] == {"all": 2, "mad_only": 0}
    assert s["only"]["distilled"] == {"base": 2, "rl": 3}
    assert s["only"]["base"] == {"rl": 1, "distilled": 0}


def test_options_are_validated():
    assert D.DistillConfig.from_preset("quick").sft_steps == 40
    with pytest.raises(ValueError):
        D.DistillConfig(sft_steps=0)
    with pytest.raises(ValueError):
        D.DistillConfig(gold_mix={"add": 1.0})
    with pytest.raises(ValueError):
        D.DistillConfig(sft_lr=2.0)


def test_band_verdict_names_the_supported_budgets():
    assert D.band_verdict("distilled", [4, 5, 6, 8, 16], []) == (
        "distilled against the base: gain supported at k = 4-6, 8, 16; no supported loss.")
    assert D.band_verdict("step-40", [1], [3, 4]) == (
        "step-40 against the base: gain supported at k = 1; loss supported at k = 3-4.")
    assert D.band_verdict("x", None, None) == (
        "x against the base: no supported gain; no supported loss.")


def test_the_new_strategy_name_is_one_token_of_the_base_vocabulary():
    pytest.importorskip("tokenizers")
    pytest.importorskip("transformers")
    from rlvr_boundary.lab import splits
    from rlvr_boundary.lab.config import LabConfig
    from rlvr_boundary.lab.tokenizer import train_tokenizer

    prompts, comps = splits.traces(600, np.random.default_rng(0), None, cued=False)
    texts = D.tokenizer_texts(LabConfig.from_preset("quick"), n=200)
    assert all(" mad: " in t for t in texts)
    tok = train_tokenizer([p + c for p, c in zip(prompts, comps)] + texts)
    for word in (" add", " mul", " sub", " mad", " ends", " answer"):
        assert len(tok(word, add_special_tokens=False)["input_ids"]) == 1, word
    # a mad trace tokenizes like an add trace: same length, operands at the same positions
    p = T.Problem(7, 8, 4, 0)
    a = tok.convert_ids_to_tokens(tok(T.trace(p, "add"), add_special_tokens=False)["input_ids"])
    m = tok.convert_ids_to_tokens(tok(D.trace4(p, "mad"), add_special_tokens=False)["input_ids"])
    assert len(a) == len(m) and [x for x, y in zip(a, m) if x != y][0] == " add"
