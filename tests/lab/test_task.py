"""The lab task: traces, parser and verifier against brute-force definitions (no torch)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr_boundary.lab import task as T

ALL = [T.Problem(a, b, c, t) for a in T.DIGITS for b in T.DIGITS for c in T.DIGITS
       for t in range(10)]


def brute_value(a, ops, b, c):
    """Left-to-right evaluation with Python's eval, the plain way."""
    return eval(f"({a}{ops[0]}{b}){ops[1]}{c}") % 10


def test_trace_example():
    p = T.Problem(7, 8, 4, 9)
    assert p.prompt == "make 9 from 7 8 4:"
    assert T.trace(p, "add") == " add: 7+8 ends 5, 5+4 ends 9. answer 7+8+4"
    assert T.trace(p, "sub") == " sub: 7-8 ends 9, 9-4 ends 5. answer 7-8-4"
    assert T.trace(p, "mul") == " mul: 7*8 ends 6, 6*4 ends 4. answer 7*8*4"
    assert T.fitness(p).tolist() == [1.0, 0.0, 0.0]


def test_every_faithful_trace_verifies_iff_its_strategy_fits():
    """Over all 7290 (a, b, c, t): a strategy's own trace is correct exactly when
    the brute-force value ends in t, and parses back to the strategy."""
    for p in ALL:
        f = T.fitness(p)
        for s, (name, op) in enumerate(T.STRATEGIES.items()):
            v = T.verify(p, T.trace(p, name))
            assert v["strategy"] == name and v["verify_status"] == "ok"
            assert v["answer"] == f"{p.a}{op}{p.b}{op}{p.c}"
            assert v["correct"] == (brute_value(p.a, (op, op), p.b, p.c) == p.t) == bool(f[s])


def test_worked_digits_in_trace_are_right():
    for p in ALL[::7]:
        for name, op in T.STRATEGIES.items():
            text = T.trace(p, name)
            r1 = eval(f"{p.a}{op}{p.b}") % 10
            assert f"{p.a}{op}{p.b} ends {r1}," in text
            assert f"{r1}{op}{p.c} ends {eval(f'{r1}{op}{p.c}') % 10}." in text


@pytest.mark.parametrize("text,strategy,answer,status", [
    (" add: 1+2 ends 3, 3+3 ends 6. answer 1+2+3", "add", "1+2+3", "ok"),
    (" add: 1+2 ends 3, 3+3 ends 6. answer 1*2+3", "mixed", "1*2+3", "ok"),
    (" mul: 1*2 ends 2, 2*3 ends 6. answer 1+2+3", "mixed", "1+2+3", "ok"),
    (" sub: 1-2 ends 9, 9-3 ends 6. answer", "sub", None, "parse_fail"),
    (" sub: 1-2 ends 9, 9-3 ends 6.", "sub", None, "no_answer"),
    (" add: 1+2 ends 3, 3+3 ends 6. answer 12+3", "add", None, "parse_fail"),
    ("", None, None, "no_answer"),
    (" foo: answer 1+2+3", "mixed", "1+2+3", "ok"),
])
def test_parse_cases(text, strategy, answer, status):
    got = T.parse(text)
    assert (got.strategy, got.answer, got.status) == (strategy, answer, status)


def test_verify_refuses_other_operands_and_ignores_wrong_work():
    p = T.Problem(1, 2, 3, 6)
    assert not T.verify(p, " add: 3+2 ends 5, 5+1 ends 6. answer 3+2+1")["correct"]
    # wrong worked digits, right expression: the expression decides
    assert T.verify(p, " add: 1+2 ends 4, 4+3 ends 7. answer 1+2+3")["correct"]


@settings(max_examples=300, deadline=None)
@given(a=st.integers(1, 9), b=st.integers(1, 9), c=st.integers(1, 9), t=st.integers(0, 9),
       o1=st.sampled_from("+-*"), o2=st.sampled_from("+-*"))
def test_mixed_expressions_evaluate_left_to_right(a, b, c, t, o1, o2):
    p = T.Problem(a, b, c, t)
    v = T.verify(p, f" add: x. answer {a}{o1}{b}{o2}{c}")
    assert v["correct"] == (brute_value(a, (o1, o2), b, c) == t)
    assert v["strategy"] == ("add" if o1 == o2 == "+" else "mixed")


