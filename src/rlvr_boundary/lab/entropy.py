"""Experiment 4: entropy and support over training, one row per checkpoint.

Collects, from an audit result (``report.json`` of a lab run, or of
``rlvr-boundary report --example lab``) and the RL training log, what the RUC
report and the Invisible Leash paper track over training:

- token entropy of the sampled completions (mean exact next-token entropy,
  from the full logits), overall and for correct and incorrect samples, and
  the policy's token entropy at every RL step (``rl/train_log.jsonl``);
- answer entropy (entropy of the distinct final answers per problem, at the
  audit's diversity budget) and, with ground truth no paper has, the entropy
  of the strategy mixture;
- P/E/S/O of every checkpoint against the base, per problem and per distinct
  correct answer (preservation, expansion, shrinkage, out of support).

``rlvr-boundary lab run --experiment entropy`` runs the narrowing pipeline and
then this stage (:func:`run`); ``rlvr-boundary lab entropy REPORT.json
[--train-log rl/train_log.jsonl] --out DIR`` draws the table and figure from
any finished audit (:func:`write_table`). Both write ``entropy.json`` (a
result of kind ``lab-entropy``), ``entropy.md`` and ``entropy.png``.

References
----------
Wu et al., "The Invisible Leash: Why RLVR May Not Escape Its Origin" (arXiv
2507.14843): support preservation, shrinkage and expansion, and entropy over
training. Deng et al., "From Trial-and-Error to Improvement: A Systematic Analysis
of LLM Exploration Mechanisms in RLVR" (arXiv 2508.07534, the RUC report):
token entropy and where the updates land.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from rlvr_boundary.analysis.audit import step_of
from rlvr_boundary.lab import stages as S


def _stat(tokens: dict | None, col: str, model: str, part: str) -> float | None:
    try:
        return float(tokens[col][model][part]["mean"])
    except (KeyError, TypeError):
        return None


def position_entropy(tokens: dict | None, model: str) -> list[float] | None:
    """Mean token entropy per relative-position bin over all samples: the correct and
    incorrect curves weighted by their sample counts (None without the columns)."""
    try:
        bins = tokens["entropy_by_position"][model]
        counts = tokens["entropy_mean"][model]
    except (KeyError, TypeError):
        return None
    parts = [(np.array([np.nan if v is None else v for v in bins[k]], float),
              counts[k]["count"]) for k in ("correct", "incorrect") if k in bins]
    w = np.array([n for _, n in parts], float)  # (2,)
    y = np.stack([v for v, _ in parts])  # (2, B)
    ok = ~np.isnan(y)
    num = np.where(ok, y, 0.0) * w[:, None]
    den = (ok * w[:, None]).sum(axis=0)
    return [float(a / b) if b > 0 else None for a, b in zip(num.sum(axis=0), den)]


def mixture_entropy(shares: dict, names: list[str]) -> float | None:
    """Entropy (nats) of the named strategies' mixture, renormalised over them."""
    p = np.array([shares.get(s) or 0.0 for s in names], dtype=float)  # (S,)
    if p.sum() <= 0:
        return None
    p = p / p.sum()
    nz = p[p > 0]
    return float(-(nz * np.log(nz)).sum())


