"""Pretraining the base model: next-token prediction on a mixture of strategy traces.

Design decisions:

- The corpus (:func:`rlvr_boundary.lab.splits.pretrain_corpus`) is
  ``pretrain.traces`` problems drawn from the task distribution over the *train*
  digit triples (never an audited prompt), each written out by one strategy
  drawn from the pretraining mixture (:data:`rlvr_boundary.lab.task.PRETRAIN_MIX`)
  *independently of the prompt* (and of its cue, in the cued family). The traces
  are faithful (the arithmetic is right) but about half of them commit to an
  expression that misses the target: the base learns the three procedures and
  the mixture, not which procedure fits which prompt.
- Loss on every token of ``<s> prompt completion </s>`` (plain language
  modelling); the prompt puts the target t first, so predicting the prompt
  teaches nothing about which strategy reaches t.
- AdamW with linear warm-up and cosine decay; one fixed seed drives the corpus,
  the initialisation and the batch order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rlvr_boundary.errors import require


@dataclass
class PretrainConfig:
    """Options of the pretraining stage."""

    traces: int = 20000
    """Number of strategy traces in the corpus."""
    steps: int = 1500
    """Optimizer steps."""
    batch_size: int = 128
    """Sequences per step."""
    lr: float = 3e-3
    """Peak learning rate."""
    warmup: int = 50
    """Linear warm-up steps."""
    weight_decay: float = 0.01
    """AdamW weight decay."""
    seed: int = 0
    """Seed of the corpus, the initialisation and the batch order."""

    def __post_init__(self) -> None:
        for name in ("traces", "steps", "batch_size"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        if not 0 < self.lr < 1:
            raise ValueError(f"lr must be in (0, 1), got {self.lr!r}")
        if self.warmup < 0 or self.weight_decay < 0:
            raise ValueError("warmup and weight_decay must be >= 0")


def encode(tokenizer, prompts, completions, max_len: int):
    """Right-padded ``(B, L)`` ids and attention mask of ``<s> prompt completion </s>``."""
    torch = require("torch", "hf", "the lab")
    rows = [[tokenizer.bos_token_id] + tokenizer(p + c, add_special_tokens=False)["input_ids"]
            + [tokenizer.eos_token_id] for p, c in zip(prompts, completions)]
    L = max(len(r) for r in rows)
    if L > max_len:
        raise ValueError(f"a training sequence has {L} tokens, more than max_len = {max_len}")
    ids = torch.full((len(rows), L), tokenizer.pad_token_id, dtype=torch.long)  # (B, L)
    att = torch.zeros((len(rows), L), dtype=torch.long)  # (B, L)
    for i, r in enumerate(rows):
        ids[i, :len(r)] = torch.tensor(r)
        att[i, :len(r)] = 1
    return ids, att


def pretrain(model, tokenizer, cfg: PretrainConfig, prompts, completions, *, max_len: int,
             progress=None) -> list[float]:
    """Train ``model`` in place on the (prompt, completion) corpus; return the loss of every step.

    ``progress(step, loss)`` is called after each step (the pipeline's progress bar).
    """
    torch = require("torch", "hf", "the lab")
    ids, att = encode(tokenizer, prompts, completions, max_len)  # (N, L)
    labels = ids.masked_fill(att == 0, -100)  # (N, L): no loss on padding
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay,
                            betas=(0.9, 0.98))

    def lr_at(step: int) -> float:
        if step < cfg.warmup:
            return cfg.lr * (step + 1) / cfg.warmup
        frac = (step - cfg.warmup) / max(1, cfg.steps - cfg.warmup)
        return cfg.lr * 0.5 * (1 + np.cos(np.pi * frac))

    gen = torch.Generator().manual_seed(cfg.seed)
    model.train()
    losses = []
    for step in range(cfg.steps):
        idx = torch.randint(0, ids.shape[0], (cfg.batch_size,), generator=gen)
        batch_att = att[idx]
        L = int(batch_att.sum(dim=1).max())  # trim the batch to its longest row
        out = model(input_ids=ids[idx, :L], attention_mask=batch_att[:, :L], labels=labels[idx, :L])
        for g in opt.param_groups:
            g["lr"] = lr_at(step)
        opt.zero_grad(set_to_none=True)
        out.loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(float(out.loss.detach()))
        if progress is not None:
            progress(step + 1, losses[-1])
    model.eval()
    return losses


def fit(model, tokenizer, prompts, completions, *, steps: int, batch_size: int, lr: float,
        seed: int, max_len: int, completion_only: bool, warmup: int = 20,
        weight_decay: float = 0.01, progress=None) -> list[float]:
    """Next-token training of ``model`` on ``prompt + completion`` pairs; the loss of each step.

    ``completion_only`` puts the loss on the completion and end tokens only (fine-tuning);
    otherwise on every token (pretraining). AdamW, warm-up then cosine decay, as the
    base's pretraining (:func:`pretrain`).
    """
    torch = require("torch", "hf", "the lab")
    ids, att = encode(tokenizer, prompts, completions, max_len)  # (N, L)
    labels = ids.masked_fill(att == 0, -100)  # (N, L)
    if completion_only:
        for i, p in enumerate(prompts):  # BOS + prompt get no loss
            labels[i, :1 + len(tokenizer(p, add_special_tokens=False)["input_ids"])] = -100
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay,
                            betas=(0.9, 0.98))
    gen = torch.Generator().manual_seed(seed)
    model.train()
    losses = []
    for step in range(steps):
        frac = (step - warmup) / max(1, steps - warmup)
        rate = lr * (step + 1) / warmup if step < warmup else lr * 0.5 * (1 + np.cos(np.pi * frac))
        for g in opt.param_groups:
            g["lr"] = rate
        idx = torch.randint(0, ids.shape[0], (batch_size,), generator=gen)
        batch_att = att[idx]
        L = int(batch_att.sum(dim=1).max())
        loss = model(input_ids=ids[idx, :L], attention_mask=batch_att[:, :L],
                     labels=labels[idx, :L]).loss
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(float(loss.detach()))
        if progress is not None:
            progress(step + 1, losses[-1])
    model.eval()
    return losses
