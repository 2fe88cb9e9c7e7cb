"""GRPO on the lab task, readable top to bottom.

One step: draw a batch of problems, sample a group of G completions for each
with the policy (``model.generate``), verify them (reward 1 if correct, else
0), turn rewards into token advantages with the shaping package (any of its
estimators, optional perplexity and position shaping), and take one gradient
step on the policy-gradient loss, plus an optional KL penalty to the base model.

Simplifications, stated as nanochat states its own:

1. Fully on-policy: one optimizer step per batch of rollouts, so the PPO ratio
   is exactly 1 and clipping never acts; the loss is ``-A * log pi(y_t)``.
2. Token-mean loss: the sum over every generated token of the batch divided by
   their number (verl's ``token-mean``), not GRPO's per-sequence mean.
3. KL to the base (optional, coefficient ``kl_coef``) with the k3 estimator
   ``exp(r) - r - 1``, ``r = log pi_ref - log pi`` per token, as in DeepSeekMath.
   With ``ref_reset_every`` (prolonged RL, as ProRL does) the reference is reset
   to the current policy every that many steps and the optimizer state is
   reinitialised; ProRL's other ingredients (DAPO's decoupled clipping and
   dynamic sampling, rollout temperature 1.2) are not used.
4. Rewards are the verifier's 0/1 verdicts; no format reward.

Advantages come from :func:`rlvr_boundary.shaping.token_advantages` (the NumPy
reference of the trainer adapters): rows are group-major (row ``p * G + g`` is
completion g of prompt p), as the shaping package expects.

References
----------
Shao et al., "DeepSeekMath: Pushing the Limits of Mathematical Reasoning in Open
Language Models" (arXiv 2402.03300): GRPO and the k3 KL estimator.
Liu et al., "Understanding R1-Zero-Like Training: A Critical Perspective" (arXiv
2503.20783): Dr. GRPO.
Liu et al., "ProRL: Prolonged Reinforcement Learning Expands Reasoning Boundaries
in Large Language Models" (arXiv 2505.24864): KL penalty with reference resets.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from rlvr_boundary.errors import require
from rlvr_boundary.lab import task as T
from rlvr_boundary.shaping import ShapingConfig, token_advantages


@dataclass
class GRPOConfig:
    """Options of the RL stage."""

    steps: int = 100
    """Optimizer steps (one batch of rollouts each)."""
    prompts_per_step: int = 16
    """Problems per batch (P)."""
    group_size: int = 8
    """Completions per problem (G)."""
    lr: float = 2e-3
    """Adam learning rate (constant)."""
    kl_coef: float = 0.0
    """Weight of the k3 KL penalty to the reference model (0: no reference model)."""
    ref_reset_every: int = 0
    """Reset the reference model to the current policy, and the optimizer state, every this
    many steps (ProRL's reference reset; 0: the reference stays the base). Needs
    ``kl_coef > 0`` and a multiple of ``save_every`` (a resumed run reloads the reference
    from the checkpoint of the last reset)."""
    max_new_tokens: int = 32
    """Longest completion; longer ones are cut and count as wrong."""
    save_every: int = 25
    """Write a checkpoint every this many steps (and at the last step)."""
    seed: int = 0
    """Seed of problem draws and sampling."""
    shaping: ShapingConfig = field(default_factory=ShapingConfig)
    """Estimator and shapings (the shaping package's options)."""

    def __post_init__(self) -> None:
        if isinstance(self.shaping, dict):  # from JSON: an empty ``extra`` is not an option
            self.shaping = ShapingConfig.from_mapping(
                {k: v for k, v in self.shaping.items() if not (k == "extra" and not v)})
        for name in ("steps", "prompts_per_step", "group_size", "max_new_tokens", "save_every"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        if self.group_size < 2:
            raise ValueError("group_size must be >= 2 (group advantages need a baseline)")
        if not 0 < self.lr < 1:
            raise ValueError(f"lr must be in (0, 1), got {self.lr!r}")
        if not self.kl_coef >= 0:
            raise ValueError(f"kl_coef must be >= 0, got {self.kl_coef!r}")
        r = self.ref_reset_every
        if isinstance(r, bool) or not isinstance(r, int) or r < 0:
            raise ValueError(f"ref_reset_every must be an integer >= 0, got {r!r}")
        if r and (self.kl_coef == 0 or r % self.save_every):
            raise ValueError("ref_reset_every needs kl_coef > 0 and must be a multiple of "
                             f"save_every ({self.save_every}), got {r}")
        if self.shaping.estimator == "remax":
            raise ValueError("the lab does not run ReMax (it needs a greedy rollout per prompt)")


def prompt_ids(tokenizer, problems):
    """``(B, Lp)`` ids of ``<s> prompt`` (every lab prompt has the same length)."""
    torch = require("torch", "hf", "the lab")
    rows = [[tokenizer.bos_token_id] + tokenizer(p.prompt, add_special_tokens=False)["input_ids"]
            for p in problems]
    if len({len(r) for r in rows}) != 1:
        raise ValueError("lab prompts must all have the same number of tokens")
    return torch.tensor(rows, dtype=torch.long)


def completion_mask(gen, eos_id: int):
    """``(B, T)`` mask of the generated tokens up to and including the first end token."""
    torch = require("torch", "hf", "the lab")
    is_eos = (gen == eos_id).long()
    before = torch.cumsum(is_eos, dim=1) - is_eos  # end tokens strictly before t
    return (before == 0).long()


def token_logprobs(model, seq, n_prompt: int, mask):
    """Log-probs ``(B, T)`` of the generated tokens and the full logits' entropy ``(B, T)``."""
    torch = require("torch", "hf", "the lab")
    att = torch.cat([torch.ones_like(seq[:, :n_prompt]), mask], dim=1)  # (B, Lp + T)
    logits = model(input_ids=seq, attention_mask=att).logits[:, n_prompt - 1:-1]  # (B, T, V)
    logp = torch.log_softmax(logits.float(), dim=-1)  # (B, T, V)
    tok = logp.gather(-1, seq[:, n_prompt:, None]).squeeze(-1)  # (B, T)
    ent = -(logp.exp() * logp).sum(-1)  # (B, T)
    return tok, ent


def rollout(model, tokenizer, problems, group_size: int, max_new_tokens: int):
    """Sample ``group_size`` completions per problem; rows are group-major.

    Returns ``(seq (B, Lp + T), n_prompt, mask (B, T), texts)`` with ``B = P * G``.
    """
    torch = require("torch", "hf", "the lab")
    ids = prompt_ids(tokenizer, problems).repeat_interleave(group_size, dim=0)  # (B, Lp)
    with torch.no_grad():
        seq = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), do_sample=True,
                             temperature=1.0, top_k=0, top_p=1.0, max_new_tokens=max_new_tokens,
                             pad_token_id=tokenizer.pad_token_id,
                             eos_token_id=tokenizer.eos_token_id)  # (B, Lp + T)
    n_prompt = ids.shape[1]
    gen = seq[:, n_prompt:]  # (B, T)
    mask = completion_mask(gen, tokenizer.eos_token_id)  # (B, T)
    texts = [tokenizer.decode(g[m.bool()], skip_special_tokens=True) for g, m in zip(gen, mask)]
    return seq, n_prompt, mask, texts


def reset_steps(cfg: GRPOConfig) -> list[int]:
    """Steps after which the reference is reset: every multiple of ``ref_reset_every`` up to
    the last step (none without it). A reset at the last step changes nothing trained, but
    keeps a run stopped there and resumed with more steps equal to an uninterrupted one."""
    r = cfg.ref_reset_every
    return list(range(r, cfg.steps + 1, r)) if r else []


def rewards_of(problems, texts, group_size: int) -> tuple[np.ndarray, list[str | None]]:
    """``(P, G)`` 0/1 rewards from the verifier and the strategy of every completion."""
    verdicts = [T.verify(problems[i // group_size], t) for i, t in enumerate(texts)]
    r = np.array([v["correct"] for v in verdicts], dtype=np.float64)
    return r.reshape(len(problems), group_size), [v["strategy"] for v in verdicts]


def train(model, tokenizer, cfg: GRPOConfig, problems_at, out_dir: str | Path, *,
          ref_model=None, progress=None, save=None) -> list[dict]:
    """Run GRPO in place on ``model``; resume from the last checkpoint in ``out_dir``.

    Parameters
    ----------
    model, tokenizer
        The policy (starts as the base model) and its tokenizer.
    cfg
        Options.
    problems_at
        ``problems_at(step)`` -> the problems of that step (1-based), drawn from the
        train split by :func:`rlvr_boundary.lab.splits.rl_problems`; a function of the
        step alone, so a resumed run continues exactly as an uninterrupted one.
    out_dir
        Folder of ``step-N`` checkpoints and ``train_log.jsonl``.
    ref_model
        Frozen reference model for the KL penalty (the base; needed when
        ``cfg.kl_coef > 0``). With ``cfg.ref_reset_every`` its weights are replaced by
        the policy's at every reset.
    progress
        ``progress(step, record)`` after each step.
    save
        ``save(model, step)`` writes a checkpoint (the pipeline passes the HF-folder
        writer and records the optimizer state beside it).

    Returns
    -------
    list of dict
        One record per step: mean reward, token entropy, KL, strategy shares, and
        ``ref_reset`` on the steps after which the reference was reset.
    """
    torch = require("torch", "hf", "the lab")
    out_dir = Path(out_dir)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr, betas=(0.9, 0.99))
    log_path = out_dir / "train_log.jsonl"
    start, log = _resume(out_dir, model, opt, log_path)
    if cfg.kl_coef > 0 and ref_model is None:
        raise ValueError("kl_coef > 0 needs the base model as ref_model")
    resets = reset_steps(cfg)
    done = [r for r in resets if r <= start]
    if done:  # resumed after a reset: the reference is the policy of the last reset
        _load_weights(ref_model, out_dir / f"step-{done[-1]}")
    names = list(T.STRATEGIES)
    for step in range(start + 1, cfg.steps + 1):
        # Every step draws its problems and samples from its own seeds, so a resumed
        # run continues exactly as an uninterrupted one would.
        problems = problems_at(step)
        torch.manual_seed(cfg.seed * 1_000_003 + step)

        # 1. rollouts (group-major rows)
        model.eval()
        seq, n_prompt, mask, texts = rollout(model, tokenizer, problems, cfg.group_size,
                                             cfg.max_new_tokens)
        rewards, strategies = rewards_of(problems, texts, cfg.group_size)  # (P, G)

        # 2. policy log-probs with gradient
        model.train()
        logp, ent = token_logprobs(model, seq, n_prompt, mask)  # (B, T) each
        m = mask.float()  # (B, T)
        n_tok = m.sum(dim=1).clamp(min=1)  # (B,)
        log_ppl = (-(logp.detach() * m).sum(dim=1) / n_tok).numpy()  # (B,)

        # 3. advantages from the shaping package
        adv = token_advantages(cfg.shaping, rewards, mask.numpy(),
                               log_ppl=log_ppl.reshape(rewards.shape), step=step)  # (B, T)
        adv = torch.as_tensor(adv, dtype=torch.float32)

        # 4. loss: policy gradient (+ KL to the base), token mean
        per_tok = -adv * logp  # (B, T)
        kl = torch.zeros_like(logp)
        if cfg.kl_coef > 0:
            with torch.no_grad():
                ref_logp, _ = token_logprobs(ref_model, seq, n_prompt, mask)  # (B, T)
            r = ref_logp - logp
            kl = torch.exp(r) - r - 1  # k3 estimator, >= 0
            per_tok = per_tok + cfg.kl_coef * kl
        loss = (per_tok * m).sum() / m.sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()

        rec = {"step": step, "reward": float(rewards.mean()),
               "entropy": float((ent.detach() * m).sum() / m.sum()),
               "kl": float((kl.detach() * m).sum() / m.sum()), "loss": float(loss.detach()),
               "strategy": {s: strategies.count(s) / len(strategies) for s in names}}
        if step in resets:
            # ProRL: the reference becomes the current policy; the optimizer starts afresh.
            ref_model.load_state_dict(model.state_dict())
            opt = torch.optim.Adam(model.parameters(), lr=cfg.lr, betas=(0.9, 0.99))
            rec["ref_reset"] = True
        log.append(rec)
        if step % cfg.save_every == 0 or step == cfg.steps:
            if save is not None:
                save(model, step)
            torch.save(opt.state_dict(), out_dir / "optimizer.pt")
            # the log is rewritten only at checkpoints, so it always matches the last one
            with open(log_path, "w", encoding="utf-8") as fh:
                fh.writelines(json.dumps(r) + "\n" for r in log)
            (out_dir / "last_step").write_text(str(step), encoding="utf-8")
        if progress is not None:
            progress(step, rec)
    return log


def _resume(out_dir: Path, model, opt, log_path: Path) -> tuple[int, list[dict]]:
    """Load the last checkpoint's weights, optimizer state and log, if any."""
    torch = require("torch", "hf", "the lab")
    marker = out_dir / "last_step"
    if not marker.exists():
        return 0, []
    step = int(marker.read_text(encoding="utf-8"))
    _load_weights(model, out_dir / f"step-{step}")
    opt.load_state_dict(torch.load(out_dir / "optimizer.pt", weights_only=True))
    log = [json.loads(line) for line in log_path.read_text(encoding="utf-8").splitlines()]
    return step, log[:step]


def _load_weights(model, folder: Path) -> None:
    """Load a checkpoint folder's weights into ``model`` in place (tied head included)."""
    from safetensors.torch import load_file

    state = load_file(str(folder / "model.safetensors"))
    missing, unexpected = model.load_state_dict(state, strict=False)
    if unexpected or any("lm_head" not in k for k in missing):
        raise RuntimeError(f"checkpoint {folder.name} does not match the model")
    model.tie_weights()