def entropy_table(report: dict, train_log: list[dict] | None = None) -> dict:
    """Per-checkpoint entropy and support rows of an audit result.

    Parameters
    ----------
    report
        A ``report`` result (as its JSON file holds it).
    train_log
        Records of the RL training log (``step``, ``reward``, ``entropy``), if any.

    Returns
    -------
    dict
        ``rows`` (the base first, then the checkpoints by step): model, step,
        pass@1, pass@K, token entropy (all / correct / incorrect samples),
        log-perplexity, answer entropy and distinct answers, strategy entropy,
        and the problem- and answer-level P/E/S/O against the base (None for the
        base); ``K`` and ``diversity_k``; ``training`` (step, reward, entropy).
    """
    base = report["base"]
    models = [base] + sorted(report["checkpoints"],
                             key=lambda m: (step_of(m) is None, step_of(m) or 0, m))
    tokens = report.get("tokens")
    div = (report.get("diversity") or {}).get("models") or {}
    st = report.get("strategies")
    named = [s for s in (st or {}).get("strategies", []) if not s.startswith("(")
             and s != "mixed"]
    sup = report["support"]
    rows = []
    for m in models:
        pk = report["pass_at_k"][m]
        row = {"model": m, "step": 0 if m == base else step_of(m),
               "pass_at_1": float(pk[0]), "pass_at_K": float(pk[-1]),
               "token_entropy": _stat(tokens, "entropy_mean", m, "all"),
               "token_entropy_correct": _stat(tokens, "entropy_mean", m, "correct"),
               "token_entropy_incorrect": _stat(tokens, "entropy_mean", m, "incorrect"),
               "log_ppl": _stat(tokens, "log_ppl", m, "all"),
               "entropy_by_position": position_entropy(tokens, m),
               "answer_entropy": div.get(m, {}).get("entropy"),
               "distinct_answers": div.get(m, {}).get("distinct"),
               "strategy_entropy": (mixture_entropy(st["models"][m]["shares"], named)
                                    if st and named else None)}
        for level in ("problem", "answer"):
            res = (sup.get(level) or {}).get(m)
            row[level] = None if res is None else {k: res[k] for k in
                                                   ("P", "E", "S", "O", "SRR", "NDR")}
        rows.append(row)
    training = [{"step": r["step"], "reward": r["reward"], "entropy": r["entropy"]}
                for r in (train_log or [])]
    return {"K": int(report["ks"][-1]), "diversity_k": (report.get("diversity") or {}).get("k"),
            "rows": rows, "training": training}


def markdown(table: dict) -> str:
    """The table of docs/lab.md (experiment 4)."""
    def f(v, d=3):
        return "–" if v is None else f"{v:.{d}f}"

    head = ("| model | pass@1 | pass@{K} | token entropy (correct / incorrect) | first tenth "
            "| answer entropy | strategy entropy | problems P / E / S / O "
            "| answers P / E / S / O |\n"
            "|---|---|---|---|---|---|---|---|---|\n").format(K=table["K"])
    lines = []
    for r in table["rows"]:
        def pe(level):
            x = r[level]
            return "–" if x is None else f"{x['P']} / {x['E']} / {x['S']} / {x['O']}"
        lines.append(f"| {r['model']} | {f(r['pass_at_1'])} | {f(r['pass_at_K'])} | "
                     f"{f(r['token_entropy'])} ({f(r['token_entropy_correct'])} / "
                     f"{f(r['token_entropy_incorrect'])}) | "
                     f"{f((r['entropy_by_position'] or [None])[0])} | {f(r['answer_entropy'])} | "
                     f"{f(r['strategy_entropy'])} | {pe('problem')} | {pe('answer')} |")
    return head + "\n".join(lines) + "\n"


