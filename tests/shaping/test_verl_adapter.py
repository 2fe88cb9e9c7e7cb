"""The verl adapter against the real verl package: registry, compute_advantage, policy loss.

Skipped when verl (with torch) is not installed. Our estimators are checked
against verl's own built-in estimators on the same batch, called through
verl's ``compute_advantage`` (the function its trainer calls every step).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
core_algos = pytest.importorskip("verl.trainer.ppo.core_algos")

from omegaconf import OmegaConf

from rlvr_boundary.shaping import ShapingConfig
from rlvr_boundary.shaping import shapings as S
from rlvr_boundary.shaping.adapters import verl as adapter
from rlvr_boundary.shaping.pipeline import token_advantages

pytestmark = pytest.mark.torch

ROOT = Path(__file__).resolve().parents[2]
P, G, L = 3, 4, 7


def make_batch(seed=0):
    rng = np.random.default_rng(seed)
    scores = (rng.random(P * G) < 0.5).astype(np.float32)
    scores[:G] = [1, 0, 0, 0]
    lengths = rng.integers(1, L + 1, size=P * G)
    mask = (np.arange(L)[None, :] < lengths[:, None]).astype(np.float32)
    rewards = np.zeros((P * G, L), np.float32)
    rewards[np.arange(P * G), lengths - 1] = scores
    uid = np.repeat([f"u{p}" for p in range(P)], G).astype(object)
    return scores, lengths, mask, rewards, uid


def run_compute_advantage(estimator, rewards, mask, uid, algo=None, baselines=None):
    """Call verl's trainer-side compute_advantage if importable, else the registry directly."""
    algo = OmegaConf.create(algo or {"gamma": 1.0, "lam": 1.0, "norm_adv_by_std_in_grpo": True})
    try:
        from verl import DataProto
        from verl.trainer.ppo.ray_trainer import compute_advantage
    except ImportError:  # trainer deps (torchdata, peft, ...) missing: same kwargs by hand
        kw = dict(token_level_rewards=torch.tensor(rewards), response_mask=torch.tensor(mask),
                  config=algo, index=uid)
        if estimator == "grpo":
            # verl's compute_advantage special-cases GRPO and passes this flag explicitly
            # (verl/trainer/ppo/ray_trainer.py); the other estimators read the config.
            kw["norm_adv_by_std_in_grpo"] = algo.get("norm_adv_by_std_in_grpo", True)
        if baselines is not None:
            kw["reward_baselines"] = torch.tensor(baselines)
        return core_algos.get_adv_estimator_fn(estimator)(**kw)[0].numpy()
    tensors = {"token_level_rewards": torch.tensor(rewards), "response_mask": torch.tensor(mask)}
    if baselines is not None:
        tensors["reward_baselines"] = torch.tensor(baselines)
    data = DataProto.from_dict(tensors=tensors, non_tensors={"uid": uid})
    data = compute_advantage(data, adv_estimator=estimator, config=algo,
                             norm_adv_by_std_in_grpo=algo.get("norm_adv_by_std_in_grpo", True))
    return data.batch["advantages"].numpy()


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    monkeypatch.delenv(adapter.ENV_VAR, raising=False)
    adapter.reset_step_counter()
    yield
    adapter.reset_step_counter()


@pytest.mark.parametrize("ours, theirs, algo", [
    ("rlvr_grpo", "grpo", None),
    ("rlvr_dr_grpo", "grpo", {"norm_adv_by_std_in_grpo": False}),
    ("rlvr_rloo", "rloo", None),
    ("rlvr_reinforce_pp_baseline", "reinforce_plus_plus_baseline", None),
    ("rlvr_reinforce_pp", "reinforce_plus_plus", None),
    ("rlvr_remax", "remax", None),
])
def test_registered_estimators_match_verls_own(ours, theirs, algo):
    scores, lengths, mask, rewards, uid = make_batch()
    base = {"gamma": 1.0, "lam": 1.0, "norm_adv_by_std_in_grpo": True, **(algo or {})}
    baselines = np.repeat([1.0, 0.0, 1.0], G).astype(np.float32) if "remax" in ours else None
    got = run_compute_advantage(ours, rewards, mask, uid, base, baselines)
    ref = run_compute_advantage(theirs, rewards, mask, uid, base, baselines)
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)


