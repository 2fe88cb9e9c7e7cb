"""The TRL adapter trains on CPU with a tiny local model, and feeds TRL our advantages."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("trl")
pytest.importorskip("transformers")
pytest.importorskip("datasets")

import torch

from rlvr_boundary.shaping import ShapingConfig
from rlvr_boundary.shaping.pipeline import token_advantages

pytestmark = pytest.mark.torch

ROOT = Path(__file__).resolve().parents[2]


def load_example():
    spec = importlib.util.spec_from_file_location("trl_shaped_grpo",
                                                  ROOT / "examples/trl_shaped_grpo.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_shaped_trainer_trains_and_uses_our_advantages(tmp_path):
    example = load_example()
    cfg = ShapingConfig(estimator="passk", k=2, perplexity=True, ppl_alpha=0.2, position=True,
                        pos_window=None)
    trainer = example.make_trainer(cfg, max_steps=3, output_dir=str(tmp_path))
    seen = []
    generate = trainer._generate_and_score_completions
    rewards_fn = trainer._calculate_rewards
    log_ppl_fn = trainer._rlvr_local_log_ppl

    def record_rewards(*a, **k):
        out = rewards_fn(*a, **k)
        seen.append({"rewards": out.detach().clone()})
        return out

    def record_log_ppl(output, mask):
        out = log_ppl_fn(output, mask)
        seen[-1]["log_ppl"] = out.detach().clone()
        return out

    def record(inputs):
        out = generate(inputs)
        seen[-1].update(adv=out["advantages"].detach().clone(),
                        mask=out["completion_mask"].detach().clone(),
                        step=trainer.state.global_step)
        return out

    losses = []
    compute_loss = trainer._compute_loss

    def record_loss(model, inputs):
        # On-policy (one iteration per generation, beta = 0): the importance ratio is exactly
        # 1, so TRL's default "dapo" loss is -sum(A * mask) / normalizer. The same call with
        # all-ones advantages gives -sum(mask) / normalizer, so the ratio of the two losses
        # pins the advantages the loss used.
        loss = compute_loss(model, inputs)
        with torch.no_grad():
            ones = compute_loss(model, {**inputs,
                                        "advantages": torch.ones_like(inputs["advantages"])})
        losses.append(dict(adv=inputs["advantages"].detach().clone(),
                           mask=inputs["completion_mask"].detach().clone(),
                           loss=float(loss), ones=float(ones), step=len(seen)))
        return loss

    trainer._calculate_rewards = record_rewards
    trainer._rlvr_local_log_ppl = record_log_ppl
    trainer._generate_and_score_completions = record
    trainer._compute_loss = record_loss
    before = [p.detach().clone() for p in trainer.model.parameters()]
    trainer.train()
    assert trainer.state.global_step == 3
    assert len(seen) == 3
    assert trainer.loss_type == "dapo" and trainer.beta == 0.0 and len(losses) >= 3
    after = trainer.model.parameters()
    changed = any(not torch.equal(a, b.detach()) for a, b in zip(before, after))
    assert changed, "no parameter moved in 3 optimizer steps"
    informative = 0
    for rec in seen:
        r = rec["rewards"][:, 0].numpy().reshape(-1, 4)  # (P, G): 4 generations per prompt
        mask = rec["mask"].numpy()
        ref = token_advantages(cfg, r, mask, log_ppl=rec["log_ppl"].numpy().reshape(-1, 4),
                               step=rec["step"])
        assert rec["adv"].shape == mask.shape  # position shaping gives (B, T) advantages
        np.testing.assert_allclose(rec["adv"].numpy(), ref, rtol=1e-5, atol=1e-6)
        informative += int(np.abs(ref).max() > 0)
    assert informative >= 1, "every group had identical rewards; the check saw only zeros"
    # The advantages reach the loss: the rows the loss received are the rows we produced
    # (TRL may shuffle them), and the loss is the dapo functional of exactly those values.
    for rec in losses:
        gen = seen[rec["step"] - 1]
        got_rows = sorted(map(tuple, np.round(rec["adv"].numpy(), 6)))
        gen_rows = sorted(map(tuple, np.round(gen["adv"].numpy(), 6)))
        assert got_rows == gen_rows
        a, m = rec["adv"].double().numpy(), rec["mask"].double().numpy()
        expected = (a * m).sum() / m.sum()
        assert rec["loss"] / rec["ones"] == pytest.approx(expected, rel=1e-4, abs=1e-6)
    assert any(abs(rec["loss"]) > 1e-4 for rec in losses), "the loss never saw a nonzero advantage"


def test_sequence_level_advantages_without_position(tmp_path):
    example = load_example()
    cfg = ShapingConfig(estimator="rloo")
    trainer = example.make_trainer(cfg, max_steps=1, output_dir=str(tmp_path))
    got = {}
    generate = trainer._generate_and_score_completions
    rewards_fn = trainer._calculate_rewards

    def record_rewards(*a, **k):
        got["rewards"] = rewards_fn(*a, **k)
        return got["rewards"]

    def record(inputs):
        out = generate(inputs)
        got["adv"] = out["advantages"]
        return out

    trainer._calculate_rewards = record_rewards
    trainer._generate_and_score_completions = record
    trainer.train()
    r = got["rewards"][:, 0].numpy().reshape(-1, 4)
    assert got["adv"].dim() == 1
    np.testing.assert_allclose(got["adv"].numpy().reshape(-1, 4),
                               (r - r.mean(axis=1, keepdims=True)) * 4 / 3, rtol=1e-6, atol=1e-7)


def test_example_script_runs():
    proc = subprocess.run([sys.executable, str(ROOT / "examples/trl_shaped_grpo.py"),
                           "--estimator", "passk", "--k", "2", "--perplexity", "--position",
                           "--max-steps", "2"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "trained 2 steps" in proc.stdout


def test_unscored_completions_get_zero_advantage(tmp_path):
    example = load_example()
    cfg = ShapingConfig(estimator="grpo")
    trainer = example.make_trainer(cfg, max_steps=1, output_dir=str(tmp_path))

    def every_third_unscored(completions, target, **kwargs):
        scores = example.correct_sum(completions, target)
        return [None if i % 3 == 0 else s for i, s in enumerate(scores)]

    trainer.reward_funcs[0] = every_third_unscored
    got = {}
    generate = trainer._generate_and_score_completions
    rewards_fn = trainer._calculate_rewards

    def record_rewards(*a, **k):
        got["rewards"] = rewards_fn(*a, **k).detach().clone()
        return got["rewards"]

    def record(inputs):
        out = generate(inputs)
        got["adv"] = out["advantages"].detach().clone()
        return out

    trainer._calculate_rewards = record_rewards
    trainer._generate_and_score_completions = record
    trainer.train()
    raw = got["rewards"][:, 0].numpy()  # (16,), NaN where unscored
    unscored = np.isnan(raw)
    assert unscored.sum() == 6
    r = np.where(unscored, 0.0, raw).reshape(-1, 4)
    from rlvr_boundary.shaping.estimators import grpo_advantages

    ref = np.where(unscored, 0.0, grpo_advantages(r).reshape(-1))
    np.testing.assert_allclose(got["adv"].numpy(), ref, rtol=1e-5, atol=1e-6)