def draw(table: dict):
    """Three panels over training step: token entropy, answer and strategy entropy, P/E/S/O."""
    from rlvr_boundary.report.figures import PALETTE, figure

    rows = table["rows"]
    steps = [r["step"] for r in rows]
    fig, (a, p, b, c) = figure(9.4, nrows=4)
    if table["training"]:
        a.plot([t["step"] for t in table["training"]], [t["entropy"] for t in table["training"]],
               "-", color="#999999", lw=1, label="policy during RL (each step's rollouts)")
    a.plot(steps, [r["token_entropy"] for r in rows], "o-", color=PALETTE[0],
           label="audit samples, all")
    a.plot(steps, [r["token_entropy_correct"] for r in rows], "^--", color=PALETTE[2],
           label="audit samples, correct")
    a.plot(steps, [r["token_entropy_incorrect"] for r in rows], "v--", color=PALETTE[1],
           label="audit samples, incorrect")
    a.set_ylabel("token entropy (nats)")
    a.set_title("Mean next-token entropy of the completions")
    for i, r in enumerate(rows):
        y = r["entropy_by_position"]
        if y:
            p.plot((np.arange(len(y)) + 0.5) / len(y), [np.nan if v is None else v for v in y],
                   "o-", ms=3, color=plt_color(i, len(rows)), label=r["model"])
    p.set_xlabel("relative position in the completion")
    p.set_ylabel("token entropy (nats)")
    p.set_title("Token entropy by relative position (the strategy's name is in the first "
                "tenth)")
    b.plot(steps, [r["answer_entropy"] for r in rows], "o-", color=PALETTE[0],
           label=f"answer entropy (k = {table['diversity_k']})")
    b.plot(steps, [r["strategy_entropy"] for r in rows], "s-", color=PALETTE[3],
           label="strategy-mixture entropy")
    b.set_ylabel("entropy (nats)")
    b.set_title("Entropy of the answers and of the strategy mixture")
    pts = [r for r in rows if r["problem"] is not None]
    for key, color, mk in (("P", PALETTE[0], "o"), ("S", "#D55E00", "v"), ("E", "#009E73", "^"),
                           ("O", "#777777", "s")):
        c.plot([r["step"] for r in pts], [r["problem"][key] for r in pts], mk + "-",
               color=color, label=f"{key} (problems)")
    c.set_ylabel("problems")
    c.set_xlabel("RL step (base = 0)")
    c.set_title(f"Support against the base at K = {table['K']}: preserved, shrunk, "
                "expanded, out of support")
    for ax in (a, p, b, c):
        ax.grid(alpha=0.25)
        ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    return fig


def plt_color(i: int, n: int) -> str:
    """Grey-black for the base (i = 0), then light to dark blue over training."""
    if i == 0:
        return "#333333"
    t = i / max(n - 1, 1)
    r, g, b = (int(round(a + (z - a) * t)) for a, z in ((0x9E, 0x08), (0xCA, 0x30), (0xE1, 0x6B)))
    return f"#{r:02x}{g:02x}{b:02x}"


#: Files of the experiment-4 stage in a run folder (``lab run --experiment entropy``).
STAGE_FILES = ("entropy.json", "entropy.md", "entropy.png", "learning.json")


def learning_of_shard(shard: Path, prompts: dict[str, str], before: Path, after: Path, *,
                      rows: int = 2000, template: str = "plain", threads: int = 1) -> dict:
    """Where learning landed: the first ``rows`` texts of ``shard`` scored under two checkpoints.

    The computation of ``rlvr-boundary score SHARD --model AFTER --before BEFORE``
    (same rows, prompts and template), without the per-row score columns:
    :func:`rlvr_boundary.pipelines.score.learning_run` on the texts.
    """
    from rlvr_boundary.backends import get_backend
    from rlvr_boundary.backends.base import render_prompt
    from rlvr_boundary.pipelines.score import learning_run
    from rlvr_boundary.io.rollouts import iter_rollout_batches

    got: list[dict] = []
    for t in iter_rollout_batches(shard, None, required=("prompt_id", "model", "sample_idx")):
        got += t.to_pylist()
        if len(got) >= rows:
            break
    got = got[:rows]
    ids = list(dict.fromkeys(str(r["prompt_id"]) for r in got))
    plist = [{"prompt_id": p, **render_prompt(template, prompts[p])} for p in ids]
    comps = [{"prompt_id": str(r["prompt_id"]), "text": r.get("text") or ""} for r in got]
    models = []
    try:
        for path in (before, after):
            models.append(get_backend("transformers", model=path, device="cpu", dtype="float32",
                                      num_threads=threads))
        res = learning_run(models[0], models[1], plist, comps,
                           labels=(Path(before).name, Path(after).name))
    finally:
        for m in models:
            m.close()
    res["rows"] = len(got)
    return res


#: Result kind of ``entropy.json``.
KIND = "lab-entropy"


