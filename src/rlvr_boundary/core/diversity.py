"""Answer-level diversity of one prompt's samples at a fixed budget k.

A prompt has ``n`` samples whose extracted final answers fall into classes with
sizes ``m_1..m_A`` (``sum m_a = n``); incomplete samples (no answer) form one
class labelled ``"NA"``, as in the Invisible Leash answer-entropy analysis.

The fixed-k quantities
----------------------
Comparing diversity across models needs the same budget k for every model, not
"whatever n each model had". For any statistic f of k samples that is symmetric
in them, the average of f over all :math:`\\binom{n}{k}` k-subsets of the n
samples is a U-statistic: an *unbiased* estimate of :math:`E[f]` over k fresh
i.i.d. samples from the model, and order-free (unlike "the first k samples").
We compute that average exactly, in closed form, for three statistics:

- number of distinct answers among the k:
  :math:`\\sum_a \\big[1 - \\binom{n-m_a}{k}/\\binom{n}{k}\\big]`
  (a class is present unless the subset misses all of it);
- plug-in entropy (nats) :math:`-\\sum_a (X_a/k)\\log(X_a/k)` of the k answers:
  it is a sum over classes of a function of one count, and each count
  :math:`X_a` of a random k-subset is hypergeometric(n, m_a, k), so the exact
  expectation is :math:`\\sum_a \\sum_x \\mathrm{Hyp}(x; n, m_a, k)\\,\\phi(x)`,
  :math:`\\phi(x) = -(x/k)\\log(x/k)`, at cost :math:`\\sum_a \\min(m_a, k) \\le n`;
- collision probability (Simpson concentration) :math:`\\sum_a (X_a/k)^2`, from
  the hypergeometric mean and variance.

The Hill numbers reported are ``exp(expected entropy)`` (order 1) and
``1 / expected collision`` (order 2, inverse Simpson): functions of the exact
expectations, not expectations of the functions (which have no closed form).
At ``k = n`` all of this is the plug-in on the whole sample. The expected
entropy at k is biased low as an estimate of the model's answer entropy (all
plug-in entropies are); it is the right quantity for comparing models at the
same k, which is what it is for.

Deviation: the Invisible Leash reports answer entropy on all samples of each
model; with unequal n across models that mixes budget and diversity, so we
default to a common k (``k=None`` gives their all-samples plug-in).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Sequence

import numpy as np
from scipy.special import gammaln

from rlvr_boundary.core.passk import pass_at_k

__all__ = [
    "NA",
    "answer_class_counts",
    "expected_distinct",
    "expected_entropy",
    "expected_collision",
    "answer_diversity",
    "answer_diversity_many",
]

#: Label of the class of incomplete samples (no extracted answer).
NA = "NA"


def answer_class_counts(answers: Iterable[Hashable | None]) -> tuple[list, np.ndarray]:
    """Group one prompt's extracted answers into classes.

    Parameters
    ----------
    answers
        One canonical answer per sample; ``None`` (incomplete) becomes :data:`NA`.

    Returns
    -------
    labels, counts
        Class labels sorted by count (descending) then label text, and their
        ``(A,)`` int64 sizes.
    """
    cnt = Counter(NA if a is None else a for a in answers)
    items = sorted(cnt.items(), key=lambda kv: (-kv[1], str(kv[0])))
    return [a for a, _ in items], np.asarray([m for _, m in items], dtype=np.int64)


def _check(counts, k) -> tuple[np.ndarray, int, int]:
    m = np.asarray(counts)
    if m.dtype == bool or m.dtype.kind not in "iu":
        if m.dtype.kind == "f" and np.all(m == np.floor(m)):
            m = m.astype(np.int64)
        else:
            raise ValueError("class counts must be integers")
    m = m.astype(np.int64).ravel()
    if m.size == 0 or np.any(m < 0):
        raise ValueError("need at least one class and non-negative class counts")
    m = m[m > 0]
    n = int(m.sum())
    if n < 1:
        raise ValueError("no samples")
    k = n if k is None else int(k)
    if not 1 <= k <= n:
        raise ValueError(f"k = {k} must lie in 1..n = {n} (no unbiased estimate beyond n)")
    return m, n, k


def _log_comb(a, b):
    return gammaln(a + 1.0) - gammaln(b + 1.0) - gammaln(a - b + 1.0)


def expected_distinct(counts, k: int | None = None) -> float:
    """Expected number of distinct classes in a uniformly random k-subset.

    Parameters
    ----------
    counts
        ``(A,)`` class sizes (the NA class included if it should count).
    k
        Budget, ``1 <= k <= n``; ``None``: ``k = n`` (number of non-empty classes).

    Returns
    -------
    float
        :math:`\\sum_a 1 - \\binom{n-m_a}{k}/\\binom{n}{k}`: the sum over classes of
        the unbiased pass@k with the class as "correct"
        (:func:`rlvr_boundary.core.passk.pass_at_k`, stable in log space).
    """
    m, n, k = _check(counts, k)
    found = pass_at_k(np.full(m.size, n, dtype=np.int64), m, [k])[:, 0]  # (A,)
    return float(np.sum(found))


def _hyp_terms(m: np.ndarray, n: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Concatenated support ``x`` (>= 1) and pmf of Hyp(n, m_a, k) over all classes."""
    xs, ps = [], []
    lc_nk = _log_comb(float(n), float(k))
    for ma in np.unique(m):  # classes of equal size share a distribution
        mult = int(np.sum(m == ma))
        lo, hi = max(1, k - (n - int(ma))), min(int(ma), k)
        if hi < lo:
            continue
        x = np.arange(lo, hi + 1, dtype=np.float64)
        logp = _log_comb(float(ma), x) + _log_comb(float(n - ma), k - x) - lc_nk
        xs.append(x)
        ps.append(mult * np.exp(logp))
    return np.concatenate(xs), np.concatenate(ps)