def test_task_has_exclusive_and_minority_only_prompts():
    """Each strategy is right on a different subset; every strategy has prompts only
    it solves; the minority strategy's exclusive prompts are a sizeable block."""
    rng = np.random.default_rng(0)
    F = T.fitness_matrix(T.make_problems(4000, rng))  # (S, X)
    assert F.shape == (3, 4000)
    assert np.all(F.sum(axis=0) >= 1)  # every problem is solvable by its gold strategy
    only = (F * (F.sum(axis=0) == 1)).mean(axis=1)  # (S,)
    assert np.all(only > 0.05)
    fbar = F.mean(axis=1)
    assert fbar.argmax() == 0 and fbar.argmin() == 2  # add most often right, sub least
    # rows differ pairwise: each strategy is correct on a different subset
    for i, j in itertools.combinations(range(3), 2):
        assert np.any(F[i] != F[j])
    # base pass@1 of the pretraining mixture vs the best single strategy: a gain RL can find
    pi0 = np.array(list(T.PRETRAIN_MIX.values()))
    assert fbar.max() - pi0 @ fbar > 0.15


def test_eval_split_is_disjoint_and_deterministic():
    tr, ev = T.eval_split(200, seed=3)
    assert len(ev) == 200 and len(tr) == 529 and not set(tr) & set(ev)
    assert T.eval_split(200, seed=3) == (tr, ev)
    probs = T.make_problems(500, np.random.default_rng(1), triples=ev)
    assert all((p.a, p.b, p.c) in set(ev) for p in probs)
    with pytest.raises(ValueError):
        T.eval_split(0)
    with pytest.raises(ValueError):
        T.make_problems(3, np.random.default_rng(0), gold_mix={"add": 1.0})


def test_task_module_imports_without_torch():
    import subprocess
    import sys
    code = ("import sys; sys.modules['torch'] = None; sys.modules['transformers'] = None\n"
            "import rlvr_boundary.lab.task as t; print(t.trace(t.Problem(1,2,3,6), 'add'))\n"
            "import rlvr_boundary.lab.splits, rlvr_boundary.lab.strategy\n"
            "import rlvr_boundary.lab.registry, rlvr_boundary.lab.config as c\n"
            "print(len(rlvr_boundary.lab.splits.audit_problems(c.LabConfig.from_preset('full'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "answer 1+2+3" in out.stdout and out.stdout.split()[-1] == "120"


def test_strategy_view_is_zero_on_an_exact_tilt_and_positive_otherwise():
    from rlvr_boundary.lab.strategy import mixture_counts, strategy_view
    from rlvr_boundary.theory.model import tilt

    rng = np.random.default_rng(4)
    problems = T.make_problems(60, rng)
    F = T.fitness_matrix(problems)  # (S, X)
    base = np.tile([40.0, 35.0, 25.0], (60, 1))  # (X, S): the same mixture on every prompt
    target = tilt(base[0] / base[0].sum(), F, 3.0)
    model = np.tile(target * 1000, (60, 1))
    v = strategy_view(F, base, model)
    assert v["tv"] < 1e-9 and v["per_prompt_tv"] < 1e-9 and abs(v["beta"] - 3.0) < 1e-6
    assert v["pass1_tilt"] == pytest.approx(v["pass1_measured"])
    other = np.tile([10.0, 0.0, 90.0], (60, 1))  # away from add: not a tilt towards pass@1
    assert strategy_view(F, base, other)["tv"] > 0.3
    c = mixture_counts(["add", "mul", "mixed", None, "add"], [0, 0, 1, 1, 1], 2)
    assert c.tolist() == [[1, 1, 0], [1, 0, 0]]


def test_cued_problems_carry_the_gold_strategy_cue():
    p = T.Problem(7, 8, 4, 9, "ox")
    assert p.prompt == "make 9 from 7 8 4 ox:" and p.prompt_id == "784-9-ox"
    assert p.cued_strategy == "add" and T.Problem(7, 8, 4, 9).cued_strategy is None
    assert T.problem_of_id("784-9") == T.Problem(7, 8, 4, 9)
    for bad in ("784-9-cat", "784", "084-9", "784-9-ox-1", "784-x", "7845-9", 784):
        with pytest.raises(ValueError):
            T.problem_of_id(bad)
    # the verifier grades the expression, whatever the cue
    assert T.verify(p, T.trace(p, "add")) == T.verify(T.Problem(7, 8, 4, 9), T.trace(p, "add"))
    rng = np.random.default_rng(2)
    cued = T.make_problems(3000, rng, cued=True)
    share = {s: np.mean([q.cued_strategy == s for q in cued]) for s in T.STRATEGIES}
    assert all(abs(share[s] - w) < 0.03 for s, w in T.GOLD_MIX.items())  # cue = gold strategy
