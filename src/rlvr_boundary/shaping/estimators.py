"""Outcome-reward advantage estimators on a (prompts, group) reward array.

Every estimator takes ``rewards`` of shape ``(P, G)``: P prompts, G sampled
completions per prompt (one scalar outcome reward each) and returns advantages
of the same shape. They depend on NumPy only; :mod:`rlvr_boundary.shaping.torch_ops`
mirrors each one in torch and the tests hold the two equal.

Choices we made where papers and trainers differ (each is a parameter):

- GRPO divides by the *sample* standard deviation of the group (``ddof = 1``) plus
  ``eps = 1e-6``, as verl's ``compute_grpo_outcome_advantage`` does (TRL also uses
  the sample std, with ``eps = 1e-4``). DeepSeekMath does not say which std; pass
  ``std="population"`` for ``ddof = 0``. A group whose rewards are all equal gets
  advantage exactly 0 either way.
- A group of one completion has no baseline: group estimators refuse ``G < 2``
  (verl silently returns the raw reward there, which is not an advantage).
- REINFORCE++ is the outcome-reward, undiscounted form (every token's return is
  the sequence reward); the per-token KL term of the paper belongs to the trainer.
  Its whitening is over the whole batch; with ``token_counts`` each sequence is
  weighted by its number of tokens, which is exactly the token-level
  ``masked_whiten`` that verl applies (mean, Bessel-corrected variance, ``+1e-8``
  inside the square root).
- The pass@k advantage (Chen et al., "Pass@k Training") needs binary rewards; it
  is evaluated in log space and in the form ``A- = -c/(n-c) * A+`` (derived in
  :func:`passk_advantages`), which is exact and never divides 0 by 0.
"""

from __future__ import annotations

import numpy as np

from rlvr_boundary.shaping.registry import ESTIMATOR_REGISTRY

__all__ = [
    "ESTIMATORS",
    "compute_advantages",
    "dr_grpo_advantages",
    "grpo_advantages",
    "log_all_fail",
    "passk_advantages",
    "reinforce_pp_advantages",
    "reinforce_pp_baseline_advantages",
    "remax_advantages",
    "rloo_advantages",
    "whiten",
]


def check_rewards(rewards, *, min_group: int = 1) -> np.ndarray:
    """Validate a ``(P, G)`` reward array and return it as float64.

    Refuses non-2-D input, non-finite values and groups smaller than ``min_group``.
    """
    r = np.asarray(rewards)
    if r.dtype == object or r.dtype.kind not in "biuf":
        raise ValueError(f"rewards must be numeric, got dtype {r.dtype}")
    r = r.astype(np.float64)
    if r.ndim != 2:
        raise ValueError(f"rewards must have shape (prompts, group), got shape {r.shape}")
    if r.shape[0] == 0:
        raise ValueError("rewards hold no prompts")
    if r.shape[1] < min_group:
        raise ValueError(
            f"this estimator needs at least {min_group} completions per prompt, got {r.shape[1]}")
    if not np.all(np.isfinite(r)):
        raise ValueError("rewards must be finite (got NaN or inf)")
    return r


def grpo_advantages(rewards, *, std: str = "sample", eps: float = 1e-6) -> np.ndarray:
    """GRPO: group-normalized advantages.

    Parameters
    ----------
    rewards
        ``(P, G)`` outcome rewards, ``G >= 2``.
    std
        ``"sample"`` (``ddof = 1``, verl and TRL) or ``"population"`` (``ddof = 0``).
    eps
        Added to the standard deviation.

    Returns
    -------
    numpy.ndarray
        ``(P, G)``.

    Notes
    -----
    .. math:: A_i = \\frac{r_i - \\bar r}{s + \\epsilon}

    Each group's advantages sum to zero.

    References
    ----------
    Shao et al., "DeepSeekMath", 2024 (arXiv 2402.03300).
    """
    r = check_rewards(rewards, min_group=2)
    if std not in ("sample", "population"):
        raise ValueError(f"std must be 'sample' or 'population', got {std!r}")
    ddof = 1 if std == "sample" else 0
    centered = r - r.mean(axis=1, keepdims=True)  # (P, G)
    s = r.std(axis=1, ddof=ddof, keepdims=True)  # (P, 1)
    return centered / (s + eps)


def dr_grpo_advantages(rewards) -> np.ndarray:
    """Dr. GRPO: group-centered rewards, no std normalization.

    Notes
    -----
    :math:`A_i = r_i - \\bar r`. (Dr. GRPO also changes the loss aggregation to a
    constant normalizer; that is the trainer's ``loss_agg_mode``, not the advantage.)

    References
    ----------
    Liu et al., "Understanding R1-Zero-Like Training: A Critical Perspective", 2025
    (arXiv 2503.20783).
    """
    r = check_rewards(rewards, min_group=2)
    return r - r.mean(axis=1, keepdims=True)


