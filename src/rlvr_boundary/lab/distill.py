"""Experiment 2: distillation expands the boundary, where RL does not.

Claim (Yue et al., "Does Reinforcement Learning Really Incentivize Reasoning
Capacity in LLMs Beyond the Base Model?", arXiv 2504.13837, section 4.4):
a model distilled from a stronger teacher solves problems the base model cannot
solve at any budget, while RL from verifiable rewards stays inside the base's
boundary.

The fourth strategy
-------------------
The base model is pretrained on three strategies (``add``, ``mul``, ``sub``:
the same operator twice). The teacher also knows a fourth, ``mad``, "multiply,
then add", which fits the task's grammar exactly::

    make 0 from 7 8 4:
     mad: 7*8 ends 6, 6+4 ends 0. answer 7*8+4

Its value is ``(a * b + c) mod 10``. The task's verifier evaluates any committed
expression left to right, so it grades ``mad`` answers unchanged; only the
strategy label needs the new name (:func:`parse_strategy`).

The prompt set draws the gold strategy from :data:`GOLD_MIX4` (``mad`` 0.25),
so about one prompt in five is solvable by ``mad`` and by none of the three
strategies the base knows (the "mad-only" prompts; the exact share is in
``lab_result.json``). The base can reach them only by writing the operator pair
``*+`` by accident (a miscopied operator), which it was never trained to do.

The pipeline (``rlvr-boundary lab run --experiment distillation``)
------------------------------------------------------------------
1. ``base/``: pretrained as in experiment 1 on the three strategies, with one
   difference: the tokenizer's training texts include ``mad`` traces (over the
   train triples), so `` mad`` is one token of the vocabulary
   (:func:`tokenizer_texts`). The base never sees a ``mad`` trace in pretraining.
2. ``rl/``: GRPO from the base on the *four-strategy* prompt distribution over
   the training triples: RL sees the mad-only prompts and is rewarded whenever
   it solves one.
3. ``teacher/``: the base, further pretrained for ``teacher_steps`` steps on
   traces of all four strategies over the train triples (mixture :data:`TEACHER_MIX`, independent of
   the prompt; loss on every token): it knows everything the base knows, plus
   ``mad``. (Continued pretraining rather than a second model from scratch: the
   teacher needs far fewer steps, and its extra knowledge is exactly ``mad``.)
4. ``distilled/``: the teacher samples ``distill_samples`` completions on each
   of ``distill_problems`` training problems; the verifier keeps the correct
   ones (rejection sampling, as distillation data are curated in practice);
   the base is fine-tuned on them (loss on the completion tokens only).
5. ``rollouts/``, ``report.html``, ``lab_result.json``: base, the last RL
   checkpoint, the distilled model and the teacher sampled on held-out
   four-strategy problems, audited; the prompts solved at the largest k by each
   model, split into mad-only and base-solvable prompts.
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from rlvr_boundary.errors import InputError, require
from rlvr_boundary.lab import pretrain as P
from rlvr_boundary.lab import splits
from rlvr_boundary.lab import task as T

__all__ = ["STRATEGIES4", "GOLD_MIX4", "TEACHER_MIX", "DistillConfig", "trace4", "fitness4",
           "make_problems4", "parse_strategy", "verify4", "solved_sets", "teacher_corpus",
           "distill_problems", "eval_problems4", "run"]

#: The base's three strategies plus ``mad``: name -> (first operator, second operator).
STRATEGIES4: dict[str, tuple[str, str]] = {
    "add": ("+", "+"), "mul": ("*", "*"), "sub": ("-", "-"), "mad": ("*", "+")}

#: Gold-strategy mixture of the experiment's prompts (train and held-out).
GOLD_MIX4: dict[str, float] = {"add": 0.45, "mul": 0.2, "sub": 0.1, "mad": 0.25}

#: Strategy mixture of the teacher's pretraining traces (independent of the prompt).
TEACHER_MIX: dict[str, float] = {"add": 0.3, "mul": 0.25, "sub": 0.2, "mad": 0.25}

_HEAD = re.compile(r"^\s*([a-z]+):")


def tokenizer_texts(cfg, n: int = 500) -> list[str]:
    """``mad`` traces added to the tokenizer's training texts (not to pretraining).

    The base's vocabulary then has `` mad`` as one token, as it has `` add``: a name
    split into three tokens shifts every later position, and the copying the base
    learned by position then miscopies the operands (the teacher did, in a first run).
    The base never sees these texts in pretraining; its `` mad`` embedding stays untrained.
    """
    train, _ = splits.triples(cfg)
    ps = make_problems4(n, np.random.default_rng([cfg.seed, 13]), train)
    return [p.prompt + trace4(p, "mad") for p in ps]


def _check_mix4(mix: dict[str, float]) -> np.ndarray:
    if set(mix) != set(STRATEGIES4):
        raise ValueError(f"a mixture needs exactly the strategies {list(STRATEGIES4)}, "
                         f"got {list(mix)}")
    w = np.array([mix[s] for s in STRATEGIES4], dtype=np.float64)
    if np.any(w < 0) or not np.isclose(w.sum(), 1.0):
        raise ValueError(f"mixture weights must be >= 0 and sum to 1, got {mix}")
    return w


def _value4(p: T.Problem, strategy: str) -> int:
    op1, op2 = STRATEGIES4[strategy]
    return T.apply(op2, T.apply(op1, p.a, p.b), p.c) % 10


def trace4(p: T.Problem, strategy: str) -> str:
    """A faithful completion of ``p`` by one of the four strategies.

    >>> trace4(T.Problem(7, 8, 4, 0), "mad")
    ' mad: 7*8 ends 6, 6+4 ends 0. answer 7*8+4'
    """
    op1, op2 = STRATEGIES4[strategy]
    r1 = T.apply(op1, p.a, p.b) % 10
    r2 = T.apply(op2, r1, p.c) % 10
    return (f" {strategy}: {p.a}{op1}{p.b} ends {r1}, {r1}{op2}{p.c} ends {r2}."
            f" answer {p.a}{op1}{p.b}{op2}{p.c}")


def fitness4(problems) -> np.ndarray:
    """``(4, X)`` 0/1 matrix: which of the four strategies solves each problem."""
    return np.array([[_value4(p, s) == p.t for p in problems] for s in STRATEGIES4],
                    dtype=np.float64).reshape(len(STRATEGIES4), len(problems))


def make_problems4(count: int, rng: np.random.Generator, triples=None, *,
                   gold_mix=None) -> list[T.Problem]:
    """Problems whose target comes from a gold strategy ~ ``gold_mix`` (default
    :data:`GOLD_MIX4`), digits uniform over ``triples`` (all 729 when None)."""
    w = _check_mix4(GOLD_MIX4 if gold_mix is None else gold_mix)
    names = list(STRATEGIES4)
    pool = np.array(list(triples) if triples is not None else
                    [(a, b, c) for a in T.DIGITS for b in T.DIGITS for c in T.DIGITS])  # (N, 3)
    idx = rng.integers(0, len(pool), size=count)
    gold = rng.choice(len(names), size=count, p=w)
    out = []
    for (a, b, c), g in zip(pool[idx], gold):
        p = T.Problem(int(a), int(b), int(c), 0)
        out.append(T.Problem(p.a, p.b, p.c, _value4(p, names[g])))
    return out


def parse_strategy(text: str) -> str | None:
    """The strategy of a completion among the four; ``mixed`` when name and operators disagree.

    The three base strategies are read by :func:`rlvr_boundary.lab.task.parse`;
    ``mad`` needs its name before the colon and the answer's operators ``*`` then ``+``.
    """
    parsed = T.parse(text)
    head = _HEAD.match(text)
    if head and head.group(1) == "mad":
        if parsed.answer is None:
            return "mad"
        return "mad" if (parsed.answer[1], parsed.answer[3]) == STRATEGIES4["mad"] else "mixed"
    return parsed.strategy


def verify4(p: T.Problem, text: str) -> dict:
    """The task's verdict (:func:`rlvr_boundary.lab.task.verify`) with the four-strategy label."""
    v = T.verify(p, text)
    v["strategy"] = parse_strategy(text)
    return v


