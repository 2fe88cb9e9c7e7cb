"""Support dynamics of an RLVR model R against its base B (Invisible Leash, Defs 3.1-3.3).

Wu et al. call a correct completion (or problem) *in the support* of a model when
the model gives it positive probability, and in its *empirical support* when the
probability exceeds a small epsilon: what a finite sampling budget can actually
find. The budget k fixes epsilon through

.. math:: \\epsilon(k) = 1 - \\zeta^{1/k}, \\qquad \\zeta = 0.05,

the smallest probability an item can have and still be found among k i.i.d.
samples with probability at least :math:`1 - \\zeta`:
:math:`1 - (1-\\epsilon)^k = 1 - \\zeta`.

What we compute, and why (the empirical rule)
---------------------------------------------
We observe ``n`` samples per prompt and model, of which ``c`` hit the item (a
correct answer for the problem granularity, a given correct answer class for
the answer granularity). For a budget ``k <= n`` an item is in the empirical
support when

.. math:: \\widehat{\\mathrm{pass@}k} = 1 - \\binom{n-c}{k}\\Big/\\binom{n}{k} \\ \\ge\\ 1 - \\zeta .

Reasons:

1. It is Def. 3.2 read through its own calibration. For a true rate p,
   :math:`p \\ge \\epsilon(k) \\iff 1 - (1-p)^k \\ge 1 - \\zeta`, so the
   membership test "p >= epsilon" is exactly "pass@k >= 1 - zeta". We plug in the
   unbiased estimate of pass@k (a U-statistic over all k-subsets of the n
   samples), which uses every sample and does not depend on sample order.
2. At ``k = n`` (the setting of the paper's tables: all samples are the budget)
   the estimate is 0 or 1, and the rule is exactly "found at least once among
   the n samples" (``c >= 1``), the paper's operational definition. ``k=None``
   selects this, with each prompt's own ``n``.
3. The alternative ``c/n >= epsilon`` would demand about 3 hits in n samples
   (``n*epsilon(n) -> -ln zeta ~ 3.0``) at ``k = n`` and so disagree with the
   paper's own practice; "found among the first k samples" depends on sample
   order. We use neither.

The literal reading "found within a random budget of k samples" is a random
event when ``k < n``; :func:`expected_support_regions` gives the exact expected
region counts over independent uniformly random k-subsets of each model's
samples (membership probability = the pass@k estimate), for readers who prefer
that reading. At ``k = n`` both coincide.

Regions and scores
------------------
Preservation P (in both supports), Expansion E (only R), Shrinkage S (only B),
Out of support O (neither), and

.. math:: \\mathrm{SRR} = \\frac{P}{P+S},\\quad \\mathrm{NDR} = \\frac{E}{P+E},\\quad
          \\mathrm{SDS} = \\frac{2\\,\\mathrm{SRR}\\,\\mathrm{NDR}}{\\mathrm{SRR}+\\mathrm{NDR}},\\quad
          \\mathrm{NSCR} = \\frac{E-S}{P+E+S}.

A zero denominator gives ``nan`` (never an exception, never a guessed 0 or 1):
SRR is nan when the base supports nothing (P + S = 0), NDR when R supports
nothing (P + E = 0), SDS when SRR or NDR is nan (SRR + NDR = 0 cannot occur
otherwise), NSCR when P + E + S = 0.

Granularities: per problem (:func:`problem_support`: the item is "a correct
answer to the problem") and per distinct correct answer
(:func:`answer_support`: the items are the (prompt, answer class) pairs among
correct completions). At the answer level O can only hold classes that were
observed in some model's samples but fall below the threshold (or classes you
supply as ``universe``, e.g. gold answers): a class that nobody produced is
invisible.

Deviation: the paper partitions completions with the *base* threshold and the
*RL* threshold at the same epsilon; so do we (one ``k`` for both models). Our
O is relative to the observed universe (problems given, or answer classes
seen/supplied), which the paper leaves implicit.

References
----------
Wu, Xuan, Lu, Liu, Dong, Harchaoui, Choi, "The Invisible Leash: Why RLVR May or
May Not Escape Its Origin", arXiv:2507.14843.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence

import numpy as np

from rlvr_boundary.core.coverage import reaches
from rlvr_boundary.core.passk import check_counts, pass_at_k

__all__ = [
    "DEFAULT_ZETA",
    "REGIONS",
    "epsilon_for_budget",
    "in_empirical_support",
    "support_probability",
    "support_regions",
    "support_metrics",
    "problem_support",
    "answer_support",
    "expected_support_regions",
]

#: Miss probability of the Invisible Leash budget rule.
DEFAULT_ZETA = 0.05

#: Region codes: (in base support, in R support) -> code.
REGIONS = {(True, True): "P", (False, True): "E", (True, False): "S", (False, False): "O"}


def epsilon_for_budget(k, zeta: float = DEFAULT_ZETA):
    """Probability threshold of the empirical support at budget ``k``.

    Parameters
    ----------
    k
        Budget(s), >= 1.
    zeta
        Miss probability in (0, 1).

    Returns
    -------
    float or numpy.ndarray
        :math:`\\epsilon = 1 - \\zeta^{1/k}`, evaluated as ``-expm1(log(zeta)/k)``
        (accurate for large k, where epsilon ~ -ln(zeta)/k).
    """
    _check_zeta(zeta)
    k_arr = np.asarray(k, dtype=np.float64)
    if np.any(k_arr < 1):
        raise ValueError("k must be >= 1")
    eps = -np.expm1(np.log(zeta) / k_arr)
    return float(eps) if eps.ndim == 0 else eps


def _check_zeta(zeta: float) -> None:
    if not 0.0 < float(zeta) < 1.0:
        raise ValueError(f"zeta must lie in (0, 1), got {zeta}")


def support_probability(n, c, k: int | None = None) -> np.ndarray:
    """Probability that a uniformly random k-subset of the samples contains a hit.

    Parameters
    ----------
    n, c
        ``(I,)`` samples and hits per item.
    k
        Budget (``<= min(n)``); ``None`` means each item's own ``n`` (result 0/1).

    Returns
    -------
    numpy.ndarray
        ``(I,)`` the unbiased pass@k estimate :math:`1 - \\binom{n-c}{k}/\\binom{n}{k}`.
    """
    n, c = check_counts(n, c)
    if k is None:
        return (c >= 1).astype(np.float64)
    return pass_at_k(n, c, [int(k)])[:, 0]


def in_empirical_support(n, c, k: int | None = None, *, zeta: float = DEFAULT_ZETA) -> np.ndarray:
    """Empirical-support membership of each item at budget ``k``.

    Parameters
    ----------
    n, c
        ``(I,)`` samples and hits per item.
    k
        Budget ``1 <= k <= min(n)``; ``None``: each item at its own ``n``.
    zeta
        Miss probability; the implied threshold is ``epsilon_for_budget(k, zeta)``.

    Returns
    -------
    numpy.ndarray
        ``(I,)`` bool: :math:`\\widehat{\\mathrm{pass@}k} \\ge 1 - \\zeta`
        (module docstring; with the 1e-12 rounding slack of
        :func:`rlvr_boundary.core.coverage.reaches`); at ``k = n`` this is ``c >= 1``.
    """
    _check_zeta(zeta)
    return reaches(support_probability(n, c, k), 1.0 - zeta)


def support_regions(base_in, r_in) -> dict[str, int]:
    """Counts of the four regions from two membership vectors.

    Parameters
    ----------
    base_in, r_in
        ``(I,)`` bool: item in the base's / R's empirical support.

    Returns
    -------
    dict
        ``{"P", "E", "S", "O"}`` integer counts; they sum to ``I``.
    """
    b, r = np.asarray(base_in), np.asarray(r_in)
    if b.dtype != bool or r.dtype != bool or b.ndim != 1 or b.shape != r.shape:
        raise ValueError("base_in and r_in must be 1-D boolean arrays of equal length")
    return {"P": int(np.sum(b & r)), "E": int(np.sum(~b & r)),
            "S": int(np.sum(b & ~r)), "O": int(np.sum(~b & ~r))}


def support_metrics(P: float, E: float, S: float, O: float = 0.0) -> dict[str, float]:
    """SRR, NDR, SDS and NSCR from region counts (integers or expectations).

    Parameters
    ----------
    P, E, S, O
        Preservation, Expansion, Shrinkage and Out-of-support counts (>= 0).
        ``O`` enters none of the scores; it is accepted for symmetry.

    Returns
    -------
    dict
        ``SRR = P/(P+S)``, ``NDR = E/(P+E)``, ``SDS = 2 SRR NDR/(SRR+NDR)``,
        ``NSCR = (E-S)/(P+E+S)``; ``nan`` where the denominator is 0 (see the
        module docstring), and SDS = 0 when exactly one of SRR, NDR is 0.
    """
    P, E, S, O = (float(x) for x in (P, E, S, O))
    if min(P, E, S, O) < 0 or not all(np.isfinite([P, E, S, O])):
        raise ValueError(f"region counts must be finite and >= 0, got {(P, E, S, O)}")

    def ratio(a: float, b: float) -> float:
        return a / b if b > 0 else float("nan")

    srr, ndr = ratio(P, P + S), ratio(E, P + E)
    if np.isnan(srr) or np.isnan(ndr):
        sds = float("nan")
    else:
        sds = ratio(2.0 * srr * ndr, srr + ndr)
    return {"SRR": srr, "NDR": ndr, "SDS": sds, "NSCR": ratio(E - S, P + E + S)}


def _summary(base_in: np.ndarray, r_in: np.ndarray, k, zeta, eps) -> dict:
    regions = support_regions(base_in, r_in)
    codes = np.array(["O", "S", "E", "P"])[2 * r_in.astype(int) + base_in.astype(int)]
    return {"k": k, "zeta": float(zeta), "epsilon": eps, **regions,
            **support_metrics(**regions), "region": codes}


def _eps_report(k, zeta, *n_arrays) -> float | None:
    if k is not None:
        return epsilon_for_budget(int(k), zeta)
    n_all = np.concatenate([np.asarray(a).ravel() for a in n_arrays])
    if n_all.size and np.all(n_all == n_all[0]):
        return epsilon_for_budget(int(n_all[0]), zeta)
    return None  # k = n varies by prompt: no single epsilon


def problem_support(n_base, c_base, n_r, c_r, k: int | None = None, *,
                    zeta: float = DEFAULT_ZETA) -> dict:
    """Support dynamics per problem (the item is "a correct answer to the problem").

    Parameters
    ----------
    n_base, c_base, n_r, c_r
        ``(P,)`` counts of the base and of R on the same prompts.
    k
        Budget, ``<= min(n)`` of both models; ``None``: ``k = n`` per prompt (``c >= 1``).
    zeta
        Miss probability (epsilon = 1 - zeta^(1/k)).

    Returns
    -------
    dict
        ``k``, ``zeta``, ``epsilon`` (None when k = n varies by prompt), counts
        ``P, E, S, O``, scores ``SRR, NDR, SDS, NSCR``, and ``region``: ``(P,)``
        array of codes "P"/"E"/"S"/"O" per prompt.

    Notes
    -----
    ``P + S`` equals the number of prompts the base solves under
    :func:`rlvr_boundary.core.coverage.solved_at_k` with ``tau = 1 - zeta`` at the
    same ``k``, and ``P + E`` those R solves.
    """
    n_base, c_base = check_counts(n_base, c_base)
    n_r, c_r = check_counts(n_r, c_r)
    if n_base.shape != n_r.shape:
        raise ValueError("base and R must cover the same prompts (equal lengths)")
    b = in_empirical_support(n_base, c_base, k, zeta=zeta)
    r = in_empirical_support(n_r, c_r, k, zeta=zeta)
    return _summary(b, r, k, zeta, _eps_report(k, zeta, n_base, n_r))


def _as_counter(x) -> Counter:
    if isinstance(x, Mapping):
        out = Counter()
        for a, m in x.items():
            if int(m) != m or m < 0:
                raise ValueError(f"answer class {a!r} has an invalid count {m!r}")
            if m:
                out[a] = int(m)
        return out
    if isinstance(x, (str, bytes)):
        raise TypeError("give the correct answers of a prompt as a list or a mapping, not a string")
    return Counter(x)


def _answer_items(base_answers, r_answers, n_base, n_r, universe):
    n_base = np.asarray(n_base, dtype=np.int64)
    n_r = np.asarray(n_r, dtype=np.int64)
    P = len(base_answers)
    if len(r_answers) != P or n_base.shape != (P,) or n_r.shape != (P,):
        raise ValueError("base_answers, r_answers, n_base and n_r must all have one entry per prompt")
    if universe is not None and len(universe) != P:
        raise ValueError("universe must have one entry per prompt")
    prompt, label, nb, cb, nr, cr = [], [], [], [], [], []
    for i in range(P):
        cb_i, cr_i = _as_counter(base_answers[i]), _as_counter(r_answers[i])
        if sum(cb_i.values()) > n_base[i] or sum(cr_i.values()) > n_r[i]:
            raise ValueError(f"prompt {i}: more correct answers than samples")
        keys = set(cb_i) | set(cr_i) | (set(universe[i]) if universe is not None else set())
        for a in sorted(keys, key=lambda v: (type(v).__name__, str(v))):
            prompt.append(i)
            label.append(a)
            nb.append(n_base[i])
            cb.append(cb_i.get(a, 0))
            nr.append(n_r[i])
            cr.append(cr_i.get(a, 0))
    def arr(v):
        return np.asarray(v, dtype=np.int64)

    return arr(prompt), label, arr(nb), arr(cb), arr(nr), arr(cr)


def answer_support(base_answers: Sequence[Mapping[Hashable, int] | Iterable[Hashable]],
                   r_answers: Sequence[Mapping[Hashable, int] | Iterable[Hashable]],
                   n_base, n_r, k: int | None = None, *,
                   zeta: float = DEFAULT_ZETA,
                   universe: Sequence[Iterable[Hashable]] | None = None) -> dict:
    """Support dynamics per distinct correct answer.

    Parameters
    ----------
    base_answers, r_answers
        One entry per prompt: the multiset of canonical answers of the *correct*
        samples of that model, as a list of labels (``["1/2", "1/2", "x=3"]``) or
        a mapping label -> count.
    n_base, n_r
        ``(P,)`` total samples per prompt of each model (correct or not).
    k
        Budget, ``<= min(n)``; ``None``: each prompt's own ``n`` (found at least once).
    zeta
        Miss probability.
    universe
        Optional per-prompt extra answer classes (e.g. every gold answer) so
        that classes neither model produced count in O.

    Returns
    -------
    dict
        As :func:`problem_support`, over the items (prompt, answer class), plus
        ``prompt``: ``(I,)`` prompt index of each item and ``answer``: list of
        the I labels. Items are ordered by prompt, then by label.

    Notes
    -----
    An answer class with ``m`` of a model's ``n`` samples is in that model's
    empirical support when :math:`1 - \\binom{n-m}{k}/\\binom{n}{k} \\ge 1-\\zeta`,
    the problem rule applied to the class.
    """
    prompt, label, nb, cb, nr, cr = _answer_items(base_answers, r_answers, n_base, n_r, universe)
    if prompt.size == 0:
        b = r = np.zeros(0, dtype=bool)
    else:
        b = in_empirical_support(nb, cb, k, zeta=zeta)
        r = in_empirical_support(nr, cr, k, zeta=zeta)
    out = _summary(b, r, k, zeta, _eps_report(k, zeta, n_base, n_r))
    out["prompt"] = prompt
    out["answer"] = label
    return out


def expected_support_regions(n_base, c_base, n_r, c_r, k: int) -> dict:
    """Expected region counts when each model's budget is a random k-subset of its samples.

    Parameters
    ----------
    n_base, c_base, n_r, c_r
        ``(I,)`` samples and hits per item (problems, or answer classes).
    k
        Budget ``<= min(n)``.

    Returns
    -------
    dict
        Expected ``P, E, S, O`` (floats) and the scores of :func:`support_metrics`
        evaluated on them (ratios of expectations, not expected ratios).

    Notes
    -----
    With independent uniformly random k-subsets for the two models, an item is
    "found" by the base with probability :math:`\\pi_B = \\widehat{\\mathrm{pass@}k}`
    and by R with :math:`\\pi_R`, so :math:`E[P] = \\sum \\pi_B\\pi_R`,
    :math:`E[E] = \\sum (1-\\pi_B)\\pi_R`, :math:`E[S] = \\sum \\pi_B(1-\\pi_R)`,
    :math:`E[O] = \\sum (1-\\pi_B)(1-\\pi_R)`: the literal "found within budget k"
    averaged over which k samples were drawn. Equal to the rule of
    :func:`problem_support` when ``k = n``.
    """
    pb = support_probability(n_base, c_base, k)
    pr = support_probability(n_r, c_r, k)
    if pb.shape != pr.shape:
        raise ValueError("base and R must cover the same items (equal lengths)")
    regions = {"P": float(np.sum(pb * pr)), "E": float(np.sum((1 - pb) * pr)),
               "S": float(np.sum(pb * (1 - pr))), "O": float(np.sum((1 - pb) * (1 - pr)))}
    return {"k": int(k), **regions, **support_metrics(**regions)}
