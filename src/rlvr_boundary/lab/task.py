"""The lab's task: "make t from a b c", with three readable strategies, in two families.

A prompt gives three digits a, b, c (1..9) and a target digit t and asks for an
expression over a, b, c (in that order) whose value ends in t::

    make 9 from 7 8 4:

In the ``cued`` family the prompt also carries a cue word, fixed by the
strategy the prompt was built from (:data:`CUES`)::

    make 9 from 7 8 4 ox:

A completion names one of three strategies, works it out digit by digit, and
commits to an expression::

     add: 7+8 ends 5, 5+4 ends 9. answer 7+8+4

The strategies are the three operators applied twice, left to right:

========  ===========================  ===========================
name      expression                   value mod 10
========  ===========================  ===========================
``add``   ``a+b+c``                    ``(a + b + c) % 10``
``mul``   ``a*b*c``                    ``(a * b * c) % 10``
``sub``   ``a-b-c``                    ``(a - b - c) % 10`` (Python's ``%``: never negative)
========  ===========================  ===========================

Verification (:func:`verify`) evaluates the committed expression left to right
(``(a op1 b) op2 c``), never trusting the worked digits in the text, and checks
that its last digit is t and its operands are the prompt's digits in order.
The strategy of a sample (:func:`parse`) is read from the text: the name before
the colon and the operators of the answer; a completion whose name and
operators disagree, or whose two operators differ, is labelled ``mixed``.

Why the task produces specialization
------------------------------------
Every strategy is correct on the prompts whose target it happens to produce,
so the fitness matrix ``F[s, x] = 1[s(a, b, c) % 10 == t]`` is binary, every
strategy has prompts that only it solves, and the prompts a minority strategy
alone solves form a sizeable block. Which strategy fits a prompt is decidable
from the prompt, but only by computing all three values mod 10 and comparing
them with t: a composition a tiny model does not find in a few hundred
policy-gradient steps. What RL can do quickly is shift the *global* mixture
towards the strategy that is right most often: exactly the exponential-tilt
model of the No Free Lunch paper, with a ground-truth strategy label on every
sample. The base model's mixture is known by construction: pretraining traces
draw their strategy from ``PRETRAIN_MIX`` independently of the prompt.

The prompt distribution draws the gold strategy from ``GOLD_MIX`` (add is right
most often, sub least), so the pass@1-optimal shift is towards ``add`` and the
sub-only prompts are the ones RL gives up.

The two families
----------------
``plain`` (the tilt case): the prompt alone, as above. ``cued``: the same
prompts (the same digits, targets and fitness matrix) with one more word, the
cue of the gold strategy (``ox`` for add, ``elk`` for mul, ``yak`` for sub). The
gold strategy always solves its prompt, so a policy that reads the cue solves
every prompt at pass@1: a prompt-conditional policy a tiny model can learn (one
token decides it). The cue words are arbitrary, not the strategy names, so the
mapping has to be learned from the reward. Pretraining traces still draw their
strategy independently of the prompt, so the base ignores the cue; whether RL
learns it (per-prompt strategy choice) or tilts the global mixture is what the
family measures.

References
----------
The shared-strategy model and exponential tilt: "No Free Lunch in RLVR: every
pass@1 gain has a pass@k price". Countdown-style arithmetic tasks as verifiable
RL toys follow TinyZero (Pan et al., 2025).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

__all__ = [
    "STRATEGIES",
    "GOLD_MIX",
    "PRETRAIN_MIX",
    "CUES",
    "TASKS",
    "Problem",
    "Parsed",
    "apply",
    "fitness",
    "fitness_matrix",
    "make_problems",
    "eval_split",
    "parse",
    "problem_of_id",
    "prompt_text",
    "trace",
    "verify",
]

#: Strategy name -> operator, in a fixed order (the row order of fitness matrices).
STRATEGIES: dict[str, str] = {"add": "+", "mul": "*", "sub": "-"}
_NAME_OF_OP = {op: name for name, op in STRATEGIES.items()}

#: How often each strategy is the one the prompt was built from.
GOLD_MIX: dict[str, float] = {"add": 0.6, "mul": 0.25, "sub": 0.15}

#: The strategy mixture of the pretraining traces (independent of the prompt).
PRETRAIN_MIX: dict[str, float] = {"add": 0.4, "mul": 0.35, "sub": 0.25}

#: Cue word of each strategy in the ``cued`` family (arbitrary words, one token each).
CUES: dict[str, str] = {"add": "ox", "mul": "elk", "sub": "yak"}
_STRATEGY_OF_CUE = {cue: name for name, cue in CUES.items()}

#: The task families: plain (no cue; the tilt case) and cued (the gold strategy's cue).
from rlvr_boundary.lab.registry import TASKS  # noqa: E402  (the registry owns the names)

DIGITS = range(1, 10)


@dataclass(frozen=True)
class Problem:
    """One prompt: digits a, b, c, the target last digit t and, in the cued family, a cue."""

    a: int
    b: int
    c: int
    t: int
    cue: str | None = None
    """Cue word of the gold strategy (:data:`CUES`), or None in the plain family."""

    @property
    def prompt_id(self) -> str:
        base = f"{self.a}{self.b}{self.c}-{self.t}"
        return base if self.cue is None else f"{base}-{self.cue}"

    @property
    def cued_strategy(self) -> str | None:
        """The strategy the cue points to (None without a cue)."""
        return None if self.cue is None else _STRATEGY_OF_CUE[self.cue]

    @property
    def prompt(self) -> str:
        return prompt_text(self)


@dataclass(frozen=True)
class Parsed:
    """What :func:`parse` reads from a completion."""

    strategy: str | None
    """add / mul / sub, ``mixed`` when the text contradicts itself, None if unreadable."""
    answer: str | None
    """The committed expression in canonical form (``7+8+4``), None if absent or malformed."""
    status: str
    """ok, no_answer or parse_fail (the schema's ``verify_status`` values)."""


def apply(op: str, x: int, y: int) -> int:
    """``x op y`` for op in ``+ * -``."""
    if op == "+":
        return x + y
    if op == "*":
        return x * y
    if op == "-":
        return x - y
    raise ValueError(f"unknown operator {op!r}")


def _value(a: int, ops: tuple[str, str], b: int, c: int) -> int:
    return apply(ops[1], apply(ops[0], a, b), c) % 10


def prompt_text(p: Problem) -> str:
    """The prompt string of a problem.

    >>> prompt_text(Problem(7, 8, 4, 9)), prompt_text(Problem(7, 8, 4, 9, "ox"))
    ('make 9 from 7 8 4:', 'make 9 from 7 8 4 ox:')
    """
    cue = "" if p.cue is None else f" {p.cue}"
    return f"make {p.t} from {p.a} {p.b} {p.c}{cue}:"


_ID = re.compile(r"^([1-9])([1-9])([1-9])-([0-9])(?:-([a-z]+))?$")


def problem_of_id(prompt_id: str) -> Problem:
    """The problem of a ``prompt_id`` (``"784-9"`` or ``"784-9-ox"``); ValueError otherwise.

    >>> problem_of_id("784-9-ox")
    Problem(a=7, b=8, c=4, t=9, cue='ox')
    """
    m = _ID.match(str(prompt_id))
    if m is None or (m.group(5) is not None and m.group(5) not in _STRATEGY_OF_CUE):
        raise ValueError(f"not a lab prompt id: {prompt_id!r}")
    a, b, c, t = (int(m.group(i)) for i in range(1, 5))
    return Problem(a, b, c, t, m.group(5))


def trace(p: Problem, strategy: str) -> str:
    """A faithful completion of ``p`` by ``strategy`` (leading space, no end token).

    >>> trace(Problem(7, 8, 4, 9), "add")
    ' add: 7+8 ends 5, 5+4 ends 9. answer 7+8+4'
    """
    op = STRATEGIES[strategy]
    r1 = apply(op, p.a, p.b) % 10
    r2 = apply(op, r1, p.c) % 10
    return (f" {strategy}: {p.a}{op}{p.b} ends {r1}, {r1}{op}{p.c} ends {r2}."
            f" answer {p.a}{op}{p.b}{op}{p.c}")


def fitness(p: Problem) -> np.ndarray:
    """``(S,)`` 0/1: which strategies solve ``p`` (order of :data:`STRATEGIES`)."""
    return np.array([_value(p.a, (op, op), p.b, p.c) == p.t for op in STRATEGIES.values()],
                    dtype=np.float64)


def fitness_matrix(problems) -> np.ndarray:
    """``(S, X)`` fitness matrix ``F[s, x]`` of the theory package."""
    return np.stack([fitness(p) for p in problems], axis=1)  # (S, X)


_HEAD = re.compile(r"^\s*([a-z]+):")
_ANSWER = re.compile(r"answer\s*(\S*)\s*$")
_EXPR = re.compile(r"^(\d)([+*-])(\d)([+*-])(\d)$")


def parse(text: str) -> Parsed:
    """Read the strategy and the committed answer from a completion.

    The strategy is the name before the first colon when the answer's two
    operators agree with it; ``mixed`` when they do not (or differ from each
    other); the name alone when there is no readable answer.
    """
    head = _HEAD.match(text)
    name = head.group(1) if head and head.group(1) in STRATEGIES else None
    m = _ANSWER.search(text)
    if m is None:
        return Parsed(name, None, "no_answer")
    e = _EXPR.match(m.group(1))
    if e is None:
        return Parsed(name, None, "parse_fail")
    op1, op2 = e.group(2), e.group(4)
    strategy = _NAME_OF_OP[op1] if op1 == op2 and name == _NAME_OF_OP[op1] else "mixed"
    return Parsed(strategy, "".join(e.groups()), "ok")


def verify(p: Problem, text: str) -> dict:
    """Verdict on one completion: ``answer``, ``correct``, ``verify_status``, ``strategy``.

    Correct means the committed expression uses a, b, c in order and its value
    (left to right) ends in t. The worked digits in the text are not trusted.
    """
    parsed = parse(text)
    correct = False
    if parsed.answer is not None:
        e = _EXPR.match(parsed.answer)
        a, b, c = int(e.group(1)), int(e.group(3)), int(e.group(5))
        if (a, b, c) == (p.a, p.b, p.c):
            correct = _value(a, (e.group(2), e.group(4)), b, c) == p.t
    return {"answer": parsed.answer, "correct": bool(correct),
            "verify_status": parsed.status, "strategy": parsed.strategy}


def _check_mix(mix: dict[str, float]) -> np.ndarray:
    if set(mix) != set(STRATEGIES):
        raise ValueError(f"a mixture needs exactly the strategies {list(STRATEGIES)}, got {list(mix)}")
    w = np.array([mix[s] for s in STRATEGIES], dtype=np.float64)
    if np.any(w < 0) or not np.isclose(w.sum(), 1.0):
        raise ValueError(f"mixture weights must be >= 0 and sum to 1, got {mix}")
    return w


def make_problems(count: int, rng: np.random.Generator, *, gold_mix=None,
                  triples=None, cued: bool = False) -> list[Problem]:
    """Draw ``count`` problems: digits uniform, target from a gold strategy ~ ``gold_mix``.

    ``triples`` restricts the digits to a given list of (a, b, c) (a train or
    evaluation split). ``cued`` adds the gold strategy's cue word (the cued
    family); the random draws are the same either way, so the two families
    share their digits, targets and fitness matrix draw for draw. Problems may
    repeat.
    """
    w = _check_mix(GOLD_MIX if gold_mix is None else gold_mix)
    ops = list(STRATEGIES.values())
    pool = np.array(list(triples) if triples is not None else
                    [(a, b, c) for a in DIGITS for b in DIGITS for c in DIGITS])  # (N, 3)
    idx = rng.integers(0, len(pool), size=count)
    gold = rng.choice(len(ops), size=count, p=w)
    out = []
    names = list(STRATEGIES)
    for (a, b, c), g in zip(pool[idx], gold):
        a, b, c = int(a), int(b), int(c)
        out.append(Problem(a, b, c, _value(a, (ops[g], ops[g]), b, c),
                           CUES[names[g]] if cued else None))
    return out


def eval_split(n_eval: int, seed: int = 0) -> tuple[list[tuple], list[tuple]]:
    """Split the 729 digit triples into (train, eval) lists, eval of size ``n_eval``.

    Pretraining, the tokenizer and RL draw their problems from the train
    triples; the audit samples problems over the held-out triples only, so no
    audited prompt is ever trained on (:mod:`rlvr_boundary.lab.splits`).
    """
    triples = [(a, b, c) for a in DIGITS for b in DIGITS for c in DIGITS]
    if not 1 <= n_eval < len(triples):
        raise ValueError(f"n_eval must be in 1..{len(triples) - 1}, got {n_eval}")
    perm = np.random.default_rng(seed).permutation(len(triples))
    ev = sorted(triples[i] for i in perm[:n_eval])
    tr = sorted(triples[i] for i in perm[n_eval:])
    return tr, ev