def test_passk_and_position_through_verl_equal_numpy_pipeline(monkeypatch):
    scores, lengths, mask, rewards, uid = make_batch(1)
    monkeypatch.setenv(adapter.ENV_VAR, json.dumps({"position": True, "pos_window": [0, 2]}))
    algo = {"gamma": 1.0, "lam": 1.0, "rlvr_boundary": {"k": 2}}  # Hydra node overrides the env
    ref_cfg = ShapingConfig(estimator="passk", k=2, position=True, pos_window=(0, 2))
    ref = token_advantages(ref_cfg, scores.reshape(P, G), mask, step=1)
    got = run_compute_advantage("rlvr_passk", rewards, mask, uid, algo)  # step 1: inside (0, 2)
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)
    assert np.abs(got - token_advantages(ShapingConfig(estimator="passk", k=2),
                                         scores.reshape(P, G), mask)).max() > 1e-3
    got2 = run_compute_advantage("rlvr_passk", rewards, mask, uid, algo)  # step 2: window closed
    np.testing.assert_allclose(got2, token_advantages(ShapingConfig(estimator="passk", k=2),
                                                      scores.reshape(P, G), mask), rtol=1e-5,
                               atol=1e-6)
    adapter.reset_step_counter()
    monkeypatch.setenv(adapter.ENV_VAR, json.dumps({"position": True, "step_offset": 250}))
    got3 = run_compute_advantage("rlvr_grpo", rewards, mask, uid)  # step 251 in (200, 300)
    ref3 = token_advantages(ShapingConfig(position=True), scores.reshape(P, G), mask, step=251)
    np.testing.assert_allclose(got3, ref3, rtol=1e-5, atol=1e-6)


def test_perplexity_policy_loss_scales_advantages_then_calls_base_loss(monkeypatch):
    from verl.workers.config import ActorConfig

    scores, lengths, mask, rewards, uid = make_batch(2)
    adv = run_compute_advantage("rlvr_grpo", rewards, mask, uid)
    gen = torch.Generator().manual_seed(0)
    m = torch.tensor(mask)
    old = -torch.rand(P * G, L, generator=gen) * 3 * m
    new = old + 0.05 * torch.randn(P * G, L, generator=gen) * m
    actor = ActorConfig(strategy="fsdp", rollout_n=G, ppo_mini_batch_size=P * G,
                        ppo_micro_batch_size_per_gpu=P * G)
    monkeypatch.setenv(adapter.ENV_VAR, json.dumps({"ppl_alpha": 0.5, "ppl_clamp": [0.5, 1.5]}))
    loss, metrics = core_algos.get_policy_loss_fn("rlvr_ppl")(
        old_log_prob=old, log_prob=new, advantages=torch.tensor(adv), response_mask=m,
        loss_agg_mode="token-mean", config=actor)
    log_ppl = S.log_perplexity(old.double().numpy(), mask).reshape(P, G)
    factor = S.perplexity_multipliers(log_ppl, alpha=0.5, clamp=(0.5, 1.5)).reshape(-1, 1)
    ref, _ = core_algos.get_policy_loss_fn("vanilla")(
        old_log_prob=old, log_prob=new, advantages=torch.tensor(adv * factor, dtype=torch.float32),
        response_mask=m, loss_agg_mode="token-mean", config=actor)
    assert float(loss) == pytest.approx(float(ref), rel=1e-5)
    assert metrics["actor/rlvr_ppl_factor_min"] == pytest.approx(factor.min(), rel=1e-5)
    # rows not grouped by prompt: the zero-sum guard refuses to train on them
    perm = torch.tensor([0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11])
    with pytest.raises(ValueError, match="not grouped by prompt"):
        core_algos.get_policy_loss_fn("rlvr_ppl")(
            old_log_prob=old[perm], log_prob=new[perm], advantages=torch.tensor(adv)[perm],
            response_mask=m[perm], loss_agg_mode="token-mean", config=actor)