def write_table(report: dict, train_log: list[dict] | None, out: Path, source: dict) -> dict:
    """Write ``entropy.md``, ``entropy.png`` and, last, ``entropy.json`` (kind ``lab-entropy``,
    with ``source`` as its options) into ``out``; return the table."""
    from rlvr_boundary.io.atomic import atomic_open
    from rlvr_boundary.io.results import to_jsonable, write_result

    table = to_jsonable(entropy_table(report, train_log))
    out.mkdir(parents=True, exist_ok=True)
    with atomic_open(out / "entropy.md", "w") as fh:
        fh.write(markdown(table))
    fig = draw(table)
    with atomic_open(out / "entropy.png", "wb") as fh:
        fig.savefig(fh, format="png", dpi=110)
    # entropy.json last: with it the stage counts as done
    write_result(out / "entropy.json", KIND, source, table)
    return table


def stage_entropy(out: Path, last: str, prompts: dict[str, str], *, say=None, threads: int = 1,
                  rows: int = 2000) -> dict:
    """Experiment 4 in a finished narrowing run folder ``out`` (resumable).

    Writes ``entropy.json``, ``entropy.md`` and ``entropy.png`` (:func:`entropy_table`
    of ``report.json`` and ``rl/train_log.jsonl``) and ``learning.json``
    (:func:`learning_of_shard`: the last checkpoint's first ``rows`` audit samples
    scored under the base and under ``last``), each through a temporary name. A
    folder that already holds all four is read back, not redone. Returns
    ``{"table": ..., "learning": ...}`` (the two result documents' payloads).
    """
    from rlvr_boundary.io.results import read_result, write_result

    say = say or (lambda *a, **k: None)
    out = Path(out)
    if all((out / f).exists() for f in STAGE_FILES):
        say("entropy and where learning landed: done (resumed)")
        return {"table": read_result(out / "entropy.json", kind=KIND),
                "learning": read_result(out / "learning.json", kind="learning_landed")}
    if not (out / "learning.json").exists():
        shard = out / "rollouts" / f"part-{last}.parquet"
        res = learning_of_shard(shard, prompts, out / "base", out / "rl" / last, rows=rows,
                                threads=threads)
        write_result(out / "learning.json", "learning_landed",
                     {"before": "base", "after": f"rl/{last}", "template": "plain",
                      "rows": res["rows"], "shard": shard.relative_to(out).as_posix()}, res)
    learning = read_result(out / "learning.json", kind="learning_landed")
    table = write_table(read_result(out / "report.json", kind="report"),
                        S.read_log(out / "rl" / "train_log.jsonl"), out,
                        {"report": "report.json", "train_log": "rl/train_log.jsonl"})
    say(f"where learning landed: {learning['barely_moved']['0.05']:.1%} of "
        f"{learning['tokens']} tokens of {last} moved by at most 0.05 in probability")
    return {"table": table, "learning": learning}


def run(ctx, options=None) -> dict:
    """Experiment 4: the narrowing pipeline, then :func:`stage_entropy`; ``lab_result.json``."""
    from rlvr_boundary.io.results import write_result
    from rlvr_boundary.lab import splits

    audit, labels = S.train_and_audit(ctx)
    with ctx.clock.stage("entropy"):
        prompts = {p.prompt_id: p.prompt for p in splits.audit_problems(ctx.cfg)}
        stage = stage_entropy(ctx.out, list(labels)[-1], prompts, say=ctx.say,
                              threads=ctx.cfg.threads)
    payload = S.run_summary(ctx, audit, labels)
    payload["entropy"] = summary(stage)
    lr = payload["entropy"]["learning"]
    payload["headline"].append(
        f"where learning landed: {lr['barely_moved']['0.05']:.1%} of {lr['tokens']} tokens "
        "moved by at most 0.05 in probability; wrote entropy.png, entropy.md, entropy.json, "
        "learning.json")
    return write_result(ctx.out / "lab_result.json", "lab-run", ctx.cfg, payload)


def summary(stage: dict) -> dict:
    """The experiment-4 numbers ``lab_result.json`` keeps (the full tables are in the files)."""
    lr = stage["learning"]
    keep = ("texts", "tokens", "barely_moved", "overall", "by_category", "by_position",
            "entropy_fell_most")
    return {"table": stage["table"]["rows"], "K": stage["table"]["K"],
            "diversity_k": stage["table"]["diversity_k"],
            "learning": {k: lr[k] for k in keep if k in lr},
            "files": list(STAGE_FILES)}