def solved_sets(solved: dict[str, np.ndarray], groups: dict[str, np.ndarray]) -> dict:
    """Counts of prompts solved per model and group, and pairwise "solved by A, not by B".

    Parameters
    ----------
    solved
        model -> ``(X,)`` bool: the prompt has at least one correct sample.
    groups
        group name -> ``(X,)`` bool mask of prompts (e.g. mad-only).

    Returns
    -------
    dict
        ``by_model[model][group]`` (prompts solved in the group; ``all`` included),
        ``sizes[group]`` and ``only[a][b]`` (prompts solved by ``a`` and not by ``b``).
    """
    groups = {"all": np.ones_like(next(iter(solved.values())), dtype=bool), **groups}
    by_model = {m: {g: int((s & mask).sum()) for g, mask in groups.items()}
                for m, s in solved.items()}
    only = {a: {b: int((sa & ~sb).sum()) for b, sb in solved.items() if b != a}
            for a, sa in solved.items()}
    return {"sizes": {g: int(m.sum()) for g, m in groups.items()}, "by_model": by_model,
            "only": only}


def _ranges(ks) -> str:
    """``[7, 1, 2, 3]`` -> ``"1-3, 7"`` (the report's budget ranges, on the sorted list)."""
    from rlvr_boundary.report.words import ranges

    return ranges(sorted(ks))