def rloo_advantages(rewards) -> np.ndarray:
    """RLOO: leave-one-out baseline.

    Notes
    -----
    .. math:: A_i = r_i - \\frac{1}{G-1}\\sum_{j\\ne i} r_j = \\frac{G}{G-1}(r_i - \\bar r)

    References
    ----------
    Ahmadian et al., "Back to Basics: Revisiting REINFORCE Style Optimization for
    Learning from Human Feedback in LLMs", 2024 (arXiv 2402.14740).
    """
    r = check_rewards(rewards, min_group=2)
    g = r.shape[1]
    return (r - r.mean(axis=1, keepdims=True)) * (g / (g - 1))


def whiten(values, weights=None, *, eps: float = 1e-8) -> np.ndarray:
    """Whiten values over the whole array with optional non-negative weights.

    Parameters
    ----------
    values
        Any shape.
    weights
        Same shape; e.g. token counts, so that a sequence counts once per token.
        Default: all ones.
    eps
        Added to the variance inside the square root.

    Notes
    -----
    With :math:`N = \\sum w`, :math:`\\mu = \\sum w x / N` and the Bessel-corrected
    :math:`v = \\frac{N}{N-1}\\sum w (x-\\mu)^2 / N`, returns
    :math:`(x - \\mu)/\\sqrt{v + \\epsilon}`: the token-level ``masked_whiten`` of
    verl when ``w`` counts tokens. Needs :math:`N > 1`.
    """
    x = np.asarray(values, dtype=np.float64)
    w = np.ones_like(x) if weights is None else np.asarray(weights, dtype=np.float64)
    if w.shape != x.shape:
        raise ValueError(f"weights shape {w.shape} differs from values shape {x.shape}")
    if np.any(w < 0) or not np.all(np.isfinite(w)):
        raise ValueError("weights must be finite and non-negative")
    total = w.sum()
    if total <= 1:
        raise ValueError("whitening needs a total weight (token count) above 1")
    mean = np.sum(w * x) / total
    var = np.sum(w * (x - mean) ** 2) / total * (total / (total - 1))
    return (x - mean) / np.sqrt(var + eps)


def _check_token_counts(token_counts, shape) -> np.ndarray | None:
    if token_counts is None:
        return None
    tc = np.asarray(token_counts, dtype=np.float64)
    if tc.shape != shape:
        raise ValueError(f"token_counts must have shape {shape}, got {tc.shape}")
    return tc


def reinforce_pp_advantages(rewards, *, token_counts=None, eps: float = 1e-8) -> np.ndarray:
    """REINFORCE++ (outcome reward, undiscounted): the batch-whitened reward.

    Parameters
    ----------
    rewards
        ``(P, G)`` outcome rewards (G may be 1: no group is used).
    token_counts
        ``(P, G)`` response lengths; weights the batch statistics per token as
        verl's token-level whitening does. Default: one weight per sequence.
    eps
        Added to the variance.

    Notes
    -----
    :math:`A_i = (r_i - \\mu_B)/\\sqrt{v_B + \\epsilon}` with batch mean and
    (Bessel-corrected) variance; see :func:`whiten`.

    References
    ----------
    Hu, "REINFORCE++: A Simple and Efficient Approach for Aligning Large Language
    Models", 2025 (arXiv 2501.03262).
    """
    r = check_rewards(rewards, min_group=1)
    return whiten(r, _check_token_counts(token_counts, r.shape), eps=eps)


def reinforce_pp_baseline_advantages(rewards, *, token_counts=None,
                                     eps: float = 1e-8) -> np.ndarray:
    """REINFORCE++-baseline: subtract the group mean, then whiten over the batch.

    Notes
    -----
    :math:`A_i = \\mathrm{whiten}_B(r_i - \\bar r_{g(i)})`; see :func:`whiten` for
    the weights and the variance.

    References
    ----------
    Hu, "REINFORCE++", 2025 (arXiv 2501.03262), the "baseline" variant for
    reasoning tasks.
    """
    r = check_rewards(rewards, min_group=2)
    centered = r - r.mean(axis=1, keepdims=True)  # (P, G)
    return whiten(centered, _check_token_counts(token_counts, r.shape), eps=eps)


def remax_advantages(rewards, greedy_rewards) -> np.ndarray:
    """ReMax: the reward of the greedy completion is the baseline.

    Parameters
    ----------
    rewards
        ``(P, G)`` rewards of sampled completions.
    greedy_rewards
        ``(P,)`` reward of each prompt's greedy (argmax-decoded) completion.

    Notes
    -----
    :math:`A_i = r_i - r(\\hat y_{\\mathrm{greedy}})`.

    References
    ----------
    Li et al., "ReMax: A Simple, Effective, and Efficient Reinforcement Learning
    Method for Aligning Large Language Models", 2023 (arXiv 2310.10505).
    """
    r = check_rewards(rewards, min_group=1)
    b = np.asarray(greedy_rewards, dtype=np.float64)
    if b.shape != (r.shape[0],):
        raise ValueError(f"greedy_rewards must have shape ({r.shape[0]},), got {b.shape}")
    if not np.all(np.isfinite(b)):
        raise ValueError("greedy_rewards must be finite")
    return r - b[:, None]


