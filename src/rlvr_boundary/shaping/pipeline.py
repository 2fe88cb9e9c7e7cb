"""Rewards -> token advantages: estimator, perplexity factor, broadcast, position bias.

The NumPy reference of what the trainer adapters do with torch
(:func:`rlvr_boundary.shaping.torch_ops.token_advantages`). Rows of the token arrays
are the completions in group-major order: row ``p * G + g`` is completion g of
prompt p.
"""

from __future__ import annotations

import numpy as np

from rlvr_boundary.shaping.config import ShapingConfig
from rlvr_boundary.shaping.estimators import check_rewards, compute_advantages
from rlvr_boundary.shaping.shapings import (
    _check_mask,
    apply_perplexity_shaping,
    apply_position_shaping,
    broadcast_to_tokens,
)


def sequence_advantages(cfg: ShapingConfig, rewards, *, mask=None, log_ppl=None,
                        greedy_rewards=None) -> np.ndarray:
    """Estimator then (optionally) the perplexity factor, on ``(P, G)``.

    Parameters
    ----------
    cfg
        The options.
    rewards
        ``(P, G)``.
    mask
        ``(P * G, T)``; gives REINFORCE++ its token weights.
    log_ppl
        ``(P, G)``; required when ``cfg.perplexity``.
    greedy_rewards
        ``(P,)``; required by ReMax.
    """
    r = check_rewards(rewards)
    kw = cfg.estimator_kwargs()
    if cfg.estimator in ("reinforce_pp", "reinforce_pp_baseline") and mask is not None:
        kw["token_counts"] = _check_mask(mask).sum(axis=1).reshape(r.shape)
    if cfg.estimator == "remax":
        if greedy_rewards is None:
            raise ValueError("ReMax needs the rewards of the greedy completions")
        kw["greedy_rewards"] = greedy_rewards
    adv = compute_advantages(cfg.estimator, r, **kw)  # (P, G)
    if cfg.perplexity:
        if log_ppl is None:
            raise ValueError("perplexity shaping needs each completion's log-PPL")
        adv = apply_perplexity_shaping(adv, log_ppl, **cfg.perplexity_kwargs())
    return adv


def token_advantages(cfg: ShapingConfig, rewards, mask, *, log_ppl=None,
                     greedy_rewards=None, step: int | None = None) -> np.ndarray:
    """Token advantages ``(P * G, T)`` from ``(P, G)`` rewards and the response mask."""
    adv = sequence_advantages(cfg, rewards, mask=mask, log_ppl=log_ppl,
                              greedy_rewards=greedy_rewards)
    tok = broadcast_to_tokens(adv, mask)  # (B, T)
    if cfg.position:
        tok = apply_position_shaping(tok, mask, step=step, **cfg.position_kwargs())
    return tok