def band_verdict(model: str, gain_budgets, loss_budgets) -> str:
    """One sentence: where the simultaneous band supports a gain or a loss against the base.

    >>> band_verdict("distilled", [16, 17, 18], [1])
    'distilled against the base: gain supported at k = 16-18; loss supported at k = 1.'
    """
    parts = [f"gain supported at k = {_ranges(gain_budgets)}" if gain_budgets else
             "no supported gain",
             f"loss supported at k = {_ranges(loss_budgets)}" if loss_budgets else
             "no supported loss"]
    return f"{model} against the base: " + "; ".join(parts) + "."


@dataclass
class DistillConfig:
    """Options of the distillation experiment (beside the run's ``LabConfig``)."""

    distill_problems: int = 1500
    """Training problems the teacher samples on (distillation data)."""
    distill_samples: int = 4
    """Teacher samples per problem; the correct ones are kept."""
    sft_steps: int = 300
    """Fine-tuning steps of the base on the kept samples."""
    sft_batch_size: int = 64
    """Sequences per fine-tuning step."""
    sft_lr: float = 3e-3
    """Peak learning rate of the fine-tuning (linear warm-up, cosine decay)."""
    teacher_steps: int = 300
    """Continued-pretraining steps that turn a copy of the base into the teacher."""
    teacher_lr: float = 3e-3
    """Peak learning rate of the teacher's continued pretraining."""
    gold_mix: dict = field(default_factory=lambda: dict(GOLD_MIX4))
    """Gold-strategy mixture of the experiment's prompts (RL, distillation data, audit)."""
    teacher_mix: dict = field(default_factory=lambda: dict(TEACHER_MIX))
    """Strategy mixture of the teacher's pretraining traces."""

    def __post_init__(self) -> None:
        for name in ("distill_problems", "distill_samples", "sft_steps", "sft_batch_size",
                     "teacher_steps"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        for name in ("sft_lr", "teacher_lr"):
            if not 0 < getattr(self, name) < 1:
                raise ValueError(f"{name} must be in (0, 1), got {getattr(self, name)!r}")
        _check_mix4(self.gold_mix)
        _check_mix4(self.teacher_mix)

    @classmethod
    def from_preset(cls, preset: str, **overrides) -> "DistillConfig":
        """The preset's options with ``overrides`` on top."""
        return cls(**{**DISTILL_PRESETS[preset], **overrides})


#: Options of each preset.
DISTILL_PRESETS: dict[str, dict] = {
    "quick": {"distill_problems": 200, "distill_samples": 2, "sft_steps": 40,
              "teacher_steps": 150},
    "full": {"distill_problems": 1500, "distill_samples": 4, "sft_steps": 300,
             "teacher_steps": 300},
}


# ----------------------------------------------------------------------------- model part

def teacher_corpus(cfg, dcfg: DistillConfig) -> tuple[list[str], list[str]]:
    """The teacher's continued-pretraining traces: four strategies ~ ``teacher_mix``,
    independent of the prompt, over the train triples."""
    train, _ = splits.triples(cfg)
    rng = np.random.default_rng([cfg.seed, 11])
    problems = make_problems4(cfg.pretrain.traces, rng, train, gold_mix=dcfg.gold_mix)
    names = list(STRATEGIES4)
    strat = rng.choice(len(names), size=len(problems), p=_check_mix4(dcfg.teacher_mix))
    return [p.prompt for p in problems], [trace4(p, names[s]) for p, s in zip(problems, strat)]


def distill_problems(cfg, dcfg: DistillConfig) -> list[T.Problem]:
    """The training problems the teacher samples on (distillation data), train triples."""
    train, _ = splits.triples(cfg)
    return make_problems4(dcfg.distill_problems, np.random.default_rng([cfg.seed, 12]), train,
                          gold_mix=dcfg.gold_mix)


def _stage_teacher(cfg, dcfg: DistillConfig, out: Path, say, progress) -> None:
    from rlvr_boundary.lab.model import is_complete, load_checkpoint, save_checkpoint

    if is_complete(out / "teacher"):
        say("teacher: done (resumed)")
        return
    model, tok = load_checkpoint(out / "base")  # the base's tokenizer: one vocabulary for all
    prompts, comps = teacher_corpus(cfg, dcfg)
    pc = cfg.pretrain
    with progress() as bar:
        task = bar.add_task("teaching the teacher a fourth strategy", total=dcfg.teacher_steps)
        losses = P.fit(model, tok, prompts, comps, steps=dcfg.teacher_steps,
                     batch_size=pc.batch_size, lr=dcfg.teacher_lr, seed=cfg.seed + 1,
                     max_len=cfg.model.max_len, completion_only=False,
                     weight_decay=pc.weight_decay,
                     progress=lambda s, _: bar.update(task, completed=s))
    save_checkpoint(model, tok, out / "teacher",
                    extra={"stage": "teacher", "final_loss": float(np.mean(losses[-20:]))})
    say(f"teacher: the base further pretrained {dcfg.teacher_steps} steps on four strategies, "
        f"final loss {np.mean(losses[-20:]):.3f}")


def _distill_data(cfg, dcfg: DistillConfig, out: Path, say, progress) -> list[dict]:
    """The teacher's correct samples on training problems (cached in ``distill_data.jsonl``)."""
    torch = require("torch", "hf", "the lab")
    from rlvr_boundary.lab import grpo as G
    from rlvr_boundary.lab.model import load_checkpoint

    path = out / "distill_data.jsonl"
    if path.exists():
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    teacher, tok = load_checkpoint(out / "teacher")
    problems = distill_problems(cfg, dcfg)
    rows, chunk = [], 128
    with progress() as bar:
        task = bar.add_task("teacher samples for distillation", total=len(problems))
        for start in range(0, len(problems), chunk):
            part = problems[start:start + chunk]
            torch.manual_seed(cfg.seed * 1_000_003 + start)
            _, _, _, texts = G.rollout(teacher, tok, part, dcfg.distill_samples,
                                       cfg.grpo.max_new_tokens)
            for i, text in enumerate(texts):
                p = part[i // dcfg.distill_samples]
                v = verify4(p, text)
                rows.append({"prompt_id": p.prompt_id, "prompt": p.prompt, "completion": text,
                             "correct": v["correct"], "strategy": v["strategy"]})
            bar.update(task, completed=start + len(part))
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    tmp.rename(path)
    return rows


def _stage_distill(cfg, dcfg: DistillConfig, out: Path, say, progress) -> dict:
    from rlvr_boundary.lab.model import is_complete, load_checkpoint, save_checkpoint

    rows = _distill_data(cfg, dcfg, out, say, progress)
    kept = [r for r in rows if r["correct"]]
    names = [r["strategy"] for r in kept]
    stats = {"teacher_samples": len(rows), "kept": len(kept),
             "teacher_accuracy": len(kept) / len(rows) if rows else None,
             "kept_strategy": {s: names.count(s) / len(kept) for s in sorted(set(map(str, names)))}
             if kept else {}}
    if is_complete(out / "distilled"):
        say("distilled model: done (resumed)")
        return stats
    if not kept:
        raise InputError("the teacher solved none of the distillation problems; nothing to "
                         "distill (pretrain the teacher longer)", path=out / "distill_data.jsonl")
    model, tok = load_checkpoint(out / "base")
    with progress() as bar:
        task = bar.add_task("distilling the teacher into the base", total=dcfg.sft_steps)
        losses = P.fit(model, tok, [r["prompt"] for r in kept], [r["completion"] for r in kept],
                     steps=dcfg.sft_steps, batch_size=dcfg.sft_batch_size, lr=dcfg.sft_lr,
                     seed=cfg.seed + 2, max_len=cfg.model.max_len, completion_only=True,
                     progress=lambda s, _: bar.update(task, completed=s))
    save_checkpoint(model, tok, out / "distilled",
                    extra={"stage": "distill", "final_loss": float(np.mean(losses[-20:])),
                           **stats})
    say(f"distilled: {dcfg.sft_steps} fine-tuning steps on {len(kept)} correct teacher samples "
        f"(of {len(rows)})")
    return stats


def eval_problems4(cfg, dcfg: DistillConfig) -> list[T.Problem]:
    """Distinct held-out four-strategy problems of the audit (fixed by ``split_seed``)."""
    _, ev = splits.triples(cfg)
    rng = np.random.default_rng([cfg.split_seed, 17])
    seen: dict[str, T.Problem] = {}
    while len(seen) < cfg.eval_prompts:
        for p in make_problems4(cfg.eval_prompts, rng, ev, gold_mix=dcfg.gold_mix):
            if len(seen) < cfg.eval_prompts:
                seen.setdefault(p.prompt_id, p)
    return list(seen.values())


def run(ctx, dcfg: DistillConfig) -> dict:
    """Experiment 2: base (with `` mad`` in its vocabulary), RL, teacher, distillation,
    sampling, report, summary."""
    from rlvr_boundary.io.results import write_result
    from rlvr_boundary.lab import stages as S

    cfg, out, clock = ctx.cfg, ctx.out, ctx.clock
    progress = ctx.bars

    def rl_problems(count, rng, triples):
        return make_problems4(count, rng, triples, gold_mix=dcfg.gold_mix)

    with clock.stage("pretrain"):
        S.stage_base(ctx, extra_texts=tokenizer_texts(cfg))
    with clock.stage("rl"):
        steps = S.stage_rl(ctx, make=rl_problems)
    with clock.stage("teacher"):
        _stage_teacher(cfg, dcfg, out, ctx.say, progress)
    with clock.stage("distill"):
        stats = _stage_distill(cfg, dcfg, out, ctx.say, progress)
    rl_label = f"step-{steps[-1]}"
    labels = {"base": out / "base", rl_label: out / "rl" / rl_label,
              "distilled": out / "distilled", "teacher": out / "teacher"}
    problems = eval_problems4(cfg, dcfg)
    with clock.stage("sample"):
        S.stage_sample(ctx, labels, problems=problems, verify=verify4)
    with clock.stage("report", accumulate=False):
        audit = S.stage_audit(ctx)
    payload = _summary(cfg, out, audit, labels, rl_label, problems, stats)
    payload["experiment_options"] = dataclasses.asdict(dcfg)
    payload["timings"] = clock.data
    doc = write_result(out / "lab_result.json", "lab-run", cfg, payload)
    try:
        plot_distillation(doc, out / "distillation.png")
    except ImportError:  # matplotlib is optional: the numbers are in lab_result.json
        pass
    return doc


def _summary(cfg, out: Path, audit: dict, labels: dict, rl_label: str, problems,
             stats: dict) -> dict:
    import pyarrow.parquet as pq

    index = {p.prompt_id: i for i, p in enumerate(problems)}
    F = fitness4(problems)  # (4, X)
    base_solvable = F[:3].any(axis=0)  # (X,)
    groups = {"mad_only": (F[3] == 1) & ~base_solvable, "base_solvable": base_solvable}
    solved, shares = {}, {}
    for f in sorted((out / "rollouts").glob("part-*.parquet")):
        t = pq.read_table(f, columns=["model", "prompt_id", "correct", "strategy"]).to_pydict()
        model = t["model"][0]
        s = np.zeros(len(problems), dtype=bool)
        for pid, c in zip(t["prompt_id"], t["correct"]):
            s[index[pid]] |= bool(c)
        solved[model] = s
        vals = [v if v is not None else "none" for v in t["strategy"]]
        shares[model] = {v: vals.count(v) / len(vals) for v in sorted(set(vals))}
    solved = {m: solved[m] for m in labels}
    sets = solved_sets(solved, groups)
    comparisons = {}
    for m in labels:
        if m == "base":
            continue
        c = audit["comparisons"][m]
        comparisons[m] = {
            "k_star": c["k_star"], "gain_budgets": c.get("gain_budgets"),
            "loss_budgets": c.get("loss_budgets"),
            "verdict": band_verdict(m, c.get("gain_budgets"), c.get("loss_budgets")),
            "price": {"points": 100 * c["price"] if c.get("price") is not None else None,
                      "k": c.get("price_k")}}
    ks = list(audit["comparisons"][rl_label]["ks"])
    pk = {m: list(audit["pass_at_k"][m]) for m in labels}
    K = ks[-1]
    sizes = sets["sizes"]
    headline = [f"pass@1 / pass@{K}: " + ", ".join(
        f"{m} {pk[m][0]:.3f} / {pk[m][-1]:.3f}" for m in labels),
        f"mad-only prompts solved at k = {K} (of {sizes['mad_only']}): " + ", ".join(
            f"{m} {sets['by_model'][m]['mad_only']}" for m in labels)]
    return {
        "experiment": "distillation",
        "rl_checkpoint": rl_label,
        "models": list(labels),
        "n_problems": len(problems),
        "n_samples": cfg.n_samples,
        "ks": ks,
        "pass_at_k": pk,
        "solved_at_K": {"K": K, **sets},
        "solved_prompt_ids": {m: [p.prompt_id for p, s in zip(problems, solved[m]) if s]
                              for m in labels},
        "mad_only_prompt_ids": [p.prompt_id for p, g in zip(problems, groups["mad_only"]) if g],
        "comparisons_to_base": comparisons,
        "strategy_shares": shares,
        "distill_data": stats,
        "headline": headline,
    }


def plot_distillation(doc: dict, path: Path) -> Path:
    """pass@k curves of every model and the prompts each solves at the largest k."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ks, pk, models = doc["ks"], doc["pass_at_k"], doc["models"]
    sets = doc["solved_at_K"]
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 3.8))
    for m in models:
        a.plot(ks, pk[m], marker="o", ms=3, label=m)
    a.set_xscale("log", base=2)
    a.set_xlabel("k")
    a.set_ylabel("pass@k")
    a.set_title("pass@k on held-out four-strategy prompts")
    a.legend()
    groups = [("base_solvable", "solvable by add/mul/sub"), ("mad_only", "solvable only by mad")]
    x = np.arange(len(groups))
    w = 0.8 / len(models)
    for i, m in enumerate(models):
        b.bar(x + i * w, [sets["by_model"][m][g] for g, _ in groups], w, label=m)
    b.plot(x + 0.4 - w / 2, [sets["sizes"][g] for g, _ in groups], "k_", ms=30, label="prompts")
    b.set_xticks(x + 0.4 - w / 2, [t for _, t in groups])
    b.set_ylabel(f"prompts solved at k = {sets['K']}")
    b.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
