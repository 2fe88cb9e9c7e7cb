"""Torch mirrors of the estimators and shapings, for use inside trainers.

Each function has the same name, arguments and math as its NumPy reference in
:mod:`~rlvr_boundary.shaping.estimators` / :mod:`~rlvr_boundary.shaping.shapings`
(the tests hold them equal in float64); see those for the formulas and
references. They run under ``torch.no_grad`` semantics (no graph is needed:
advantages are constants of the policy loss), keep the input's device and dtype,
and never move data to the CPU except for the group bookkeeping of
:func:`group_buckets`.

Trainers hand us flat batches with a group id per row, and groups may differ in
size (e.g. after filtering). :func:`sequence_advantages_flat` buckets the groups
by size, runs the ``(P, G)`` estimator per bucket, and scatters back; the two
REINFORCE++ variants whiten over the whole batch after that.

Importing this module imports torch (pin ``torch==2.13.0`` on CPU machines).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rlvr_boundary.errors import require

torch = require("torch", "torch", "the torch mirrors of the advantage estimators")

from rlvr_boundary.shaping.config import ShapingConfig
from rlvr_boundary.shaping.registry import ESTIMATOR_REGISTRY

__all__ = [
    "apply_perplexity_shaping",
    "apply_position_shaping",
    "broadcast_to_tokens",
    "dr_grpo_advantages",
    "group_buckets",
    "grpo_advantages",
    "log_all_fail",
    "log_perplexity",
    "passk_advantages",
    "perplexity_multipliers",
    "perplexity_zscores",
    "position_bias",
    "reinforce_pp_advantages",
    "reinforce_pp_baseline_advantages",
    "relative_positions",
    "remax_advantages",
    "rloo_advantages",
    "sequence_advantages_flat",
    "token_advantages",
    "whiten",
]


def _rewards(rewards, min_group: int = 1):
    r = torch.as_tensor(rewards)
    if not torch.is_floating_point(r):
        r = r.to(torch.get_default_dtype())
    if r.dim() != 2:
        raise ValueError(f"rewards must have shape (prompts, group), got {tuple(r.shape)}")
    if r.shape[0] == 0:
        raise ValueError("rewards hold no prompts")
    if r.shape[1] < min_group:
        raise ValueError(
            f"this estimator needs at least {min_group} completions per prompt, got {r.shape[1]}")
    if not bool(torch.isfinite(r).all()):
        raise ValueError("rewards must be finite (got NaN or inf)")
    return r


# ----------------------------------------------------------------------------- estimators


@torch.no_grad()
def grpo_advantages(rewards, *, std: str = "sample", eps: float = 1e-6):
    """Torch mirror of :func:`rlvr_boundary.shaping.estimators.grpo_advantages`."""
    r = _rewards(rewards, 2)
    if std not in ("sample", "population"):
        raise ValueError(f"std must be 'sample' or 'population', got {std!r}")
    s = r.std(dim=1, correction=1 if std == "sample" else 0, keepdim=True)  # (P, 1)
    return (r - r.mean(dim=1, keepdim=True)) / (s + eps)


@torch.no_grad()
def dr_grpo_advantages(rewards):
    """Torch mirror of :func:`rlvr_boundary.shaping.estimators.dr_grpo_advantages`."""
    r = _rewards(rewards, 2)
    return r - r.mean(dim=1, keepdim=True)


@torch.no_grad()
def rloo_advantages(rewards):
    """Torch mirror of :func:`rlvr_boundary.shaping.estimators.rloo_advantages`."""
    r = _rewards(rewards, 2)
    g = r.shape[1]
    return (r - r.mean(dim=1, keepdim=True)) * (g / (g - 1))


@torch.no_grad()
def whiten(values, weights=None, *, eps: float = 1e-8):
    """Torch mirror of :func:`rlvr_boundary.shaping.estimators.whiten`."""
    x = torch.as_tensor(values)
    w = torch.ones_like(x) if weights is None else torch.as_tensor(weights, dtype=x.dtype,
                                                                    device=x.device)
    if w.shape != x.shape:
        raise ValueError(f"weights shape {tuple(w.shape)} differs from values {tuple(x.shape)}")
    if bool((w < 0).any()):
        raise ValueError("weights must be non-negative")
    total = w.sum()
    if float(total) <= 1:
        raise ValueError("whitening needs a total weight (token count) above 1")
    mean = (w * x).sum() / total
    var = (w * (x - mean) ** 2).sum() / total * (total / (total - 1))
    return (x - mean) / torch.sqrt(var + eps)


@torch.no_grad()
def reinforce_pp_advantages(rewards, *, token_counts=None, eps: float = 1e-8):
    """Torch mirror of :func:`rlvr_boundary.shaping.estimators.reinforce_pp_advantages`."""
    r = _rewards(rewards, 1)
    return whiten(r, token_counts, eps=eps)


@torch.no_grad()
def reinforce_pp_baseline_advantages(rewards, *, token_counts=None, eps: float = 1e-8):
    """Torch mirror of
    :func:`rlvr_boundary.shaping.estimators.reinforce_pp_baseline_advantages`."""
    r = _rewards(rewards, 2)
    return whiten(r - r.mean(dim=1, keepdim=True), token_counts, eps=eps)


@torch.no_grad()
def remax_advantages(rewards, greedy_rewards):
    """Torch mirror of :func:`rlvr_boundary.shaping.estimators.remax_advantages`."""
    r = _rewards(rewards, 1)
    b = torch.as_tensor(greedy_rewards, dtype=r.dtype, device=r.device)
    if tuple(b.shape) != (r.shape[0],):
        raise ValueError(f"greedy_rewards must have shape ({r.shape[0]},), got {tuple(b.shape)}")
    return r - b[:, None]


@torch.no_grad()
def log_all_fail(n: int, c, k: int):
    """Torch mirror of :func:`rlvr_boundary.shaping.estimators.log_all_fail`."""
    c = torch.as_tensor(c)
    if not torch.is_floating_point(c):
        c = c.to(torch.get_default_dtype())
    j = torch.arange(k, dtype=c.dtype, device=c.device)  # (k,)
    alive = j[None, :] < (n - c)[:, None]  # (P, k)
    ratio = torch.where(alive, c[:, None] / (n - j)[None, :], torch.zeros((), dtype=c.dtype,
                                                                              device=c.device))
    terms = torch.where(alive, torch.log1p(-ratio), torch.full((), -torch.inf, dtype=c.dtype,
                                                                   device=c.device))
    return terms.sum(dim=1)


@torch.no_grad()
def passk_advantages(rewards, k: int):
    """Torch mirror of :func:`rlvr_boundary.shaping.estimators.passk_advantages`."""
    r = _rewards(rewards, 1)
    if not bool(((r == 0) | (r == 1)).all()):
        raise ValueError("the pass@k advantage needs binary (0/1) rewards")
    n = r.shape[1]
    if isinstance(k, bool) or int(k) != k or not 1 <= int(k) <= n:
        raise ValueError(f"k must be an integer in 1..{n} (the group size), got {k!r}")
    c = r.sum(dim=1)  # (P,)
    logq = log_all_fail(n, c, int(k))
    rho = -torch.expm1(logq)
    live = (c > 0) & torch.isfinite(logq)
    one = torch.ones((), dtype=r.dtype, device=r.device)
    zero = torch.zeros((), dtype=r.dtype, device=r.device)
    a_pos = torch.where(live, torch.exp(0.5 * (logq - torch.log(torch.where(live, rho, one)))),
                        zero)
    a_neg = torch.where(live, -c / torch.where(live, n - c, one) * a_pos, zero)
    return torch.where(r == 1, a_pos[:, None], a_neg[:, None])


#: The torch mirror of each registered estimator (same names, same functions' names).
ESTIMATORS = {name: globals()[e.function] for name, e in ESTIMATOR_REGISTRY.items()}


# ----------------------------------------------------------------------------- shapings


def _mask(mask, like=None):
    m = torch.as_tensor(mask)
    if m.dim() != 2:
        raise ValueError(f"mask must have shape (batch, tokens), got {tuple(m.shape)}")
    if like is not None:
        dtype = like.dtype
    else:
        dtype = m.dtype if torch.is_floating_point(m) else torch.get_default_dtype()
    m = m.to(dtype)
    if not bool(((m == 0) | (m == 1)).all()):
        raise ValueError("mask must hold only 0/1 (or booleans)")
    return m


@torch.no_grad()
def log_perplexity(token_logprobs, mask):
    """Torch mirror of :func:`rlvr_boundary.shaping.shapings.log_perplexity`."""
    lp = torch.as_tensor(token_logprobs)
    m = _mask(mask, lp)
    if m.shape != lp.shape:
        raise ValueError(f"mask shape {tuple(m.shape)} differs from {tuple(lp.shape)}")
    counts = m.sum(dim=1)
    if bool((counts == 0).any()):
        raise ValueError("a sequence has no response tokens")
    lp = torch.where(m > 0, lp, torch.zeros((), dtype=lp.dtype, device=lp.device))
    return -(lp * m).sum(dim=1) / counts


@torch.no_grad()
def perplexity_zscores(log_ppl, *, iqr_exclude: bool = False, iqr_factor: float = 1.5,
                       min_std: float = 1e-8):
    """Torch mirror of :func:`rlvr_boundary.shaping.shapings.perplexity_zscores`."""
    x = torch.as_tensor(log_ppl)
    if x.dim() != 2:
        raise ValueError(f"log_ppl must have shape (prompts, group), got {tuple(x.shape)}")
    if iqr_exclude:
        q = torch.quantile(x, torch.tensor([0.25, 0.75], dtype=x.dtype, device=x.device),
                           dim=1, keepdim=True, interpolation="linear")  # (2, P, 1)
        q1, q3 = q[0], q[1]
        iqr = q3 - q1
        keep = (x >= q1 - iqr_factor * iqr) & (x <= q3 + iqr_factor * iqr)
    else:
        keep = torch.ones_like(x, dtype=torch.bool)
    zero = torch.zeros((), dtype=x.dtype, device=x.device)
    cnt = keep.sum(dim=1, keepdim=True).to(x.dtype)
    mu = torch.where(keep, x, zero).sum(dim=1, keepdim=True) / cnt
    var = torch.where(keep, (x - mu) ** 2, zero).sum(dim=1, keepdim=True) / cnt
    sigma = torch.sqrt(var)
    ok = sigma > min_std
    w = torch.where(ok, (x - mu) / torch.where(ok, sigma, torch.ones_like(sigma)), zero)
    return torch.where(keep, w, zero)


@torch.no_grad()
def perplexity_multipliers(log_ppl, *, alpha: float = 0.01, iqr_exclude: bool = False,
                           iqr_factor: float = 1.5, clamp=None, min_std: float = 1e-8):
    """Torch mirror of :func:`rlvr_boundary.shaping.shapings.perplexity_multipliers`."""
    f = 1.0 - alpha * perplexity_zscores(log_ppl, iqr_exclude=iqr_exclude,
                                         iqr_factor=iqr_factor, min_std=min_std)
    if clamp is not None:
        lo, hi = clamp
        if not lo <= hi:
            raise ValueError(f"clamp needs low <= high, got {clamp}")
        f = f.clamp(lo, hi)
    return f


@torch.no_grad()
def apply_perplexity_shaping(advantages, log_ppl, **kwargs):
    """Torch mirror of :func:`rlvr_boundary.shaping.shapings.apply_perplexity_shaping`."""
    a = torch.as_tensor(advantages)
    x = torch.as_tensor(log_ppl, dtype=a.dtype, device=a.device)
    if a.shape != x.shape:
        raise ValueError(f"advantages {tuple(a.shape)} and log_ppl {tuple(x.shape)} differ")
    return a * perplexity_multipliers(x, **kwargs)


@torch.no_grad()
def broadcast_to_tokens(seq_advantages, mask):
    """Torch mirror of :func:`rlvr_boundary.shaping.shapings.broadcast_to_tokens`."""
    a = torch.as_tensor(seq_advantages).reshape(-1)
    m = _mask(mask, a)
    if m.shape[0] != a.shape[0]:
        raise ValueError(f"{a.shape[0]} advantages for a mask of {m.shape[0]} sequences")
    return a[:, None] * m


def _relative_positions(m):
    """``relative_positions`` of a mask already checked by :func:`_mask`."""
    t = torch.cumsum(m, dim=1)  # (B, T)
    L = m.sum(dim=1, keepdim=True).clamp_min(1)  # (B, 1)
    return torch.where(m > 0, (t - 1) / L, torch.zeros((), dtype=m.dtype, device=m.device))


@torch.no_grad()
def relative_positions(mask):
    """Torch mirror of :func:`rlvr_boundary.shaping.shapings.relative_positions`."""
    return _relative_positions(_mask(mask))


@torch.no_grad()
def position_bias(rel_pos, *, gamma: float = 0.1, m: float = 15.0, n: float = -0.5,
                  d: float = 1.0):
    """Torch mirror of :func:`rlvr_boundary.shaping.shapings.position_bias`."""
    return gamma * torch.sigmoid(d * m * (torch.as_tensor(rel_pos) + n))


@torch.no_grad()
def apply_position_shaping(token_advantages, mask, *, step: int | None = None,
                           window=(200, 300), gamma: float = 0.1, m: float = 15.0,
                           n: float = -0.5, d: float = 1.0, cap: float = 0.5):
    """Torch mirror of :func:`rlvr_boundary.shaping.shapings.apply_position_shaping`."""
    from rlvr_boundary.shaping.shapings import in_window

    a = torch.as_tensor(token_advantages)
    msk = _mask(mask, a).to(a.device)
    if msk.shape != a.shape:
        raise ValueError(f"mask shape {tuple(msk.shape)} differs from {tuple(a.shape)}")
    if not in_window(step, window):
        return a * msk
    return _position_shaping(a, msk, gamma=gamma, m=m, n=n, d=d, cap=cap)


def _position_shaping(a, msk, *, gamma, m, n, d, cap):
    """The position bias on ``(B, T)`` advantages with a checked mask of their dtype."""
    b = position_bias(_relative_positions(msk), gamma=gamma, m=m, n=n, d=d)  # (B, T)
    return (a + torch.sign(a) * torch.minimum(b, cap * a.abs())) * msk


# ----------------------------------------------------------------------------- flat batches


def group_buckets(index: Sequence[Any]) -> list[list[list[int]]]:
    """Group row numbers by group id, then bucket the groups by size.

    Parameters
    ----------
    index
        ``(B,)`` group id of each row (any hashable: verl's uid strings, ints).

    Returns
    -------
    list
        One entry per distinct group size: a list of groups, each a list of row
        numbers in batch order (groups ordered by first appearance). Each entry
        is a ``(P_s, G_s)`` table of rows.
    """
    groups: dict[Any, list[int]] = {}
    for row, gid in enumerate(list(index)):
        key = gid.item() if hasattr(gid, "item") else gid
        groups.setdefault(key, []).append(row)
    by_size: dict[int, list[list[int]]] = {}
    for rows in groups.values():
        by_size.setdefault(len(rows), []).append(rows)
    return [by_size[s] for s in sorted(by_size)]


@torch.no_grad()
def sequence_advantages_flat(cfg: ShapingConfig, scores, index, *, token_counts=None,
                             log_ppl=None, greedy_rewards=None):
    """Sequence advantages ``(B,)`` of a flat batch with a group id per row.

    Parameters
    ----------
    cfg
        The options.
    scores
        ``(B,)`` outcome rewards.
    index
        ``(B,)`` group ids (groups may differ in size).
    token_counts
        ``(B,)`` response lengths: REINFORCE++ token weights.
    log_ppl
        ``(B,)``: required when ``cfg.perplexity``.
    greedy_rewards
        ``(B,)`` greedy baseline of each row's prompt: required by ReMax.

    Notes
    -----
    Equal to the ``(P, G)`` reference when all groups have the same size; with
    unequal sizes each size bucket is computed separately, except that the
    REINFORCE++ whitening is over the whole batch.
    """
    s = torch.as_tensor(scores)
    if not torch.is_floating_point(s):
        s = s.to(torch.get_default_dtype())
    if s.dim() != 1:
        raise ValueError(f"scores must be 1-D, got shape {tuple(s.shape)}")
    if len(index) != s.shape[0]:
        raise ValueError(f"{len(index)} group ids for {s.shape[0]} scores")
    if not bool(torch.isfinite(s).all()):
        raise ValueError("rewards must be finite (got NaN or inf)")
    name = cfg.estimator
    kw = cfg.estimator_kwargs()
    out = torch.zeros_like(s)
    if name == "reinforce_pp":
        out = whiten(s, token_counts, **kw)
    elif name == "remax":
        if greedy_rewards is None:
            raise ValueError("ReMax needs the rewards of the greedy completions")
        out = s - torch.as_tensor(greedy_rewards, dtype=s.dtype, device=s.device)
    else:
        for bucket in group_buckets(index):
            rows = torch.as_tensor(bucket, dtype=torch.long, device=s.device)  # (P_s, G_s)
            table = s[rows]
            if name == "reinforce_pp_baseline":
                if table.shape[1] < 2:
                    raise ValueError("REINFORCE++-baseline needs at least 2 completions per prompt")
                out[rows] = table - table.mean(dim=1, keepdim=True)
            else:
                out[rows] = ESTIMATORS[name](table, **kw)
        if name == "reinforce_pp_baseline":
            out = whiten(out, token_counts, **kw)
    if cfg.perplexity:
        if log_ppl is None:
            raise ValueError("perplexity shaping needs each completion's log-PPL")
        x = torch.as_tensor(log_ppl, dtype=s.dtype, device=s.device)
        for bucket in group_buckets(index):
            rows = torch.as_tensor(bucket, dtype=torch.long, device=s.device)
            out[rows] = apply_perplexity_shaping(out[rows], x[rows], **cfg.perplexity_kwargs())
    return out


@torch.no_grad()
def token_advantages(cfg: ShapingConfig, scores, mask, index, *, log_ppl=None,
                     greedy_rewards=None, step: int | None = None):
    """Token advantages ``(B, T)`` of a flat batch: estimator, perplexity, broadcast, position.

    The torch counterpart of :func:`rlvr_boundary.shaping.pipeline.token_advantages`
    for flat batches (``index`` gives the groups).
    """
    s = torch.as_tensor(scores)
    if not torch.is_floating_point(s):
        s = s.to(torch.get_default_dtype())
    from rlvr_boundary.shaping.shapings import in_window

    m = _mask(mask, s).to(s.device)  # checked once here; the steps below trust it
    if m.shape[0] != s.shape[0]:
        raise ValueError(f"{s.shape[0]} scores for a mask of {m.shape[0]} sequences")
    seq = sequence_advantages_flat(cfg, s, index, token_counts=m.sum(dim=1), log_ppl=log_ppl,
                                   greedy_rewards=greedy_rewards)  # (B,)
    tok = seq[:, None] * m  # (B, T)
    if cfg.position:
        kw = cfg.position_kwargs()
        if in_window(step, kw.pop("window")):
            tok = _position_shaping(tok, m, **kw)
    return tok
