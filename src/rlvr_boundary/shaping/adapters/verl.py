"""verl adapter: registered advantage estimators and a perplexity-shaping policy loss.

Load it into every verl process (driver and Ray workers) with::

    export VERL_USE_EXTERNAL_MODULES=rlvr_boundary.shaping.adapters.verl
    export RLVR_BOUNDARY_SHAPING='{"position": true, "k": 4}'   # optional, JSON of ShapingConfig

verl imports the listed modules when it is imported (``verl/__init__.py``), so
the names below exist before the trainer looks them up. Then choose them in
the Hydra config:

- ``algorithm.adv_estimator=rlvr_<name>`` for ``<name>`` in grpo, dr_grpo, rloo,
  reinforce_pp, reinforce_pp_baseline, remax, passk. Options come from the JSON
  in ``RLVR_BOUNDARY_SHAPING`` and, overriding it, from an optional mapping
  ``+algorithm.rlvr_boundary.<field>=...`` (fields of
  :class:`~rlvr_boundary.shaping.config.ShapingConfig`). The estimator applies the
  position shaping when ``position`` is on.
- ``actor_rollout_ref.actor.policy_loss.loss_mode=rlvr_ppl`` for the perplexity
  shaping. Estimators see no log-probs, so the factor ``1 - alpha w`` is applied
  inside the policy loss, from ``old_log_prob`` (the log-probs of the policy that
  generated the batch: the weights stay fixed across PPO epochs), and the result
  goes to the loss named by ``base_loss_mode`` (default "vanilla"). Options come
  from ``RLVR_BOUNDARY_SHAPING`` only (verl's actor config accepts no extra keys).

Limits, by verl's design, and what we do about them:

- The policy loss sees a micro-batch without group ids. We take groups to be
  consecutive blocks of ``ppl_group_size`` rows (default: the actor's
  ``rollout_n``), which holds when the rollouts of a prompt stay contiguous:
  set ``trainer.balance_batch=False``, ``actor_rollout_ref.actor.shuffle=False``,
  ``actor_rollout_ref.actor.use_dynamic_bsz=False`` and a micro-batch size that
  is a multiple of ``rollout.n``. verl 0.9.1's default trainer (``use_v1``)
  rebalances rows across data-parallel ranks by length regardless of
  ``balance_batch``: the order survives with one rank, not with several, where
  ``trainer.use_v1=False`` (the legacy trainer) is needed. For estimators whose
  group advantages sum to zero (grpo, dr_grpo, rloo, passk) each block is
  checked and a misaligned batch raises instead of training on wrong
  statistics. The check reads each row's
  advantage at its first response token, where the position bias is at most
  ``gamma * sigmoid(d m n)`` (5.5e-5 at the defaults; the tolerance allows for
  it). A misaligned block whose advantages are all zero passes the check and is
  harmless: the factor multiplies zeros.
- With both shapings on, verl applies position first (in the estimator) and the
  perplexity factor second (in the loss), so the position bias is also scaled
  by the factor (off 1 by at most ``alpha * sqrt(G - 1)``, 2.6% for G = 8); the
  NumPy pipeline applies the factor first.
- The estimator does not see the training step; it counts its own calls (one
  per training step) starting after ``step_offset`` (set it to the resumed step
  when resuming from a checkpoint). verl's first step is 1.
- Estimators refuse groups of one completion (verl returns the raw reward
  there); ReMax needs ``reward_baselines`` in the batch (verl's ReMax rollout).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from rlvr_boundary.errors import require

require("verl", None, "the verl adapter",
        install="pip install verl==0.9.1 (the release the adapter is tested with; verl is "
                "no extra of rlvr-boundary: install it with your trainer)")
torch = require("torch", "torch", "the verl adapter")

from verl.trainer.ppo.core_algos import (
    get_policy_loss_fn,
    register_adv_est,
    register_policy_loss,
)

from rlvr_boundary.shaping import torch_ops
from rlvr_boundary.shaping.config import ShapingConfig

#: Environment variable holding the JSON options (inherited by Ray workers).
ENV_VAR = "RLVR_BOUNDARY_SHAPING"
#: Options of this adapter that are not ShapingConfig fields.
VERL_KEYS = {"step_offset": 0, "base_loss_mode": "vanilla", "ppl_group_size": None}
#: Prefix of the registered estimator names.
PREFIX = "rlvr_"
#: Name of the registered policy loss.
POLICY_LOSS = "rlvr_ppl"
_ZERO_SUM = {"grpo", "dr_grpo", "rloo", "passk"}

_calls = {"n": 0}


def configure(**options: Any) -> None:
    """Set the options in ``RLVR_BOUNDARY_SHAPING`` (so Ray workers started later inherit them)."""
    _split(options)  # validate now, not in a worker
    os.environ[ENV_VAR] = json.dumps(options)


def reset_step_counter() -> None:
    """Forget the estimator calls counted so far (tests, or a new run in one process)."""
    _calls["n"] = 0


def _env_options() -> dict[str, Any]:
    raw = os.environ.get(ENV_VAR, "").strip()
    if not raw:
        return {}
    try:
        doc = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{ENV_VAR} is not valid JSON ({exc.msg})") from None
    if not isinstance(doc, dict):
        raise ValueError(f"{ENV_VAR} must be a JSON object")
    return doc


def _split(options: Mapping[str, Any], estimator: str | None = None
           ) -> tuple[ShapingConfig, dict[str, Any]]:
    opts = dict(options)
    extra = {k: opts.pop(k, v) for k, v in VERL_KEYS.items()}
    if estimator is not None:
        opts["estimator"] = estimator
    return ShapingConfig.from_mapping(opts), extra


def _options(config: Any, estimator: str | None) -> tuple[ShapingConfig, dict[str, Any]]:
    opts = _env_options()
    node = None
    if config is not None and hasattr(config, "get"):
        node = config.get("rlvr_boundary", None)
    if node is not None:
        opts.update({str(k): node[k] for k in node})
    return _split(opts, estimator)


def _make_estimator(name: str):
    def estimator(token_level_rewards, response_mask, index=None, config=None,
                  reward_baselines=None, **kwargs):
        cfg, extra = _options(config, name)
        _calls["n"] += 1
        step = int(extra["step_offset"]) + _calls["n"]
        scores = token_level_rewards.sum(dim=-1)  # (bs,)
        if index is None:
            if name not in ("reinforce_pp", "remax"):
                raise ValueError(
                    f"estimator {PREFIX}{name} needs group ids (non_tensor_batch 'uid')")
            index = list(range(scores.shape[0]))
        # Perplexity shaping is the policy loss's job here (estimators see no log-probs).
        cfg.perplexity = False
        adv = torch_ops.token_advantages(cfg, scores, response_mask, index,
                                         greedy_rewards=reward_baselines, step=step)
        adv = adv.to(token_level_rewards.dtype)
        return adv, adv

    estimator.__name__ = f"compute_{PREFIX}{name}_advantage"
    estimator.__doc__ = (f"rlvr-boundary '{name}' estimator with optional position shaping "
                         f"(see rlvr_boundary.shaping.adapters.verl).")
    return estimator


ESTIMATOR_FUNCTIONS = {}
for _name in ("grpo", "dr_grpo", "rloo", "reinforce_pp", "reinforce_pp_baseline", "remax",
              "passk"):
    ESTIMATOR_FUNCTIONS[PREFIX + _name] = register_adv_est(PREFIX + _name)(_make_estimator(_name))


@register_policy_loss(POLICY_LOSS)
def compute_policy_loss_rlvr_ppl(old_log_prob, log_prob, advantages, response_mask,
                                 loss_agg_mode: str = "token-mean", config=None,
                                 rollout_is_weights=None, **kwargs):
    """Scale advantages by the perplexity factor, then call the base policy loss.

    Groups are consecutive blocks of ``ppl_group_size`` rows (default
    ``config.rollout_n``); see the module notes for the settings that keep them
    contiguous.
    """
    opts = _env_options()
    cfg, extra = _split(opts, opts.get("estimator", "grpo"))
    g = extra["ppl_group_size"] or (config.get("rollout_n", None) if config is not None else None)
    if not g:
        raise ValueError(f"set ppl_group_size in {ENV_VAR} (the actor config has no rollout_n)")
    g = int(g)
    bsz = advantages.shape[0]
    if bsz % g:
        raise ValueError(f"micro-batch of {bsz} rows is not a whole number of groups of {g}: "
                         "use a micro-batch size that is a multiple of rollout.n")
    mask = response_mask.to(advantages.dtype)
    with torch.no_grad():
        # Each row's advantage at its first response token (l = 0), where the position
        # bias is smallest: at most b0 = gamma * sigmoid(d m n) (5.5e-5 at the defaults).
        first = mask.argmax(dim=-1, keepdim=True)  # (bs, 1)
        seq_adv = advantages.gather(-1, first).squeeze(-1) * (mask.sum(-1) > 0)  # (bs,)
        if cfg.estimator in _ZERO_SUM:
            blocks = seq_adv.view(-1, g)  # (bs / g, g)
            tol = 1e-3 * blocks.abs().sum(-1) + 1e-5
            if cfg.position:
                b0 = float(torch_ops.position_bias(torch.zeros(()), gamma=cfg.pos_gamma,
                                                   m=cfg.pos_m, n=cfg.pos_n, d=cfg.pos_d))
                tol = tol + g * b0
            if bool((blocks.sum(-1).abs() > tol).any()):
                raise ValueError(
                    "rows of a micro-batch are not grouped by prompt (group advantages do not sum "
                    "to zero): set trainer.balance_batch=False, actor.shuffle=False and "
                    "actor.use_dynamic_bsz=False for the rlvr_ppl policy loss")
        lppl = torch_ops.log_perplexity(old_log_prob.detach().float(), mask.float())  # (bs,)
        factor = torch_ops.perplexity_multipliers(lppl.view(-1, g), **cfg.perplexity_kwargs())
        factor = factor.reshape(-1, 1).to(advantages.dtype)  # (bs, 1)
    base = get_policy_loss_fn(extra["base_loss_mode"])
    loss, metrics = base(old_log_prob=old_log_prob, log_prob=log_prob,
                         advantages=advantages * factor, response_mask=response_mask,
                         loss_agg_mode=loss_agg_mode, config=config,
                         rollout_is_weights=rollout_is_weights)
    metrics = dict(metrics)
    metrics["actor/rlvr_ppl_factor_min"] = float(factor.min())
    metrics["actor/rlvr_ppl_factor_max"] = float(factor.max())
    return loss, metrics