def test_perplexity_loss_guard_also_holds_with_position_shaping(monkeypatch):
    from verl.workers.config import ActorConfig

    scores, lengths, mask, rewards, uid = make_batch(3)
    scores[G:2 * G] = [1, 1, 0, 0]  # every group informative
    rewards[np.arange(P * G), lengths - 1] = scores
    opts = {"estimator": "passk", "k": 2, "position": True, "pos_window": None}
    monkeypatch.setenv(adapter.ENV_VAR, json.dumps(opts))
    adv = torch.tensor(run_compute_advantage("rlvr_passk", rewards, mask, uid))
    m = torch.tensor(mask)
    old = -torch.rand(P * G, L, generator=torch.Generator().manual_seed(1)) * 2 * m
    actor = ActorConfig(strategy="fsdp", rollout_n=G, ppo_mini_batch_size=P * G,
                        ppo_micro_batch_size_per_gpu=P * G)
    loss_fn = core_algos.get_policy_loss_fn("rlvr_ppl")
    loss, _ = loss_fn(old_log_prob=old, log_prob=old, advantages=adv, response_mask=m,
                      loss_agg_mode="token-mean", config=actor)
    # on-policy token-mean loss is -mean(A * factor) over response tokens
    lppl = S.log_perplexity(old.double().numpy(), mask).reshape(P, G)
    factor = S.perplexity_multipliers(lppl, alpha=0.01).reshape(-1, 1)
    ref = -(adv.double().numpy() * factor * mask).sum() / mask.sum()
    assert float(loss) == pytest.approx(ref, rel=1e-5)
    perm = torch.tensor([0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11])
    with pytest.raises(ValueError, match="not grouped by prompt"):
        loss_fn(old_log_prob=old[perm], log_prob=old[perm], advantages=adv[perm],
                response_mask=m[perm], loss_agg_mode="token-mean", config=actor)


def test_errors_are_clear(monkeypatch):
    scores, lengths, mask, rewards, uid = make_batch()
    monkeypatch.setenv(adapter.ENV_VAR, "{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        run_compute_advantage("rlvr_grpo", rewards, mask, uid)
    monkeypatch.setenv(adapter.ENV_VAR, json.dumps({"alpha": 1}))
    with pytest.raises(ValueError, match="unknown shaping options"):
        run_compute_advantage("rlvr_grpo", rewards, mask, uid)
    monkeypatch.setenv(adapter.ENV_VAR, json.dumps({}))
    with pytest.raises(ValueError, match="needs k"):
        run_compute_advantage("rlvr_passk", rewards, mask, uid)


def test_example_loads_through_verl_use_external_modules():
    env = {k: v for k, v in os.environ.items() if k not in ("VERL_USE_EXTERNAL_MODULES",
                                                            adapter.ENV_VAR)}
    proc = subprocess.run([sys.executable, str(ROOT / "examples/verl_registered_estimators.py")],
                          capture_output=True, text=True, env=env, timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    first = [ln for ln in lines if ln.strip().startswith("rollout 0:")][0]
    # prompt 0 has rewards 1, 0, 0, 0: pass@2 gives A+ = sqrt(q/rho) = sqrt(.5/.5) = 1
    # at the first token (bias ~ 0.1 * sigmoid(-7.5) = 6e-5 on top)
    assert "A[first] +1.0001" in first
    assert "rlvr_ppl policy loss" in lines[-1]


def test_shell_recipe_overrides_name_real_verl_config_keys():
    """Every Hydra override of examples/verl_grpo_passk.sh names a key of verl's shipped
    trainer config (hydra itself is not installed here, so we check the keys, not a run)."""
    import re

    import verl

    cfg = OmegaConf.load(Path(verl.__file__).parent / "trainer/config/_generated_ppo_trainer.yaml")
    script = (ROOT / "examples/verl_grpo_passk.sh").read_text()
    command = script.split("python3 -m verl.trainer.main_ppo", 1)[1].split('"$@"')[0]
    overrides = re.findall(r"^\s+([+\w.]+)=", command, flags=re.M)
    assert "algorithm.adv_estimator" in overrides and len(overrides) >= 15

    def has(path):
        node = cfg
        for part in path.split("."):
            if not OmegaConf.is_dict(node) or part not in list(node.keys()):  # '???' too
                return False
            node = node._get_node(part)
        return True

    missing = [o for o in overrides if not o.startswith("+") and not has(o)]
    assert not missing, f"not in verl's config: {missing}"
    # the registered names the recipe selects exist once the adapter is imported
    est = re.search(r"algorithm.adv_estimator=(\w+)", command).group(1)
    loss = re.search(r"policy_loss.loss_mode=(\w+)", command).group(1)
    assert core_algos.get_adv_estimator_fn(est) is adapter.ESTIMATOR_FUNCTIONS[est]
    assert core_algos.get_policy_loss_fn(loss) is adapter.compute_policy_loss_rlvr_ppl
    # the options JSON of the recipe is valid for the adapter
    options = re.search(r"RLVR_BOUNDARY_SHAPING='(.+?)'", script).group(1)
    cfg_opts, extra = adapter._split(json.loads(options))
    assert cfg_opts.estimator == "passk" and cfg_opts.k == 4 and cfg_opts.position
