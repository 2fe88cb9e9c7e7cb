"""Perplexity- and position-based advantage shaping (RUC report, arXiv 2508.07534).

Both act *after* the group advantage has been computed:

- **perplexity** (sequence level): within each group, standardize the log-PPL of
  each completion, :math:`w_i = (\\log\\mathrm{PPL}_i - \\mu)/\\sigma`, and scale
  :math:`A_i \\leftarrow A_i (1 - \\alpha w_i)`: low-perplexity completions get a
  slightly larger advantage. ``sigma`` is the *population* std of the group, as
  the report's worked example says. Its arithmetic slips, though: for PPLs
  1.2, 1.5, 1.8, 2.1, 2.4 the log-PPLs have mu = 0.5586 and population std
  0.2449 (sample std 0.2738), not the 0.2525 it prints. At alpha = 0.01 the
  end factors round to its 1.015 and 0.987 either way; at alpha = 1 the correct
  population-std factors are 2.54 and -0.29, not its 2.49 and -0.26 (which
  follow from 0.2525). We implement the stated definition.
- **position** (token level): with the relative position :math:`l_t = (t-1)/L`,
  :math:`A_t \\leftarrow A_t + \\mathrm{sign}(A_t)\\min(\\gamma\\,
  \\sigma(d\\,m\\,(l_t + n)), \\tfrac12|A_t|)`, only while a step window holds
  (200 < step < 300 in the paper).

Deviations and decisions, each a parameter:

- A published summary of the report (in Chinese) substitutes ``n`` with the wrong sign in its
  position example (it evaluates ``15 (l + 0.5)`` and finds the sigmoid
  saturated). We follow the paper's code, ``sigmoid(15 (l - 0.5))`` with
  ``n = -0.5``: the bias is 0.0025 gamma at l = 0.1, 0.5 gamma at 0.5 and
  0.9975 gamma at 0.9.
- Optional 1.5 IQR outlier exclusion (the authors' code): completions whose
  log-PPL lies outside ``[Q1 - 1.5 IQR, Q3 + 1.5 IQR]`` of their group (quartiles
  by linear interpolation, NumPy's default) are left out of ``mu`` and ``sigma``
  and are themselves left unshaped (``w = 0``); otherwise an outlier's z-score
  against the inlier statistics is unbounded and could flip its advantage.
- A group with (near) zero log-PPL spread, or of one completion, is left
  unshaped (``w = 0``) rather than divided by zero.
- The optional clamp applies to the multiplier ``1 - alpha w`` (e.g. [0.8, 1.2]).
- Sign preservation: without outliers, a population z-score in a group of G is
  at most ``sqrt(G - 1)`` in size, so at ``alpha = 0.01`` the multiplier stays
  positive for any G up to 10,001; the position bias has the sign of A and at
  most half its size, so it never flips a sign.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "apply_perplexity_shaping",
    "apply_position_shaping",
    "broadcast_to_tokens",
    "in_window",
    "log_perplexity",
    "perplexity_multipliers",
    "perplexity_zscores",
    "position_bias",
    "relative_positions",
]


def _check_mask(mask, shape=None) -> np.ndarray:
    m = np.asarray(mask)
    if m.ndim != 2:
        raise ValueError(f"mask must have shape (batch, tokens), got {m.shape}")
    if shape is not None and m.shape != tuple(shape):
        raise ValueError(f"mask shape {m.shape} differs from {tuple(shape)}")
    if not np.all((m == 0) | (m == 1)):
        raise ValueError("mask must hold only 0/1 (or booleans)")
    return m.astype(np.float64)


def log_perplexity(token_logprobs, mask) -> np.ndarray:
    """Per-sequence log-perplexity, the mean negative log-likelihood of its tokens.

    Parameters
    ----------
    token_logprobs
        ``(B, T)`` log-probability of each sampled token.
    mask
        ``(B, T)`` 1 for response tokens, 0 for padding.

    Returns
    -------
    numpy.ndarray
        ``(B,)``: :math:`-\\frac{1}{T_i}\\sum_t m_{it}\\log p_{it}`.
    """
    lp = np.asarray(token_logprobs, dtype=np.float64)
    m = _check_mask(mask, lp.shape)
    counts = m.sum(axis=1)  # (B,)
    if np.any(counts == 0):
        raise ValueError(f"sequence {int(np.flatnonzero(counts == 0)[0])} has no response tokens")
    lp = np.where(m > 0, lp, 0.0)
    if not np.all(np.isfinite(lp)):
        raise ValueError("token log-probabilities must be finite on response tokens")
    return -(lp * m).sum(axis=1) / counts


def perplexity_zscores(log_ppl, *, iqr_exclude: bool = False, iqr_factor: float = 1.5,
                       min_std: float = 1e-8) -> np.ndarray:
    """Per-group z-scores of log-perplexity with the population std.

    Parameters
    ----------
    log_ppl
        ``(P, G)`` log-PPL of each completion.
    iqr_exclude
        Leave out completions beyond ``iqr_factor`` IQRs from the quartiles when
        computing ``mu`` and ``sigma``; they get ``w = 0``.
    iqr_factor
        Tukey's fence factor (1.5).
    min_std
        A group whose ``sigma`` is at most this is left unshaped (``w = 0``).

    Returns
    -------
    numpy.ndarray
        ``(P, G)`` :math:`w_i = (\\log\\mathrm{PPL}_i - \\mu)/\\sigma`.
    """
    x = np.asarray(log_ppl, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError(f"log_ppl must have shape (prompts, group), got {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError("log_ppl must be finite")
    if iqr_exclude:
        q1, q3 = np.percentile(x, [25.0, 75.0], axis=1, keepdims=True)  # (P, 1) each
        iqr = q3 - q1
        keep = (x >= q1 - iqr_factor * iqr) & (x <= q3 + iqr_factor * iqr)  # (P, G)
    else:
        keep = np.ones_like(x, dtype=bool)
    cnt = keep.sum(axis=1, keepdims=True)  # (P, 1), >= 1: the quartiles lie inside the fence
    mu = np.where(keep, x, 0.0).sum(axis=1, keepdims=True) / cnt
    var = np.where(keep, (x - mu) ** 2, 0.0).sum(axis=1, keepdims=True) / cnt
    sigma = np.sqrt(var)
    ok = sigma > min_std
    w = np.where(ok, (x - mu) / np.where(ok, sigma, 1.0), 0.0)
    return np.where(keep, w, 0.0)


def perplexity_multipliers(log_ppl, *, alpha: float = 0.01, iqr_exclude: bool = False,
                           iqr_factor: float = 1.5, clamp: tuple[float, float] | None = None,
                           min_std: float = 1e-8) -> np.ndarray:
    """The factor ``1 - alpha * w`` that multiplies each advantage.

    Parameters
    ----------
    log_ppl
        ``(P, G)``.
    alpha
        Strength (0.01 in the paper).
    iqr_exclude, iqr_factor, min_std
        See :func:`perplexity_zscores`.
    clamp
        Optional ``(low, high)`` bounds on the factor, e.g. ``(0.8, 1.2)``.

    Returns
    -------
    numpy.ndarray
        ``(P, G)``.

    Notes
    -----
    Report's example: PPLs 1.2, 1.5, 1.8, 2.1, 2.4 give factors 1.015 and 0.987
    at the ends for alpha = 0.01; for alpha = 1 they are 2.54 and -0.29 (the
    report prints 2.49 and -0.26 from a mis-computed sigma; see the module notes).
    """
    w = perplexity_zscores(log_ppl, iqr_exclude=iqr_exclude, iqr_factor=iqr_factor,
                           min_std=min_std)
    f = 1.0 - alpha * w
    if clamp is not None:
        lo, hi = clamp
        if not lo <= hi:
            raise ValueError(f"clamp needs low <= high, got {clamp}")
        f = np.clip(f, lo, hi)
    return f


def apply_perplexity_shaping(advantages, log_ppl, **kwargs) -> np.ndarray:
    """``A_i * (1 - alpha * w_i)`` on ``(P, G)`` advantages; kwargs as in
    :func:`perplexity_multipliers`."""
    a = np.asarray(advantages, dtype=np.float64)
    x = np.asarray(log_ppl, dtype=np.float64)
    if a.shape != x.shape:
        raise ValueError(f"advantages {a.shape} and log_ppl {x.shape} differ in shape")
    return a * perplexity_multipliers(x, **kwargs)


def broadcast_to_tokens(seq_advantages, mask) -> np.ndarray:
    """Spread one advantage per sequence over its response tokens.

    Parameters
    ----------
    seq_advantages
        ``(B,)`` (or ``(P, G)``, flattened row-major to ``B = P * G``).
    mask
        ``(B, T)``.

    Returns
    -------
    numpy.ndarray
        ``(B, T)``, zero on padding.
    """
    a = np.asarray(seq_advantages, dtype=np.float64).reshape(-1)  # (B,)
    m = _check_mask(mask)
    if m.shape[0] != a.shape[0]:
        raise ValueError(f"{a.shape[0]} advantages for a mask of {m.shape[0]} sequences")
    return a[:, None] * m


def relative_positions(mask) -> np.ndarray:
    """``l_t = (t - 1)/L`` for each response token, 0 on padding.

    Parameters
    ----------
    mask
        ``(B, T)``; ``t`` counts response tokens only (1-based), ``L`` is their number.

    Returns
    -------
    numpy.ndarray
        ``(B, T)`` in [0, 1).
    """
    m = _check_mask(mask)
    t = np.cumsum(m, axis=1)  # (B, T): 1-based index among response tokens
    L = m.sum(axis=1, keepdims=True)  # (B, 1)
    return np.where(m > 0, (t - 1) / np.maximum(L, 1), 0.0)


def position_bias(rel_pos, *, gamma: float = 0.1, m: float = 15.0, n: float = -0.5,
                  d: float = 1.0) -> np.ndarray:
    """Uncapped position bias ``gamma * sigmoid(d * m * (l + n))``.

    Notes
    -----
    With the defaults: 0.0025 gamma at l = 0.1, 0.5 gamma at 0.5, 0.9975 gamma
    at 0.9 (the paper's code; a published summary's example has n's sign flipped).
    """
    from scipy.special import expit

    return gamma * expit(d * m * (np.asarray(rel_pos, dtype=np.float64) + n))


def in_window(step: int | None, window: tuple[int | None, int | None] | None) -> bool:
    """Whether shaping is active at ``step``: ``lo < step < hi`` (open interval).

    ``window=None`` means always; a ``None`` end is unbounded. A window with no
    step is refused, so a forgotten step never silently disables shaping.
    """
    if window is None:
        return True
    if step is None:
        raise ValueError("position shaping has a step window; pass the training step "
                         "(or window=None to shape at every step)")
    lo, hi = window
    return (lo is None or step > lo) and (hi is None or step < hi)


def apply_position_shaping(token_advantages, mask, *, step: int | None = None,
                           window: tuple[int | None, int | None] | None = (200, 300),
                           gamma: float = 0.1, m: float = 15.0, n: float = -0.5,
                           d: float = 1.0, cap: float = 0.5) -> np.ndarray:
    """Add the sign-following, capped position bias to token advantages.

    Parameters
    ----------
    token_advantages
        ``(B, T)`` (e.g. from :func:`broadcast_to_tokens`).
    mask
        ``(B, T)``.
    step, window
        Shape only while ``window[0] < step < window[1]``; ``window=None``: always.
    gamma, m, n, d
        Bias ``gamma * sigmoid(d m (l + n))``.
    cap
        The bias never exceeds ``cap * |A_t|`` (0.5 in the paper).

    Returns
    -------
    numpy.ndarray
        ``(B, T)``; unchanged outside the window, zero on padding.

    Notes
    -----
    .. math:: A_t \\leftarrow A_t + \\mathrm{sign}(A_t)\\,
              \\min\\big(\\gamma\\,\\sigma(d\\,m\\,(l_t+n)),\\ c\\,|A_t|\\big)
    """
    a = np.asarray(token_advantages, dtype=np.float64)
    msk = _check_mask(mask, a.shape)
    if not in_window(step, window):
        return a * msk
    b = position_bias(relative_positions(msk), gamma=gamma, m=m, n=n, d=d)  # (B, T)
    return (a + np.sign(a) * np.minimum(b, cap * np.abs(a))) * msk
