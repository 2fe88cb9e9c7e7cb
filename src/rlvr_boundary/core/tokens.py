"""Token-level statistics of one sample, from per-step arrays, and their group summaries.

Per step t of a completion the generating model has a next-token distribution
:math:`p_t` over a vocabulary of size V. We may see it fully (logits ``(T, V)``,
when scoring with a model) or only through the top-K logprobs an inference
engine returns (``(T, K)``). This module turns either into the per-sample
summary columns of the rollout table (see :data:`SUMMARY_KEYS`), without keeping
the arrays.

- Entropy :math:`H_t = -\\sum_v p_t(v)\\log p_t(v)` (nats): exact from logits;
  from top-K logprobs only an interval is known (:func:`entropy_bounds_topk`),
  and we report it, with its midpoint as ``entropy_mean`` and
  ``entropy_kind = "topk_bounds"`` so nobody mistakes it for the exact value.
- Rollout Branching Factor (RBF, RUC report): per step, the number of tokens in
  the nucleus holding 95% of the probability mass, i.e. the smallest m whose m
  most likely tokens have mass >= 0.95 (the set top_p = 0.95 sampling keeps).
  From top-K logprobs whose mass is below 0.95 the step has a rigorous *lower
  bound*, and the sample is flagged ``rbf_lower_bound``.
- Inverse Simpson :math:`1/\\sum_v p_t(v)^2`: the tail of a truncated top-K
  distribution can change :math:`\\sum p^2` by at most :math:`r\\min(p_K, r)`,
  so it is far less sensitive to truncation than the entropy. Its per-sample mean
  is ``inv_simpson_mean`` (from top-K: the midpoint of the rigorous interval of
  :func:`inverse_simpson_bounds_topk`).
- Perplexity :math:`\\mathrm{PPL} = \\exp(-\\tfrac1T\\sum_t \\log p(y_t))`; we store
  its log. Under another model's scores this is the cross-model perplexity
  (limit-of-RLVR Fig. 6).
- Entropy by relative position: step t (0-based) of T has relative position
  t/T in [0, 1) and goes to bin ``floor(t B / T)``.

Deviations: the RUC report computes RBF from full distributions; with top-K
only we report a lower bound, tighter than K itself (see :func:`rbf_from_topk`).
For exact entropy the schema's interval columns hold the degenerate interval
``[H, H]`` rather than nulls, so downstream code can treat both kinds alike.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy.special import logsumexp

__all__ = [
    "SUMMARY_KEYS",
    "RBF_MASS",
    "log_softmax",
    "entropy_from_logits",
    "entropy_bounds_topk",
    "inverse_simpson_from_logits",
    "inverse_simpson_bounds_topk",
    "rbf_from_logits",
    "rbf_from_topk",
    "log_perplexity",
    "position_bin_means",
    "step_stats",
    "TokenSummarizer",
    "summarize_logits",
    "summarize_topk",
    "describe",
    "group_summaries",
]

#: The per-sample summary columns of the rollout table (rlvr_boundary.io.schema) this module fills.
SUMMARY_KEYS = ("entropy_mean", "entropy_mean_lo", "entropy_mean_hi", "entropy_kind",
                "rbf_mean", "rbf_lower_bound", "inv_simpson_mean", "log_ppl", "entropy_bins")

#: Probability mass of the RBF nucleus.
RBF_MASS = 0.95

#: Slack on mass comparisons (cumulative sums of floats).
_MASS_TOL = 1e-9

#: Largest float64 work array (elements) built at once from a (T, V) input.
_CHUNK_ELEMS = 2**22


def _rows(arr: np.ndarray):
    """Yield row slices of a 2-D array with at most ``_CHUNK_ELEMS`` elements each."""
    step = max(1, _CHUNK_ELEMS // max(1, arr.shape[1]))
    for s in range(0, arr.shape[0], step):
        yield slice(s, s + step)


def _as_2d(x, name: str) -> np.ndarray:
    a = np.asarray(x)
    if a.ndim == 1:
        a = a[None, :]
    if a.ndim != 2 or a.shape[1] == 0:
        raise ValueError(f"{name} must have shape (T, V) or (V,), got {np.shape(x)}")
    if a.dtype.kind not in "fiu":
        raise ValueError(f"{name} must be numeric")
    if np.any(np.isnan(a)) or np.any(a == np.inf):
        raise ValueError(f"{name} contains NaN or +inf")
    if np.any(np.all(a == -np.inf, axis=1)):
        raise ValueError(f"{name} has a step where every entry is -inf")
    return a


def log_softmax(logits, axis: int = -1) -> np.ndarray:
    """Stable log-softmax in float64 (``-inf`` logits stay ``-inf``)."""
    z = np.asarray(logits, dtype=np.float64)
    return z - logsumexp(z, axis=axis, keepdims=True)


def _chunk_stats(z: np.ndarray, *, entropy: bool = True, rbf_mass: float | None = None,
                 ids: np.ndarray | None = None, simpson: bool = False):
    """One pass over float64 logits ``z`` (R, V): entropy, nucleus size, sampled logprob
    (and, with ``simpson=True``, the inverse Simpson index as a fourth output).

    The log-softmax is computed once and shared; each output is None unless asked for.
    """
    logp = z - logsumexp(z, axis=1, keepdims=True)  # (R, V)
    p = np.exp(logp)  # (R, V)
    H = size = lp = None
    if entropy:
        with np.errstate(invalid="ignore"):
            plogp = np.where(p > 0, p * logp, 0.0)
        H = np.maximum(0.0, -np.sum(plogp, axis=1))
    if rbf_mass is not None:
        V = p.shape[1]
        m0 = min(V, 64)
        # the m0 largest of each row (argpartition is O(V)); full sort only if they fall short
        top = np.partition(p, V - m0, axis=1)[:, V - m0:] if m0 < V else p
        size, reached = _nucleus_from_sorted(-np.sort(-top, axis=1), rbf_mass)
        rest = np.flatnonzero(~reached)
        if rest.size:
            size[rest], _ = _nucleus_from_sorted(-np.sort(-p[rest], axis=1), rbf_mass)
    if ids is not None:
        lp = logp[np.arange(z.shape[0]), ids]
    if simpson:
        return H, size, lp, 1.0 / np.sum(p * p, axis=1)
    return H, size, lp


def step_stats(logits, token_ids=None, *, rbf_mass: float = RBF_MASS) -> dict:
    """Per-row entropy, RBF, inverse Simpson and chosen-token logprob, in one pass.

    A model backend calls this once per decoding step on the ``(B, V)`` logits of
    a whole batch (rows are sequences, not steps), then hands each row's values
    to that sequence's :class:`TokenSummarizer` with
    :meth:`TokenSummarizer.add_exact_steps`.

    Parameters
    ----------
    logits
        ``(R, V)`` logits.
    token_ids
        Optional ``(R,)`` chosen token of each row.
    rbf_mass
        Nucleus mass of the RBF.

    Returns
    -------
    dict
        ``entropy`` (R,), ``rbf`` (R,) int64, ``inv_simpson`` (R,) and
        ``token_logprob`` (R,) (None without ``token_ids``); the same values as
        :func:`entropy_from_logits`, :func:`rbf_from_logits`,
        :func:`inverse_simpson_from_logits` and a log-softmax lookup.
    """
    z = _as_2d(logits, "logits")
    R = z.shape[0]
    ids = None
    if token_ids is not None:
        ids = np.asarray(token_ids, dtype=np.int64).ravel()
        if ids.shape != (R,) or np.any(ids < 0) or np.any(ids >= z.shape[1]):
            raise ValueError("token_ids must hold one valid vocabulary index per row")
    H, rbf, simp = np.empty(R), np.empty(R, dtype=np.int64), np.empty(R)
    lp = None if ids is None else np.empty(R)
    for sl in _rows(z):
        H[sl], rbf[sl], lp_sl, simp[sl] = _chunk_stats(
            z[sl].astype(np.float64), rbf_mass=rbf_mass,
            ids=None if ids is None else ids[sl], simpson=True)
        if lp is not None:
            lp[sl] = lp_sl
    return {"entropy": H, "rbf": rbf, "inv_simpson": simp, "token_logprob": lp}


def entropy_from_logits(logits) -> np.ndarray:
    """Exact entropy (nats) of the next-token distribution at each step.

    Parameters
    ----------
    logits
        ``(T, V)`` logits (any float dtype; ``-inf`` allowed for masked tokens).

    Returns
    -------
    numpy.ndarray
        ``(T,)`` :math:`H_t = -\\sum_v p_t(v)\\log p_t(v)`, computed in float64 by
        row chunks as :math:`H = -\\sum_v p\\,(z - \\mathrm{logsumexp}(z))`.
    """
    z = _as_2d(logits, "logits")
    out = np.empty(z.shape[0])
    for sl in _rows(z):
        out[sl] = _chunk_stats(z[sl].astype(np.float64))[0]
    return out


def _topk_probs(top_logprobs, vocab_size: int):
    """Probabilities (T, K) (padding -inf -> 0), top mass, smallest kept prob, K per row."""
    lp = _as_2d(top_logprobs, "top_logprobs").astype(np.float64)  # (T, K)
    if np.any(lp > 1e-6):
        raise ValueError("top_logprobs must be log-probabilities (<= 0)")
    p = np.exp(np.minimum(lp, 0.0))  # (T, K)
    kept = p > 0
    k_eff = kept.sum(axis=1)  # (T,)
    if np.any(k_eff == 0):
        raise ValueError("a step has no finite top-K logprob")
    V = int(vocab_size)
    if np.any(k_eff > V):
        raise ValueError(f"more top-K entries than the vocabulary size {V}")
    mass = p.sum(axis=1)
    if np.any(mass > 1.0 + 1e-4):
        raise ValueError("top-K probabilities sum to more than 1: not log-probabilities of one distribution")
    p_min = np.where(kept, p, np.inf).min(axis=1)  # (T,) p_K
    r = np.clip(1.0 - mass, 0.0, None)  # (T,) tail mass
    return p, mass, p_min, r, k_eff


def entropy_bounds_topk(top_logprobs, vocab_size: int) -> tuple[np.ndarray, np.ndarray]:
    """Rigorous interval for the entropy at each step from top-K logprobs.

    Parameters
    ----------
    top_logprobs
        ``(T, K)`` log-probabilities of the K most likely tokens (any order;
        ``-inf`` entries are padding and ignored).
    vocab_size
        V, the size of the vocabulary the distribution lives on.

    Returns
    -------
    lo, hi
        ``(T,)`` with ``lo <= H_t <= hi``.

    Notes
    -----
    Split :math:`H = H_{top} + H_{tail}` with
    :math:`H_{top} = -\\sum_{i \\le K} p_i \\log p_i` and
    :math:`H_{tail} = -\\sum_{j > K} p_j\\log p_j`, tail mass :math:`r = 1 - \\sum_{i\\le K} p_i`
    spread over V - K tokens, each with :math:`p_j \\le p_K` (the smallest top-K
    probability, since these are the top K).

    - Lower: :math:`-\\log p_j \\ge -\\log p_K` for every tail token, so
      :math:`H_{tail} \\ge r\\log(1/p_K)`.
    - Upper: for a fixed total r over V - K tokens, :math:`-\\sum p_j \\log p_j`
      is concave and symmetric, maximal at the uniform :math:`p_j = r/(V-K)`:
      :math:`H_{tail} \\le -r\\log(r/(V-K))`.

    Hence :math:`H_{top} + r\\log(1/p_K) \\le H \\le H_{top} - r\\log\\frac{r}{V-K}`
    (both ends 0 when r = 0). The interval is non-empty iff :math:`r \\le (V-K)p_K`,
    which any genuine top-K of a V-token distribution satisfies; an input that
    violates it is refused. (The lower end can be sharpened to the vertex
    :math:`\\lfloor r/p_K\\rfloor` tokens at :math:`p_K` plus the remainder; we keep
    the documented form.) Float32 logprobs make r uncertain at the ~1e-7 level.
    """
    p, _, p_min, r, k_eff = _topk_probs(top_logprobs, vocab_size)
    tail_n = (int(vocab_size) - k_eff).astype(np.float64)  # (T,)
    bad = r > tail_n * p_min * (1 + 1e-6) + 1e-7
    if np.any(bad):
        t = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"step {t}: tail mass {r[t]:.3g} cannot fit in V - K = {int(tail_n[t])} tokens of "
            f"probability <= {p_min[t]:.3g}; check vocab_size and that these are full-softmax logprobs")
    with np.errstate(divide="ignore", invalid="ignore"):
        h_top = -np.sum(np.where(p > 0, p * np.log(p), 0.0), axis=1)
        pos = r > 0
        lo_tail = np.where(pos, r * -np.log(p_min), 0.0)
        hi_tail = np.where(pos, r * (np.log(np.maximum(tail_n, 1.0)) - np.log(np.where(pos, r, 1.0))), 0.0)
    lo = h_top + lo_tail
    hi = np.maximum(h_top + hi_tail, lo)  # guard the r ~ (V-K) p_K rounding edge
    return lo, hi


def inverse_simpson_from_logits(logits) -> np.ndarray:
    """Inverse Simpson index :math:`1/\\sum_v p_t(v)^2` at each step (``(T,)``)."""
    z = _as_2d(logits, "logits")
    out = np.empty(z.shape[0])
    for sl in _rows(z):
        logp = log_softmax(z[sl], axis=1)
        out[sl] = 1.0 / np.sum(np.exp(2.0 * logp), axis=1)
    return out


def inverse_simpson_bounds_topk(top_logprobs, vocab_size: int) -> tuple[np.ndarray, np.ndarray]:
    """Rigorous interval for the inverse Simpson index from top-K logprobs.

    Notes
    -----
    With :math:`S = \\sum_{i\\le K} p_i^2` and tail mass r over V - K tokens of
    probability at most :math:`p_K`: :math:`\\sum_j p_j^2 \\ge r^2/(V-K)`
    (Cauchy-Schwarz) and :math:`\\sum_j p_j^2 \\le \\max_j p_j \\cdot r \\le \\min(p_K, r)\\,r`.
    So :math:`1/(S + r\\min(p_K, r)) \\le D_2 \\le 1/(S + r^2/(V-K))`.

    Returns
    -------
    lo, hi
        ``(T,)`` bounds on :math:`1/\\sum_v p_t(v)^2`.
    """
    p, _, p_min, r, k_eff = _topk_probs(top_logprobs, vocab_size)
    s = np.sum(p**2, axis=1)
    tail_n = np.maximum(int(vocab_size) - k_eff, 1).astype(np.float64)
    return 1.0 / (s + r * np.minimum(p_min, r)), 1.0 / (s + r**2 / tail_n)


def _nucleus_from_sorted(p_desc: np.ndarray, mass: float) -> tuple[np.ndarray, np.ndarray]:
    """Nucleus size from rows sorted descending; also whether the rows reached ``mass``."""
    cum = np.cumsum(p_desc, axis=1)  # (R, m)
    below = cum < mass - _MASS_TOL
    return 1 + below.sum(axis=1), ~below[:, -1]


def rbf_from_logits(logits, mass: float = RBF_MASS) -> np.ndarray:
    """Rollout branching factor at each step from full logits.

    Parameters
    ----------
    logits
        ``(T, V)``.
    mass
        Nucleus mass (0.95 in the RUC report).

    Returns
    -------
    numpy.ndarray
        ``(T,)`` int64: the smallest m such that the m most likely tokens hold at
        least ``mass`` of the probability (ties do not change m).

    Notes
    -----
    Mass comparisons allow a ``1e-9`` float slack. Each row first tries the top
    64 tokens (``argpartition``, O(V)) and falls back to a full sort only when
    those do not reach ``mass``.
    """
    if not 0.0 < mass <= 1.0:
        raise ValueError("mass must lie in (0, 1]")
    z = _as_2d(logits, "logits")
    out = np.empty(z.shape[0], dtype=np.int64)
    for sl in _rows(z):
        out[sl] = _chunk_stats(z[sl].astype(np.float64), entropy=False, rbf_mass=mass)[1]
    return out


def rbf_from_topk(top_logprobs, vocab_size: int, mass: float = RBF_MASS) -> tuple[np.ndarray, np.ndarray]:
    """Rollout branching factor at each step from top-K logprobs.

    Parameters
    ----------
    top_logprobs
        ``(T, K)`` log-probabilities of the top-K tokens (``-inf`` = padding).
    vocab_size
        V (caps the lower bound).
    mass
        Nucleus mass.

    Returns
    -------
    rbf, is_lower_bound
        ``(T,)`` int64 and ``(T,)`` bool. Where the top-K mass reaches ``mass``
        the value is exact (the nucleus lies inside the top K). Otherwise it is
        the lower bound :math:`K + \\lceil (\\mathrm{mass} - S_K)/p_K \\rceil`
        (capped at V): every missing token has probability at most :math:`p_K`,
        so at least that many more are needed; the flag is True.
    """
    if not 0.0 < mass <= 1.0:
        raise ValueError("mass must lie in (0, 1]")
    p, top_mass, p_min, _, k_eff = _topk_probs(top_logprobs, vocab_size)
    size, reached = _nucleus_from_sorted(-np.sort(-p, axis=1), mass)
    short = ~reached
    extra = np.ceil(np.maximum(mass - _MASS_TOL - top_mass, 0.0) / p_min)
    lower = np.minimum(k_eff + np.maximum(extra, 1.0), int(vocab_size)).astype(np.int64)
    return np.where(short, lower, size), short


def log_perplexity(token_logprobs, mask=None) -> float:
    """Mean negative log-likelihood per token, :math:`\\log\\mathrm{PPL} = -\\frac1T\\sum_t \\log p(y_t)`.

    Parameters
    ----------
    token_logprobs
        ``(T,)`` log-probability of each generated token under the scoring model
        (the generating model, or another one for cross-model perplexity).
    mask
        Optional ``(T,)`` bool of tokens to include.

    Returns
    -------
    float
        ``log PPL`` (``PPL = exp`` of it); ``nan`` for no tokens.
    """
    lp = np.asarray(token_logprobs, dtype=np.float64).ravel()
    if mask is not None:
        lp = lp[np.asarray(mask, dtype=bool).ravel()]
    if lp.size == 0:
        return float("nan")
    if np.any(np.isnan(lp)) or np.any(lp > 1e-6):
        raise ValueError("token_logprobs must be log-probabilities (<= 0, not NaN)")
    return float(-np.mean(lp))


def position_bin_means(values, bins: int) -> np.ndarray:
    """Mean of a per-step quantity in B equal relative-position bins.

    Parameters
    ----------
    values
        ``(T,)`` per-step values (e.g. entropies).
    bins
        B.

    Returns
    -------
    numpy.ndarray
        ``(B,)`` means; ``nan`` for a bin with no step (when T < B). Step t of T
        (0-based) has relative position t/T and goes to bin ``(t * B) // T``
        (integer arithmetic: no rounding at bin edges).
    """
    v = np.asarray(values, dtype=np.float64).ravel()
    B = int(bins)
    if B < 1:
        raise ValueError("bins must be >= 1")
    T = v.size
    out = np.full(B, np.nan)
    if T == 0:
        return out
    idx = (np.arange(T, dtype=np.int64) * B) // T  # (T,)
    cnt = np.bincount(idx, minlength=B)
    tot = np.bincount(idx, weights=v, minlength=B)
    has = cnt > 0
    out[has] = tot[has] / cnt[has]
    return out


class TokenSummarizer:
    """Streaming per-sample token summary.

    Feed the steps of one completion in order, in chunks of any size, then call
    :meth:`result`. Only O(T) floats are kept (per-step entropies, needed for the
    relative-position bins, whose edges depend on the final T); logits and top-K
    arrays are discarded after each call.

    Parameters
    ----------
    bins
        Number of relative-position bins (the ``position_bins`` a run records in its
        manifest; 10 by default).
    vocab_size
        Vocabulary size, required for top-K input.
    rbf_mass
        Nucleus mass of the RBF.

    Examples
    --------
    >>> s = TokenSummarizer(bins=4)
    >>> s.add_logits(np.zeros((3, 5)), token_ids=[0, 1, 2])
    >>> round(s.result()["entropy_mean"], 6) == round(float(np.log(5)), 6)
    True
    """

    def __init__(self, bins: int = 10, vocab_size: int | None = None,
                 rbf_mass: float = RBF_MASS) -> None:
        if int(bins) < 1:
            raise ValueError("bins must be >= 1")
        self.bins = int(bins)
        self.vocab_size = None if vocab_size is None else int(vocab_size)
        self.rbf_mass = float(rbf_mass)
        self._kind: str | None = None
        self._lo: list[np.ndarray] = []
        self._hi: list[np.ndarray] = []
        self._rbf: list[np.ndarray] = []
        self._simp: list[np.ndarray] = []
        self._rbf_lb = False
        self._nll_sum = 0.0
        self._nll_count = 0
        self._steps = 0

    def _set_kind(self, kind: str) -> None:
        if self._kind is not None and self._kind != kind:
            raise ValueError(f"cannot mix {self._kind!r} and {kind!r} steps in one sample")
        self._kind = kind

    def add_logits(self, logits, token_ids=None) -> None:
        """Add ``(t, V)`` logits of the next t steps (and the sampled ``(t,)`` ids, for log PPL)."""
        z = _as_2d(logits, "logits")
        self._set_kind("exact")
        T = z.shape[0]
        ids = None
        if token_ids is not None:
            ids = np.asarray(token_ids, dtype=np.int64).ravel()
            if ids.shape != (T,) or np.any(ids < 0) or np.any(ids >= z.shape[1]):
                raise ValueError("token_ids must hold one valid vocabulary index per step")
        st = step_stats(z, ids, rbf_mass=self.rbf_mass)
        self.add_exact_steps(st["entropy"], st["rbf"], st["inv_simpson"], st["token_logprob"])

    def add_exact_steps(self, entropy, rbf, inv_simpson, token_logprobs=None) -> None:
        """Add per-step values already computed from full logits (see :func:`step_stats`).

        ``entropy``, ``rbf``, ``inv_simpson`` and the optional ``token_logprobs``
        are ``(t,)`` arrays of the next t steps. This is how a batched backend
        feeds one row of a ``(B, V)`` step without building per-row logits.
        """
        h = np.asarray(entropy, dtype=np.float64).ravel()
        r = np.asarray(rbf, dtype=np.int64).ravel()
        d = np.asarray(inv_simpson, dtype=np.float64).ravel()
        if not (h.shape == r.shape == d.shape):
            raise ValueError("entropy, rbf and inv_simpson must have one entry per step")
        self._set_kind("exact")
        self._lo.append(h)
        self._hi.append(h)
        self._rbf.append(r)
        self._simp.append(d)
        if token_logprobs is not None:
            tl = np.asarray(token_logprobs, dtype=np.float64).ravel()
            if tl.shape != h.shape:
                raise ValueError("token_logprobs must have one entry per step")
            self.add_token_logprobs(tl)
        self._steps += h.size

    def add_topk(self, top_logprobs, token_logprobs=None) -> None:
        """Add ``(t, K)`` top-K logprobs of the next t steps (and the sampled tokens' ``(t,)`` logprobs)."""
        if self.vocab_size is None:
            raise ValueError("top-K input needs vocab_size (the interval depends on V - K)")
        lp = _as_2d(top_logprobs, "top_logprobs")
        self._set_kind("topk_bounds")
        lo, hi = entropy_bounds_topk(lp, self.vocab_size)
        rbf, lb = rbf_from_topk(lp, self.vocab_size, self.rbf_mass)
        s_lo, s_hi = inverse_simpson_bounds_topk(lp, self.vocab_size)
        self._lo.append(lo)
        self._hi.append(hi)
        self._rbf.append(rbf)
        self._simp.append(0.5 * (s_lo + s_hi))
        self._rbf_lb = self._rbf_lb or bool(np.any(lb))
        if token_logprobs is not None:
            tl = np.asarray(token_logprobs, dtype=np.float64).ravel()
            if tl.shape != (lp.shape[0],):
                raise ValueError("token_logprobs must have one entry per step")
            self.add_token_logprobs(tl)
        self._steps += lp.shape[0]

    def add_token_logprobs(self, token_logprobs) -> None:
        """Add sampled-token logprobs only (log PPL), e.g. when no distribution was kept."""
        tl = np.asarray(token_logprobs, dtype=np.float64).ravel()
        if np.any(np.isnan(tl)) or np.any(tl > 1e-6):
            raise ValueError("token_logprobs must be log-probabilities (<= 0, not NaN)")
        self._nll_sum += float(-np.sum(tl))
        self._nll_count += tl.size

    def result(self) -> dict:
        """The summary columns (:data:`SUMMARY_KEYS`) as a plain dict; None where undefined."""
        out: dict = dict.fromkeys(SUMMARY_KEYS)
        out["rbf_lower_bound"] = self._rbf_lb
        out["entropy_kind"] = self._kind
        out["entropy_bins"] = [None] * self.bins
        if self._nll_count:
            out["log_ppl"] = self._nll_sum / self._nll_count
        if self._lo:
            lo, hi = np.concatenate(self._lo), np.concatenate(self._hi)
            if lo.size:
                mid = 0.5 * (lo + hi)
                out["entropy_mean_lo"] = float(np.mean(lo))
                out["entropy_mean_hi"] = float(np.mean(hi))
                out["entropy_mean"] = float(np.mean(mid))
                out["rbf_mean"] = float(np.mean(np.concatenate(self._rbf)))
                out["inv_simpson_mean"] = float(np.mean(np.concatenate(self._simp)))
                out["entropy_bins"] = [None if math.isnan(x) else float(x)
                                       for x in position_bin_means(mid, self.bins)]
        return out


def summarize_logits(logits, token_ids=None, *, bins: int = 10, rbf_mass: float = RBF_MASS) -> dict:
    """One-shot :class:`TokenSummarizer` over ``(T, V)`` logits."""
    s = TokenSummarizer(bins=bins, rbf_mass=rbf_mass)
    s.add_logits(logits, token_ids)
    return s.result()


def summarize_topk(top_logprobs, vocab_size: int, token_logprobs=None, *, bins: int = 10,
                   rbf_mass: float = RBF_MASS) -> dict:
    """One-shot :class:`TokenSummarizer` over ``(T, K)`` top-K logprobs."""
    s = TokenSummarizer(bins=bins, vocab_size=vocab_size, rbf_mass=rbf_mass)
    s.add_topk(top_logprobs, token_logprobs)
    return s.result()


_IS_NONE = np.frompyfunc(lambda x: x is None, 1, 1)

#: Quantiles reported by :func:`describe`.
DEFAULT_QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)