def log_all_fail(n: int, c, k: int) -> np.ndarray:
    """``log(C(n-c, k) / C(n, k))``: log-probability that a random k-subset has no success.

    Parameters
    ----------
    n
        Group size (shared).
    c
        ``(P,)`` successes per group.
    k
        Subset size, ``1 <= k <= n``.

    Returns
    -------
    numpy.ndarray
        ``(P,)``; ``-inf`` where ``n - c < k`` (every k-subset holds a success).

    Notes
    -----
    :math:`\\log\\prod_{j=0}^{k-1}(1 - c/(n-j)) = \\sum_j \\mathrm{log1p}(-c/(n-j))`,
    exact in floating point for any n (no factorials). ``1 - exp`` of this is
    the unbiased pass@k of :func:`rlvr_boundary.core.passk.pass_at_k` (tested equal);
    we need the log itself to keep the advantage's relative precision when the
    failure probability is tiny.
    """
    c = np.asarray(c, dtype=np.float64)
    j = np.arange(k, dtype=np.float64)  # (k,)
    alive = j[None, :] < (n - c)[:, None]  # (P, k)
    ratio = np.where(alive, c[:, None] / (n - j)[None, :], 0.0)
    terms = np.where(alive, np.log1p(-ratio), -np.inf)
    return terms.sum(axis=1)


def passk_advantages(rewards, k: int) -> np.ndarray:
    """Closed-form pass@k advantage of "Pass@k Training" for binary rewards.

    Parameters
    ----------
    rewards
        ``(P, G)`` binary rewards (0/1 or bool).
    k
        Budget, ``1 <= k <= G``.

    Returns
    -------
    numpy.ndarray
        ``(P, G)``; zero for groups where every or no k-subset succeeds.

    Notes
    -----
    Split the group (n = G completions, c correct) into all k-subsets; a subset's
    reward is 1 if it holds a correct completion. Over subsets the reward has mean
    :math:`\\rho = 1 - \\binom{n-c}{k}/\\binom{n}{k}` (the group's pass@k) and
    population std :math:`\\sigma = \\sqrt{\\rho(1-\\rho)}`. A completion's
    advantage is the mean normalized advantage :math:`(R_S - \\rho)/\\sigma` of
    the subsets S that contain it:

    .. math::
        A^+ = \\frac{1-\\rho}{\\sigma}, \\qquad
        A^- = \\frac{1 - \\rho - \\binom{n-c-1}{k-1}/\\binom{n-1}{k-1}}{\\sigma}.

    With :math:`q = 1-\\rho` and :math:`q' = \\binom{n-c-1}{k-1}/\\binom{n-1}{k-1}
    = q\\,n/(n-c)` this is :math:`A^+ = \\sqrt{q/\\rho}` and
    :math:`A^- = -\\frac{c}{n-c}A^+`, so :math:`cA^+ + (n-c)A^- = 0`. We evaluate
    :math:`A^+ = \\exp(\\tfrac12(\\log q - \\log\\rho))` from :func:`log_all_fail`.
    For ``k = 1`` this is GRPO with the population std.

    References
    ----------
    Chen et al., "Pass@k Training for Adaptively Balancing Exploration and
    Exploitation of Large Reasoning Models", 2025 (arXiv 2508.10751).
    """
    r = check_rewards(rewards, min_group=1)
    if not np.all((r == 0) | (r == 1)):
        raise ValueError("the pass@k advantage needs binary (0/1) rewards")
    n = r.shape[1]
    if isinstance(k, bool) or int(k) != k or not 1 <= int(k) <= n:
        raise ValueError(f"k must be an integer in 1..{n} (the group size), got {k!r}")
    k = int(k)
    c = r.sum(axis=1)  # (P,)
    logq = log_all_fail(n, c, k)  # (P,)
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = -np.expm1(logq)
        live = (c > 0) & np.isfinite(logq)  # 0 < rho < 1
        a_pos = np.where(live, np.exp(0.5 * (logq - np.log(np.where(live, rho, 1.0)))), 0.0)
        a_neg = np.where(live, -c / np.where(live, n - c, 1.0) * a_pos, 0.0)
    return np.where(r == 1, a_pos[:, None], a_neg[:, None])  # (P, G)


#: Name -> estimator on ``(P, G)`` rewards, as the registry names them
#: (:data:`rlvr_boundary.shaping.registry.ESTIMATOR_REGISTRY`). Extra keyword arguments pass
#: through.
ESTIMATORS = {name: globals()[e.function] for name, e in ESTIMATOR_REGISTRY.items()}


def compute_advantages(name: str, rewards, **kwargs) -> np.ndarray:
    """Dispatch to the estimator ``name`` (a key of :data:`ESTIMATORS`)."""
    try:
        fn = ESTIMATORS[name]
    except KeyError:
        raise ValueError(f"unknown estimator {name!r}; known: {sorted(ESTIMATORS)}") from None
    return fn(rewards, **kwargs)
