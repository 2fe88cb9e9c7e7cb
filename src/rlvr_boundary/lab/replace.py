"""Experiment 6: token replacement by relative position and sample perplexity.

The intervention of the RLVR technical report of Renmin University's Gaoling
School of AI (an extension of "Decomposing the Entropy-Performance Exchange"):
replace one token of a sampled completion with an alternative, resample the
rest, and see whether the verdict changes. The report finds that replacing the
first tokens changes the outcome a lot and the last ones little, and that
low-perplexity samples change less (their reasoning paths are more robust).

What we do, for the base and the last GRPO checkpoint of experiment 1's
pipeline (same seed, same weights):

1. Sample ``samples_per_prompt`` completions on each of ``prompts`` held-out
   problems (temperature 1, no truncation), with the full next-token
   distributions; record each sample's verdict and log-perplexity
   (``-(1/T) sum_t log p(y_t)`` over its tokens, the end token included).
2. Replace every token of the completion before the end token (``positions =
   "every"``; token ``j`` of ``L`` falls in relative-position bin
   ``floor(j * n_bins / L)``), or one token per bin, at its centre
   (``"centres"``), with the *alternative*: ``second``, the most likely
   token other than the sampled one under the model's distribution at that
   position (the second most likely token when the sampled one was the most
   likely, as it is for most tokens), or ``random``, a uniformly drawn other
   token; special tokens are never chosen.
3. Resample the continuation ``resamples`` times (temperature 1, the same
   length limit as the original) and verify; as a control, resample as often
   with the original token kept, which measures what resampling alone changes.
4. Aggregate with :func:`rlvr_boundary.analysis.replacement.replacement_effects`
   by position bin, by tertile of the samples' log-perplexity and by token kind
   (:func:`token_category`); plot.

Records go to ``replacement/<model>.parquet`` (one per model, written whole:
the stage resumes per model).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rlvr_boundary.errors import InputError, require
from rlvr_boundary.lab import task as T

__all__ = ["ReplaceConfig", "REPLACE_PRESETS", "replace_and_resample", "run",
           "plot_replacement"]


@dataclass
class ReplaceConfig:
    """Options of the token-replacement experiment (beside the run's ``LabConfig``)."""

    prompts: int = 120
    """Held-out problems (the first of the audit's problems)."""
    samples_per_prompt: int = 4
    """Original samples per problem."""
    n_bins: int = 10
    """Relative positions per sample (the centres of equal bins)."""
    resamples: int = 2
    """Continuations per replaced token (and per kept token, the control)."""
    alternative: str = "second"
    """second (most likely other token) or random (a uniformly drawn other token)."""
    positions: str = "every"
    """every (replace every token, binned by relative position) or centres (one token per
    bin, at its centre)."""

    def __post_init__(self) -> None:
        for name in ("prompts", "samples_per_prompt", "n_bins", "resamples"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        if self.alternative not in ("second", "random"):
            raise ValueError(f"alternative must be 'second' or 'random', got {self.alternative!r}")
        if self.positions not in ("every", "centres"):
            raise ValueError(f"positions must be 'every' or 'centres', got {self.positions!r}")

    @classmethod
    def from_preset(cls, preset: str, **overrides) -> "ReplaceConfig":
        """The preset's options with ``overrides`` on top."""
        return cls(**{**REPLACE_PRESETS[preset], **overrides})


#: Options of each preset.
REPLACE_PRESETS: dict[str, dict] = {
    "quick": {"prompts": 12, "samples_per_prompt": 2, "n_bins": 5, "resamples": 1},
    "full": {"prompts": 120, "samples_per_prompt": 4, "n_bins": 10, "resamples": 2},
}


def _positions(length: int, n_bins: int) -> list[int]:
    """Token index at the centre of each relative-position bin of a length-``length`` completion."""
    return [min(length - 1, int((b + 0.5) * length / n_bins)) for b in range(n_bins)]


def _bin_of(index: int, length: int, n_bins: int) -> int:
    """Relative-position bin of token ``index`` of ``length``: ``floor(index * n_bins / length)``."""
    return min(n_bins - 1, index * n_bins // length)


def token_category(token: str, index: int, in_answer: bool) -> str:
    """Kind of a lab completion token: strategy name, worked or answer digit / operator, format.

    Examples
    --------
    >>> [token_category(t, i, False) for i, t in enumerate([" add", ":", " 7", "+"])]
    ['strategy name', 'format', 'worked digit', 'worked operator']
    >>> token_category("4", 19, True)
    'answer operand'
    """
    t = token.strip()
    if index == 0 and t in T.STRATEGIES:
        return "strategy name"
    if t.isdigit():
        return "answer operand" if in_answer else "worked digit"
    if t in ("+", "*", "-"):
        return "answer operator" if in_answer else "worked operator"
    return "format"


def _generate(model, tok, prefixes: list[list[int]], n_prompt: int, max_total: int, seed: int,
              progress=None) -> list[str]:
    """Complete every prefix (ids incl. BOS and prompt); decoded completions, in order.

    Prefixes of one length are decoded together (no padding), each group from its own
    seed, so the result does not depend on the other prefixes.
    """
    torch = require("torch", "hf", "the lab")
    from rlvr_boundary.lab.grpo import completion_mask

    out: list[str | None] = [None] * len(prefixes)
    by_len: dict[int, list[int]] = {}
    for i, p in enumerate(prefixes):
        by_len.setdefault(len(p), []).append(i)
    chunk, done = 512, 0
    for L, idx in sorted(by_len.items()):
        remaining = max_total - L
        for s in range(0, len(idx), chunk):
            part = idx[s:s + chunk]
            ids = torch.tensor([prefixes[i] for i in part], dtype=torch.long)  # (b, L)
            if remaining > 0:
                torch.manual_seed(seed * 1_000_003 + L * 1009 + s)
                with torch.no_grad():
                    ids = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids),
                                         do_sample=True, temperature=1.0, top_k=0, top_p=1.0,
                                         max_new_tokens=remaining, pad_token_id=tok.pad_token_id,
                                         eos_token_id=tok.eos_token_id)  # (b, L + T')
            gen = ids[:, n_prompt:]
            mask = completion_mask(gen, tok.eos_token_id)
            for i, g, m in zip(part, gen, mask):
                out[i] = tok.decode(g[m.bool()], skip_special_tokens=True)
            done += len(part)
            if progress is not None:
                progress(done)
    return out  # type: ignore[return-value]


def replace_and_resample(model, tok, problems, rcfg: ReplaceConfig, *, seed: int,
                         max_new_tokens: int, progress=None) -> dict:
    """Sample, replace a token at each relative position, resample; one record per (sample, bin).

    Returns a dict of equal-length lists (the records, see the module docstring) and
    ``samples``: per sample its prompt, text, verdict, strategy, log-PPL and length.
    """
    torch = require("torch", "hf", "the lab")
    from rlvr_boundary.lab import grpo as G

    S, B, R = rcfg.samples_per_prompt, rcfg.n_bins, rcfg.resamples
    torch.manual_seed(seed * 1_000_003 + 99)
    seq, n_prompt, mask, texts = G.rollout(model, tok, problems, S, max_new_tokens)
    with torch.no_grad():
        att = torch.cat([torch.ones_like(seq[:, :n_prompt]), mask], dim=1)
        logits = model(input_ids=seq, attention_mask=att).logits[:, n_prompt - 1:-1]  # (N, T, V)
        logp = torch.log_softmax(logits.float(), dim=-1)  # (N, T, V)
    gen = seq[:, n_prompt:]  # (N, T)
    tok_lp = logp.gather(-1, gen[:, :, None]).squeeze(-1)  # (N, T)
    m = mask.float()
    log_ppl = (-(tok_lp * m).sum(1) / m.sum(1).clamp(min=1)).numpy()  # (N,)
    special = [t for t in (tok.bos_token_id, tok.eos_token_id, tok.pad_token_id) if t is not None]
    rng = np.random.default_rng([seed, 98])

    samples = {"prompt_id": [], "text": [], "correct": [], "strategy": [], "log_ppl": [],
               "length": []}
    rec = {k: [] for k in ("sample", "prompt_id", "bin", "index", "length", "rel_pos",
                           "prefix", "token", "category", "alternative", "alt_rank",
                           "original")}
    jobs_rep, jobs_ctl = [], []
    for i in range(seq.shape[0]):
        p = problems[i // S]
        v = T.verify(p, texts[i])
        n_tok = int(mask[i].sum())
        ended = n_tok > 0 and int(gen[i, n_tok - 1]) == tok.eos_token_id
        L = n_tok - 1 if ended else n_tok  # tokens before the end token
        samples["prompt_id"].append(p.prompt_id)
        samples["text"].append(texts[i])
        samples["correct"].append(bool(v["correct"]))
        samples["strategy"].append(v["strategy"])
        samples["log_ppl"].append(float(log_ppl[i]))
        samples["length"].append(L)
        if L < 1:
            continue  # nothing to replace (an empty completion)
        if rcfg.positions == "every":
            where = [(_bin_of(j, L, B), j) for j in range(L)]
        else:
            where = list(enumerate(_positions(L, B)))
        pieces = tok.convert_ids_to_tokens(gen[i, :L].tolist())
        answer_at = next((k for k, t in enumerate(pieces) if t.strip() == "answer"), L)
        for b, j in where:
            orig = int(gen[i, j])
            lp = logp[i, j].clone()  # (V,)
            lp[special] = -float("inf")
            lp[orig] = -float("inf")
            if rcfg.alternative == "second":
                alt = int(torch.argmax(lp))
            else:
                allowed = np.flatnonzero(np.isfinite(lp.numpy()))
                alt = int(rng.choice(allowed))
            rank = int((logp[i, j] > logp[i, j, alt]).sum())  # 0 = most likely
            prefix = seq[i, :n_prompt + j].tolist()
            jobs_rep += [prefix + [alt]] * R
            jobs_ctl += [prefix + [orig]] * R
            rec["sample"].append(i)
            rec["prompt_id"].append(p.prompt_id)
            rec["bin"].append(b)
            rec["index"].append(j)
            rec["length"].append(L)
            rec["rel_pos"].append(j / L)
            rec["prefix"].append(tok.decode(gen[i, :j], skip_special_tokens=True))
            rec["token"].append(pieces[j])
            rec["category"].append(token_category(pieces[j], j, j > answer_at))
            rec["alternative"].append(tok.convert_ids_to_tokens(alt))
            rec["alt_rank"].append(rank)
            rec["original"].append(bool(v["correct"]))
    max_total = n_prompt + max_new_tokens
    total = len(jobs_rep) + len(jobs_ctl)
    outs = _generate(model, tok, jobs_rep + jobs_ctl, n_prompt, max_total, seed,
                     progress=(lambda d: progress(d, total)) if progress else None)
    n = len(rec["sample"])
    ok = np.array([T.verify(problems[rec["sample"][r // R] // S], t)["correct"]
                   for r, t in enumerate(outs[:n * R])], dtype=np.float64).reshape(n, R)
    ok_c = np.array([T.verify(problems[rec["sample"][r // R] // S], t)["correct"]
                     for r, t in enumerate(outs[n * R:])], dtype=np.float64).reshape(n, R)
    rec["replaced"] = ok.mean(axis=1).tolist()
    rec["control"] = ok_c.mean(axis=1).tolist()
    rec["replaced_text"] = [outs[r * R] for r in range(n)]
    return {"records": rec, "samples": samples}


def _stage_replace(cfg, rcfg: ReplaceConfig, out: Path, labels: dict, say, progress) -> dict:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from rlvr_boundary.lab.model import load_checkpoint
    from rlvr_boundary.lab.splits import audit_problems

    problems = audit_problems(cfg)[:rcfg.prompts]
    folder = out / "replacement"
    folder.mkdir(exist_ok=True)
    result = {}
    for k, (lab, path) in enumerate(labels.items()):
        f_rec, f_smp = folder / f"{lab}.parquet", folder / f"{lab}.samples.parquet"
        if not (f_rec.exists() and f_smp.exists()):
            model, tok = load_checkpoint(path)
            with progress() as bar:
                task = bar.add_task(f"replacing tokens of {lab}", total=None)
                res = replace_and_resample(
                    model, tok, problems, rcfg, seed=cfg.seed * 100 + k,
                    max_new_tokens=cfg.grpo.max_new_tokens,
                    progress=lambda d, tot: bar.update(task, completed=d, total=tot))
            for data, f in ((res["samples"], f_smp), (res["records"], f_rec)):
                tmp = f.with_name(f.name + ".tmp")
                pq.write_table(pa.Table.from_pydict(data), tmp)
                tmp.rename(f)
            say(f"token replacement of {lab}: {len(res['records']['sample'])} positions")
        result[lab] = (pq.read_table(f_smp).to_pydict(), pq.read_table(f_rec).to_pydict())
    return result


def run(ctx, rcfg: ReplaceConfig) -> dict:
    """Experiment 6: base and RL (as experiment 1), replacement, summary and figure."""
    from rlvr_boundary.analysis.replacement import replacement_effects
    from rlvr_boundary.io.results import write_result
    from rlvr_boundary.lab import stages as S

    cfg, out, clock, say, progress = ctx.cfg, ctx.out, ctx.clock, ctx.say, ctx.bars
    if rcfg.prompts > cfg.eval_prompts:
        raise InputError(f"prompts ({rcfg.prompts}) must be at most the run's eval_prompts "
                         f"({cfg.eval_prompts})", field="prompts")
    opts = dataclasses.asdict(rcfg)
    with clock.stage("pretrain"):
        S.stage_base(ctx)
    with clock.stage("rl"):
        steps = S.stage_rl(ctx)
    last = f"step-{steps[-1]}"
    labels = {"base": out / "base", last: out / "rl" / last}
    with clock.stage("replace"):
        data = _stage_replace(cfg, rcfg, out, labels, say, progress)
    models = {}
    for lab, (smp, rec) in data.items():
        eff = replacement_effects(rec["sample"], rec["bin"], np.array(rec["original"], float),
                                  rec["replaced"], rec["control"], smp["log_ppl"], rcfg.n_bins,
                                  category=rec["category"])
        eff["accuracy"] = float(np.mean(smp["correct"]))
        eff["mean_log_ppl"] = float(np.mean(smp["log_ppl"]))
        eff["alt_rank_share_top"] = float(np.mean(np.array(rec["alt_rank"]) <= 1))
        models[lab] = eff
    headline = []
    for lab, e in models.items():
        first, lastb = e["by_position"][0], e["by_position"][-1]
        t = e["by_tertile"]
        headline.append(
            f"{lab}: accuracy {e['accuracy']:.3f}; change in accuracy after replacement in the "
            f"first / last position bin {first['change']:+.3f} / {lastb['change']:+.3f} "
            f"(control {first['control_change']:+.3f} / {lastb['control_change']:+.3f}); "
            f"break rate of correct samples by log-PPL tertile low / mid / high "
            + " / ".join("-" if r["break"] is None else f"{r['break']:.3f}" for r in t))
    payload = {"experiment": "token-replacement", "models": list(labels),
               "n_problems": rcfg.prompts, "results": models, "experiment_options": opts,
               "headline": headline, "timings": clock.data}
    doc = write_result(out / "lab_result.json", "lab-run", cfg, payload)
    try:
        plot_replacement(doc, out / "token_replacement.png")
    except ImportError:  # matplotlib is optional: the numbers are in lab_result.json
        pass
    return doc


def _f(values) -> np.ndarray:
    """Floats for plotting, None (an empty group) as NaN."""
    return np.array([np.nan if v is None else v for v in values], dtype=np.float64)


def plot_replacement(doc: dict, path: Path) -> Path:
    """Change in accuracy and break rate by relative position, overall and per log-PPL tertile."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    models = doc["models"]
    fig, axes = plt.subplots(2, len(models), figsize=(5 * len(models), 6.6), sharex=True,
                             sharey="row", squeeze=False)
    for col, lab in enumerate(models):
        e = doc["results"][lab]
        B = e["n_bins"]
        x = (np.arange(B) + 0.5) / B
        bp = e["by_position"]
        for row, (key, ctl, name) in enumerate((("change", "control_change", "change in accuracy"),
                                                ("break", None,
                                                 "break rate (correct samples turned wrong)"))):
            ax = axes[row][col]
            ax.errorbar(x, _f([r[key] for r in bp]), yerr=1.96 * np.nan_to_num(
                            _f([r[key + "_se"] for r in bp])),
                        color="k", marker="o", ms=3, capsize=2, label="all samples, replaced")
            if ctl:
                ax.plot(x, _f([r[ctl] for r in bp]), "k--", lw=1, label="all, token kept (control)")
            for t, tname, c in zip(range(3), ("low", "mid", "high"), ("C0", "C1", "C3")):
                ax.plot(x, _f(e["grid"][key][t]), color=c, marker=".", lw=1,
                        label=f"{tname} log-PPL tertile")
            ax.axhline(0, color="grey", lw=0.5)
            if col == 0:
                ax.set_ylabel(name)
        axes[0][col].set_title(f"{lab} (accuracy {e['accuracy']:.2f})")
        axes[1][col].set_xlabel("relative position of the replaced token")
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