def describe(values, quantiles: Sequence[float] = DEFAULT_QUANTILES) -> dict:
    """Count, mean, std and quantiles of a column, skipping missing values.

    Parameters
    ----------
    values
        ``(N,)`` or ``(N, B)`` (e.g. ``entropy_bins``); ``None``/``nan`` are missing.
    quantiles
        Probabilities in [0, 1] (linear interpolation, numpy's default).

    Returns
    -------
    dict
        ``n`` (non-missing count), ``missing``, ``mean``, ``std`` (population,
        ddof = 0) and ``q`` (one entry per quantile); scalars for 1-D input,
        ``(B,)`` arrays for 2-D; ``nan`` where nothing is left.
    """
    a = np.asarray(values, dtype=object)
    a = np.where(_IS_NONE(a).astype(bool), np.nan, a).astype(np.float64)
    one_d = a.ndim == 1
    a = a[:, None] if one_d else a
    if a.ndim != 2:
        raise ValueError("values must be 1-D or 2-D")
    qs = np.asarray(quantiles, dtype=np.float64)
    if np.any((qs < 0) | (qs > 1)):
        raise ValueError("quantiles must lie in [0, 1]")
    B = a.shape[1]
    n = np.zeros(B, dtype=np.int64)
    mean, std = np.full(B, np.nan), np.full(B, np.nan)
    q = np.full((qs.size, B), np.nan)
    for b in range(B):
        col = a[:, b][~np.isnan(a[:, b])]
        n[b] = col.size
        if col.size:
            mean[b], std[b] = col.mean(), col.std()
            q[:, b] = np.quantile(col, qs)
    res = {"n": n, "missing": a.shape[0] - n, "mean": mean, "std": std, "q": q}
    if one_d:
        return {"n": int(n[0]), "missing": int(a.shape[0] - n[0]), "mean": float(mean[0]),
                "std": float(std[0]), "q": {float(p): float(v) for p, v in zip(qs, q[:, 0])}}
    res["q"] = {float(p): q[i] for i, p in enumerate(qs)}
    return res


def group_summaries(values, *keys, quantiles: Sequence[float] = DEFAULT_QUANTILES) -> list[tuple]:
    """:func:`describe` of ``values`` within each group of one or more key columns.

    Parameters
    ----------
    values
        ``(N,)`` or ``(N, B)`` per-sample values (e.g. ``entropy_mean``).
    *keys
        ``(N,)`` key columns, e.g. ``model`` and ``correct`` for positive vs
        negative samples per model.
    quantiles
        As in :func:`describe`.

    Returns
    -------
    list of (key tuple, dict)
        One entry per distinct key combination, sorted by the keys' string form.
    """
    if not keys:
        raise ValueError("give at least one key column")
    vals = np.asarray(values, dtype=object)
    N = vals.shape[0]
    cols = [np.asarray(k, dtype=object).ravel() for k in keys]
    if any(c.shape != (N,) for c in cols):
        raise ValueError("every key column must have one entry per value")
    groups: dict[tuple, list[int]] = {}
    for i in range(N):
        groups.setdefault(tuple(c[i] for c in cols), []).append(i)
    out = []
    for key in sorted(groups, key=lambda t: tuple(str(x) for x in t)):
        out.append((key, describe(vals[groups[key]], quantiles)))
    return out