def expected_entropy(counts, k: int | None = None) -> float:
    """Expected plug-in entropy (nats) of the answers in a uniformly random k-subset.

    Parameters
    ----------
    counts
        ``(A,)`` class sizes.
    k
        Budget, ``1 <= k <= n``; ``None``: ``k = n`` (the plug-in entropy).

    Returns
    -------
    float
        :math:`\\sum_a \\sum_{x \\ge 1} \\mathrm{Hyp}(x; n, m_a, k)\\,(-\\tfrac{x}{k}\\log\\tfrac{x}{k})`
        (module docstring); 0 at k = 1.
    """
    m, n, k = _check(counts, k)
    x, p = _hyp_terms(m, n, k)
    q = x / k
    return float(max(0.0, np.sum(p * (-q * np.log(q)))))


def expected_collision(counts, k: int | None = None) -> float:
    """Expected collision probability :math:`\\sum_a (X_a/k)^2` of a random k-subset.

    Notes
    -----
    :math:`E[X_a] = k m_a/n`, :math:`\\mathrm{Var}[X_a] = k\\frac{m_a}{n}(1-\\frac{m_a}{n})\\frac{n-k}{n-1}`
    (hypergeometric), so :math:`E[X_a^2] = \\mathrm{Var} + E^2`. It is unbiased
    for :math:`1/k + (1 - 1/k)\\sum_a p_a^2` over k fresh samples.
    """
    m, n, k = _check(counts, k)
    f = m / n
    mean = k * f
    var = k * f * (1.0 - f) * ((n - k) / (n - 1) if n > 1 else 0.0)
    return float(np.sum(var + mean**2) / k**2)


def answer_diversity(counts, k: int | None = None) -> dict[str, float]:
    """Answer-level diversity of one prompt at budget k.

    Parameters
    ----------
    counts
        ``(A,)`` class sizes, e.g. from :func:`answer_class_counts` (NA is a class).
    k
        Budget; ``None``: all ``n`` samples.

    Returns
    -------
    dict
        ``n``, ``k``, ``distinct`` (expected number of distinct answers),
        ``entropy`` (expected plug-in entropy, nats), ``exp_entropy``
        (``exp(entropy)``, Hill number of order 1), ``inverse_simpson``
        (``1/expected collision``, Hill number of order 2).
    """
    m, n, k = _check(counts, k)
    h = expected_entropy(m, k)
    return {"n": n, "k": k, "distinct": expected_distinct(m, k), "entropy": h,
            "exp_entropy": float(np.exp(h)), "inverse_simpson": 1.0 / expected_collision(m, k)}


def answer_diversity_many(counts_per_prompt: Sequence, k: int | None = None) -> dict[str, np.ndarray]:
    """:func:`answer_diversity` for each prompt.

    Parameters
    ----------
    counts_per_prompt
        One ``(A_i,)`` array of class sizes per prompt.
    k
        Common budget (must be ``<= n_i`` for every prompt); ``None``: each prompt's ``n_i``.

    Returns
    -------
    dict
        ``(P,)`` arrays with the keys of :func:`answer_diversity`.
    """
    rows = [answer_diversity(c, k) for c in counts_per_prompt]
    keys = ("n", "k", "distinct", "entropy", "exp_entropy", "inverse_simpson")
    return {key: np.asarray([r[key] for r in rows]) for key in keys}
