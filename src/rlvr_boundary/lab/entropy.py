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

Usage (a finished lab run in ``lab-full``)::

    python -m rlvr_boundary.lab.entropy lab-full/report.json \\
        --train-log lab-full/rl/train_log.jsonl --out lab-entropy

writes ``entropy.json`` (the table), ``entropy.md`` and ``entropy.png``.

References
----------
Wu et al., "The Invisible Leash: Why RLVR May Not Escape Its Origin" (arXiv
2507.14843): support preservation, shrinkage and expansion, and entropy over
training. Deng et al., "From Trial-and-Error to Improvement: A Systematic Analysis
of LLM Exploration Mechanisms in RLVR" (arXiv 2508.07534, the RUC report):
token entropy and where the updates land.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from rlvr_boundary.analysis.audit import step_of


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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Experiment 4 of the lab: entropy and support "
                                             "over training, from a report result.")
    ap.add_argument("report", help="report.json of a lab run (or of report --example lab)")
    ap.add_argument("--train-log", help="rl/train_log.jsonl of the run")
    ap.add_argument("--out", required=True, help="folder for entropy.json, .md and .png")
    ns = ap.parse_args(argv)
    from rlvr_boundary.io.atomic import atomic_open
    from rlvr_boundary.io.results import read_result, to_jsonable

    doc = read_result(ns.report, kind="report")
    log = None
    if ns.train_log:
        log = [json.loads(line) for line in Path(ns.train_log).read_text(
            encoding="utf-8").splitlines() if line.strip()]
    table = entropy_table(doc, log)
    out = Path(ns.out)
    out.mkdir(parents=True, exist_ok=True)
    with atomic_open(out / "entropy.json", "w") as fh:
        json.dump(to_jsonable(table), fh, indent=1)
    with atomic_open(out / "entropy.md", "w") as fh:
        fh.write(markdown(table))
    fig = draw(table)
    fig.savefig(out / "entropy.png", dpi=110)
    print(markdown(table))
    print(f"wrote {out}/entropy.json, entropy.md, entropy.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
