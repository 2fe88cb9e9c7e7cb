"""The report as one self-contained HTML page.

No scripts, no external fonts, styles or images: figures are inline SVG and the
CSS is in the page, so it opens offline and can be attached to an email. Every
string that comes from the user's data (labels, prompt ids, completions,
manifests) goes through :func:`esc`: model output is untrusted.
"""

from __future__ import annotations

import html
import json
import re

from rlvr_boundary.report import words as W

SECTIONS = [
    ("summary", "Summary"),
    ("passk", "pass@k curves"),
    ("difference", "Difference and confidence band"),
    ("scorers", "Scorer sensitivity"),
    ("advisor", "Budget advisor"),
    ("coverage", "Coverage"),
    ("frontier", "Hard frontier"),
    ("cover", "cover@tau: solved reliably"),
    ("support", "Support dynamics"),
    ("evolution", "Training evolution"),
    ("diversity", "Answer diversity"),
    ("quality", "Output quality"),
    ("tokens", "Token statistics"),
    ("learning", "Where learning landed"),
    ("strategies", "Strategies"),
    ("regressions", "Most regressed and improved problems"),
    ("lucky", "Lucky-guess review list"),
    ("glossary", "Glossary"),
    ("provenance", "Provenance"),
]

#: Sections shown only when asked for (--cluster-by or runs, --verifier-error,
#: --extrapolate), placed after the section named first.
OPTIONAL_SECTIONS = ("difference", [
    ("sampling", "Clusters and runs"),
    ("verifier", "Verifier error"),
    ("extrapolation", "Beyond the samples drawn: a model-based prediction"),
])


def _section_order() -> list[tuple[str, str]]:
    after, extra = OPTIONAL_SECTIONS
    i = [sid for sid, _ in SECTIONS].index(after) + 1
    return _with_data_sections(SECTIONS[:i] + extra + SECTIONS[i:])


#: Sections drawn only when the inputs carry what they show (CoT-pass@k: a cot_correct
#: column), placed after the section named first. Without their data they are absent, not
#: listed among the sections "what would fill" (no command fills them: the data must).
DATA_SECTIONS = ("passk", [("cot", "CoT-pass@k")])


def _with_data_sections(order: list[tuple[str, str]]) -> list[tuple[str, str]]:
    after, extra = DATA_SECTIONS
    i = [sid for sid, _ in order].index(after) + 1
    return order[:i] + extra + order[i:]


CSS = """
body{font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;max-width:1060px;margin:2em auto;
padding:0 1em;color:#222;line-height:1.45}
h1{font-size:1.6em;margin-bottom:.2em}h2{border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:2em}
nav a{margin-right:.8em;font-size:.9em}
table{border-collapse:collapse;margin:.6em 0;font-size:.88em}
th,td{border:1px solid #ddd;padding:.25em .55em;text-align:right;vertical-align:top}
th{background:#f5f5f5}td.l,th.l{text-align:left}
.ptext{font-size:.85em;color:#555;white-space:pre-wrap;max-width:36em;text-align:left}
.note{color:#555;font-style:italic}.missing{background:#fff8e6;border-left:4px solid #e6a700;padding:.5em .8em}
.verdict{font-size:1.05em;background:#eef6ff;border-left:4px solid #0072B2;padding:.5em .8em;margin:.4em 0}
pre.sample{white-space:pre-wrap;word-break:break-word;background:#fafafa;border:1px solid #eee;
padding:.5em;max-height:22em;overflow:auto;font-size:.82em}
.ok{color:#00734d}.bad{color:#b33c00}figure{margin:.8em 0}figure svg{max-width:100%;height:auto}
details{margin:.4em 0}summary{cursor:pointer}
abbr[title]{text-decoration:underline dotted;cursor:help}p.plain{font-size:1.02em}
p.evidence{font-size:.9em;color:#333}
"""


#: Bidirectional-control characters (embeddings, overrides, isolates, marks). In model
#: text they could reorder what a reader sees ("Trojan Source", Boucher and Anderson,
#: arXiv:2111.00169), so the page shows each as a visible ``[U+XXXX]`` instead.
_BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def esc(value) -> str:
    """HTML-escape any value (quotes too: values may land in attributes).

    Bidirectional-control characters are replaced by a visible ``[U+XXXX]``.
    """
    text = _BIDI.sub(lambda m: f"[U+{ord(m.group()):04X}]", "" if value is None else str(value))
    return html.escape(text, quote=True)


def _f(x, digits: int = 4) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def term(name: str, label: str | None = None) -> str:
    """``label`` (default ``name``) with the glossary's definition of ``name`` on hover."""
    text = esc(name if label is None else label)
    if name not in W.GLOSSARY:
        return text
    return f'<abbr title="{esc(W.GLOSSARY[name])}">{text}</abbr>'


class Html(str):
    """Markup that is already safe (a header cell made by :func:`term`): not escaped again."""


def _table(header: list[str], rows: list[list], left: int = 1) -> str:
    th = "".join(f'<th class="{"l" if i < left else ""}">'
                 f'{h if isinstance(h, Html) else esc(h)}</th>' for i, h in enumerate(header))
    body = "".join("<tr>" + "".join(f'<td class="{"l" if i < left else ""}">{c}</td>'
                                    for i, c in enumerate(r)) + "</tr>" for r in rows)
    return f"<table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"


_MISSING_OPEN = '<p class="missing">'


def _missing(text: str) -> str:
    return f"{_MISSING_OPEN}{text}</p>"


#: Title of the one list that replaces the sections with nothing to say.
UNFILLED_TITLE = "What would fill the other sections"


def _only_missing(body: str) -> bool:
    """A section body that is one "what would fill this" paragraph and nothing else."""
    return (body.startswith(_MISSING_OPEN) and body.endswith("</p>")
            and body.count("<p") == 1)


def _unfilled(empty: list[tuple[str, str]], body: dict) -> str:
    """The list: each empty section's title and what would fill it (its own words)."""
    items = "".join(f'<li id="{sid}"><b>{esc(title)}</b>: '
                    f"{body[sid][len(_MISSING_OPEN):-len('</p>')]}</li>" for sid, title in empty)
    return ("<p>These sections have nothing to show for these inputs; each line says what "
            f"would fill it.</p><ul>{items}</ul>")


def _figure(svgs: dict, name: str, caption: str) -> str:
    if name not in svgs:
        return ""
    return f"<figure>{svgs[name]}<figcaption class=\"note\">{esc(caption)}</figcaption></figure>"


def _ranges(ks: list[int]) -> str:
    return W.ranges(ks, dash="–")


def render(doc: dict, svgs: dict, *, figure_files: dict) -> str:
    """The whole page, from a report result document (as read from its JSON file)."""
    audit = doc
    version, schema_version, options = doc["tool_version"], doc["schema_version"], doc["options"]
    provenance = doc.get("provenance") or {"inputs": [], "notes": []}
    texts = {(s["model"], s["prompt_id"]): s for s in doc.get("samples_shown") or []}
    parts = [f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
             f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
             f"<title>rlvr-boundary report: {esc(', '.join(audit['checkpoints']))} vs "
             f"{esc(audit['base'])}</title><style>{CSS}</style></head><body>"]
    parts.append(f"<h1>rlvr-boundary report</h1><p class=\"note\">"
                 f"{W.count_phrase(len(audit['checkpoints']), 'checkpoint')} "
                 f"against the base <b>{esc(audit['base'])}</b> on "
                 f"{audit['n_prompts']} problems; rlvr-boundary {esc(version)}, schema "
                 f"{esc(schema_version)}.</p>")
    body = {
        "summary": _summary(audit),
        "passk": _passk(audit, svgs),
        "cot": _cot(audit, svgs),
        "difference": _difference(audit, svgs),
        "sampling": _sampling(audit),
        "verifier": _verifier(audit),
        "extrapolation": _extrapolation(audit, svgs),

        "scorers": _scorers(audit, svgs),
        "advisor": _advisor(audit),
        "coverage": _coverage(audit, svgs),
        "frontier": _frontier(audit),
        "cover": _cover(audit, svgs),
        "support": _support(audit),
        "evolution": _evolution(audit, svgs),
        "diversity": _diversity(audit),
        "quality": _quality(audit),
        "tokens": _tokens(audit, svgs),
        "learning": _learning(audit, svgs),
        "strategies": _strategies(audit, svgs),
        "regressions": _regressions(audit, texts),
        "lucky": _lucky(audit, texts),
        "glossary": _glossary(),
        "provenance": _provenance(provenance, options, figure_files),
    }
    # A section whose body is None was not asked for (--cluster-by, --extrapolate, ...).
    shown = [(sid, title) for sid, title in _section_order() if body[sid] is not None]
    # A section with nothing to say but what would fill it joins one list near the end.
    empty = [(sid, title) for sid, title in shown if _only_missing(body[sid])]
    shown = [st for st in shown if st not in empty]
    if empty:
        at = [sid for sid, _ in shown].index("glossary")
        shown.insert(at, ("unfilled", UNFILLED_TITLE))
        body["unfilled"] = _unfilled(empty, body)
    parts.append("<nav>" + "".join(f'<a href="#{sid}">{esc(title)}</a>' for sid, title in shown)
                 + "</nav>")
    for sid, title in shown:
        parts.append(f'<section id="{sid}"><h2>{esc(title)}</h2>{body[sid]}</section>')
    parts.append("</body></html>")
    return "\n".join(parts)


def _glossary() -> str:
    """Every term once, as one table (the same definitions show on hover in the tables)."""
    rows = [[f'<dfn id="g-{re.sub(r"[^a-z0-9]+", "-", t.lower()).strip("-")}">{esc(t)}</dfn>',
             esc(d)] for t, d in W.GLOSSARY.items()]
    return ("<p>Terms used on this page; hover a dotted-underlined heading for its "
            "definition.</p>" + _table(["term", "meaning"], rows, 2))


def _summary(a: dict) -> str:
    parts = []
    for m, res in a["comparisons"].items():
        parts.append(f'<div class="verdict"><p class="headline"><b>{esc(m)}</b>: '
                     f'{esc(W.headline(res))}</p>'
                     f'<p class="plain">{esc(W.plain_summary(a, m))}</p>'
                     f'<p class="evidence">The evidence: {esc(W.explanation(res))} '
                     f'{esc(W.support_sentence(a, m))}</p></div>')
    note = W.one_sample_note(max(v["max"] for v in a["n_samples"].values()))
    if note:
        parts.append(f'<p class="missing">{esc(note)}</p>')
    cov = a["coverage"]
    solved = ", ".join(f"{esc(m)} {cov['solved'][m]}" for m in a["models"])
    parts.append(f"<p>{esc(W.coverage_rule(cov))} Solved: {solved}; union {cov['union']} "
                 f"of {a['n_prompts']}.</p>")
    dropped = W.dropped_note(a.get("dropped") or {}, a["n_prompts"])
    if dropped:
        parts.append(f'<p class="note">{esc(dropped)}</p>')
    return "".join(parts)


def _passk(a: dict, svgs: dict) -> str:
    ks = list(a["ks"])
    show = sorted({ks[0], ks[-1], *[k for k in ks if k & (k - 1) == 0]})
    maj = a.get("maj_at_k")
    if maj:  # pass@k and maj@k side by side, at the budgets maj@k was computed for
        rows = [[str(k)] + [f"{_f(a['pass_at_k'][m][ks.index(k)])} / "
                            f"{_f(maj['models'][m][maj['ks'].index(k)])}" for m in a["models"]]
                for k in maj["ks"]]
        table = (f"<p>Each cell: {term('pass@k')} / {term('maj@k')} (the chance that the most "
                 "frequent answer among k samples is correct, exact over k-subsets; shown up to "
                 f"k = {maj['ks'][-1]}, where its exact computation stays fast). The gap between "
                 "them is what picking by a verifier gains over picking by a vote.</p>" + _table(["k", *a["models"]], rows))
    else:
        rows = [[str(k)] + [_f(a["pass_at_k"][m][ks.index(k)]) for m in a["models"]]
                for k in show]
        table = _table(["k", *a["models"]], rows)
    return (_figure(svgs, "passk", "Unbiased pass@k (Chen et al. 2021) averaged over problems; "
                    "dotted lines mark each checkpoint's crossover k*"
                    + ("; thin dash-dot lines are maj@k." if maj else "."))
            + table)


def _cot(a: dict, svgs: dict) -> str | None:
    """CoT-pass@k beside pass@k: curves of both kinds, the crossing and price of each, what
    the gap means (None when no model's rollouts carry cot_correct: the section is absent)."""
    blocks = {m: r["cot"] for m, r in a["comparisons"].items() if r.get("cot")}
    if not blocks:
        return None
    out = [f"<p>{esc(W.COT_INTRO)}</p>",
           _figure(svgs, "cot", "Top: answer-only pass@k (thin) and CoT-pass@k (thick, dotted) "
                   "of each model. Bottom: D(k) of each kind, with the simultaneous band of "
                   "the CoT difference; dotted vertical lines mark the CoT k*.")]
    rows = []
    for m, cot in blocks.items():
        if cot.get("comparison") is None:  # not drawn: its sentence below says why
            continue
        for kind, res in (("answer only", a["comparisons"][m]),
                          (term("CoT-pass@k", "answer and chain"), cot["comparison"])):
            rows.append([esc(m), kind, W.pts(res["diff"][0]),
                         esc(res["k_star"]) if res["k_star"] is not None else "none on the grid",
                         (f"{W.pts(res['price'], False)} at k = {res['price_k']}"
                          if res["price"] > 0 else "none"),
                         esc(_ranges(res.get("gain_budgets") or [])),
                         esc(_ranges(res.get("loss_budgets") or []))])
    if rows:
        out.append(_table(["checkpoint", "verdict counted",
                           Html(term("D(k)", "D(first k), points")), Html(term("k*")),
                           Html(term("price", "price (points)")),
                           Html(term("supported gain", "supported gain k")),
                           Html(term("supported loss", "supported loss k"))], rows, 2))
    for m, cot in blocks.items():
        said = [W.cot_skipped_sentence(cot, a["base"], m), W.cot_kstar_price_sentence(cot),
                W.cot_meaning_sentence(cot, a["base"], m, a["comparisons"][m]),
                W.cot_without_answer_sentence(cot)]
        out.append(f"<p><b>{esc(m)}</b>: " + " ".join(esc(s) for s in said if s) + "</p>")
    out.append(f'<p class="note">{esc(W.COT_BAND_NOTE)}</p>')
    return "".join(out)


def _kci(v) -> str:
    return "beyond the grid" if v is None else f"{v:g}"


def _difference(a: dict, svgs: dict) -> str:
    if not a["comparisons"]:
        return _missing("Only one model was given: a difference needs a base and a checkpoint.")
    out = [_figure(svgs, "difference", "D(k) = pass@k(checkpoint) − pass@k(base) with the "
                   "Gaussian-multiplier sup-t simultaneous band: where the band is above 0 the "
                   "gain is supported at every such k at once, below 0 the loss.")]
    rows = []
    for m, r in a["comparisons"].items():
        ci = r.get("bootstrap_ci") or {}
        ks_ci = (ci.get("k_star") or {}).get("ci")
        pr_ci = (ci.get("price") or {}).get("ci")
        fl = r.get("first_loss_set")
        rows.append([esc(m), W.pts(r["diff"][0]),
                     esc(r["k_star"]) if r["k_star"] is not None else "none on the grid",
                     str(r["n_crossings"]),
                     (f"{W.pts(r['price'], False)} at k = {r['price_k']}" if r["price"] > 0
                      else "none"),
                     esc(_ranges(r.get("gain_budgets") or [])),
                     esc(_ranges(r.get("loss_budgets") or [])),
                     (f"{fl[0]}–{fl[1] if fl[1] is not None else 'beyond the grid'}" if fl
                      else "–"),
                     esc(W.delta_se_cell(r) or "–"),
                     (f"k* {_kci(ks_ci[0])}–{_kci(ks_ci[1])}; price "
                      f"{W.pts(pr_ci[0], False)}–{W.pts(pr_ci[1], False)} points"
                      if ks_ci and pr_ci else "–")])
    out.append(_table(["checkpoint", Html(term("D(k)", "Δpass@1 (points)")), Html(term("k*")),
                       Html(term("crossings")), Html(term("price", "price (points)")),
                       Html(term("supported gain", "supported gain k")),
                       Html(term("supported loss", "supported loss k")),
                       Html(term("first-loss set")),
                       Html(term("Delta_SE", "sampling-efficiency gap (points, not a gain)")),
                       "bootstrap 95% interval"], rows))
    for m, r in a["comparisons"].items():
        sentence = W.band_sentence(r)
        if sentence:
            out.append(f"<p>{esc(m)}: {esc(sentence)}</p>")
    methods = sorted({r["band"]["method"] for r in a["comparisons"].values() if r.get("band")})
    if methods:
        out.append(f'<p class="note">{esc("; ".join(methods))}. '
                   f'{esc(W.crossings_overview(a["comparisons"]))}</p>')
    return "".join(out)


def _sampling(a: dict) -> str | None:
    """Per checkpoint: the band's sampling unit and how the verdicts move (None: not asked)."""
    blocks = {m: r["sampling_unit"] for m, r in a["comparisons"].items() if r.get("sampling_unit")}
    if not blocks:
        return None
    out = []
    for m, su in blocks.items():
        ind = su["independent"]

        def fl(v):
            return "–" if not v else f"{v[0]}–{v[1] if v[1] is not None else 'beyond the grid'}"

        rows = [["independent prompts", f"{a['n_prompts']}", f"{ind['critical_value']:.2f}",
                 esc(_ranges(ind["gain_budgets"])), esc(_ranges(ind["loss_budgets"])),
                 fl(ind["first_loss_set"])],
                [esc(su["unit"]), str(su["n_clusters"] or a["n_prompts"]),
                 " to ".join(dict.fromkeys(f"{v:.2f}" for v in su["critical_values"])),
                 esc(_ranges(su["gain_budgets"])), esc(_ranges(su["loss_budgets"])),
                 fl(su["first_loss_set"])]]
        out.append(f"<h3>{esc(m)}</h3>"
                   + "".join(f"<p>{esc(t)}</p>" for t in W.sampling_unit_sentences(
                       su, a["n_prompts"]))
                   + _table(["band drawn over", "units", "critical value", "supported gain k",
                             "supported loss k", "first-loss set"], rows))
    return "".join(out)


def _pow2_rows(ks: list) -> list[int]:
    return sorted({ks[0], ks[-1], *[k for k in ks if k & (k - 1) == 0]})


def _verifier(a: dict) -> str | None:
    """Per checkpoint: the band under the verifier's error rates (None: not asked)."""
    blocks = {m: r for m, r in a["comparisons"].items() if r.get("verifier_error")}
    if not blocks:
        return None
    out = ["<p>A verifier that grades a wrong answer correct with probability FP and a correct "
           "one wrong with probability FN turns a true success rate p into FP + p (1 − FP − FN). "
           "The band below is drawn for the true rates: a model-based estimate (the "
           "nonparametric maximum-likelihood distribution of true rates, with these error "
           "rates in the likelihood) with a prompt-bootstrap simultaneous band. It assumes the "
           "verifier errs independently across samples.</p>"]
    for m, r in blocks.items():
        ve = r["verifier_error"]
        ks = list(r["ks"])
        rows = [[str(k), W.pts(r["diff"][ks.index(k)]),
                 f"{W.pts(r['band']['lower'][ks.index(k)])} to "
                 f"{W.pts(r['band']['upper'][ks.index(k)])}",
                 W.pts(ve["diff"][ks.index(k)]),
                 f"{W.pts(ve['lower'][ks.index(k)])} to {W.pts(ve['upper'][ks.index(k)])}"]
                for k in _pow2_rows(ks)]
        lost = W.verifier_error_lost(ve, r)
        first = W.first_run_note(r)
        out.append(f"<h3>{esc(m)}</h3><p>{esc(W.verifier_error_sentence(ve))}</p>"
                   + (f"<p>{esc(lost)}</p>" if lost else "")
                   + (f'<p class="note">{esc(first)}</p>' if first else "")
                   + _table(["k", "D(k) as graded (points)", "band (points)",
                             "D(k) of true rates (points)", "band under verifier error (points)"],
                            rows))
    return "".join(out)


def _extrapolation(a: dict, svgs: dict) -> str | None:
    """Per checkpoint: predicted pass@k and D(k) up to K beside the power law (None: not asked)."""
    blocks = {m: r["extrapolation"] for m, r in a["comparisons"].items()
              if r.get("extrapolation")}
    if not blocks:
        return None
    out = ['<p class="missing">Model-based prediction, not a measurement: beyond the n samples '
           "drawn per problem, pass@k comes from a distribution of per-problem success rates "
           "fitted to the counts; each interval is the range of predictions of every rate "
           "distribution the data cannot reject, given only where its coverage was validated "
           "(beyond that: not calibrated). The power-law column fits −log pass@k = A k^(−b) "
           "to the measured curve, after Schaeffer et al., 'How Do Large Language Monkeys Get "
           "Their Power (Laws)?' (arXiv 2502.17578); where the two disagree, the prediction "
           "depends on the model.</p>",
           _figure(svgs, "extrapolation", "Predicted pass@k and D(k) with their intervals "
                   "where calibrated (solid), the power law (dashed) and the measured values "
                   "(dots); the dotted line marks n.")]
    for m, ex in blocks.items():
        ks = [int(k) for k in ex["ks"]]
        n_obs = ex["observed_up_to"]
        # The grid is log-spaced beyond n: the budget nearest each power of two up to K.
        powers = [2 ** i for i in range(int(n_obs).bit_length(), int(ks[-1]).bit_length())]
        show = sorted({n_obs, ks[-1], *[min(ks, key=lambda k: abs(k - p)) for p in powers]})
        pl = ex["power_law"]

        def cell(key, j, signed=False):
            fmt = "+.4f" if signed else ".4f"
            lo, hi = (ex.get(key + "_lower") or [None] * len(ks))[j], \
                (ex.get(key + "_upper") or [None] * len(ks))[j]
            if lo is None or hi is None:  # outside the validated reach: no interval
                return f"{format(ex[key][j], fmt)} (not calibrated)"
            return f"{format(ex[key][j], fmt)} ({format(lo, fmt)} to {format(hi, fmt)})"

        rows = [[str(k), cell("pass_base", ks.index(k)), cell("pass_rl", ks.index(k)),
                 cell("diff", ks.index(k), True), _f(pl["pass_base"][ks.index(k)]),
                 _f(pl["pass_rl"][ks.index(k)]), f"{pl['diff'][ks.index(k)]:+.4f}"]
                for k in show]
        out.append(f"<h3>{esc(m)}</h3><p>{esc(W.extrapolation_sentence(ex))} "
                   f"{esc(W.extrapolation_k_star_sentence(ex))}</p>"
                   f'<p class="note">{esc(ex["note"][:1].upper() + ex["note"][1:])}.'
                   + (f" {esc(W.first_run_note(a['comparisons'][m]))}"
                      if W.first_run_note(a["comparisons"][m]) else "") + "</p>"
                   + _table(["k", f"pass@k {a['base']}, predicted (band)",
                             f"pass@k {m}, predicted (band)", "D(k), predicted (band)",
                             "power law: base", "power law: checkpoint", "power law: D(k)"],
                            rows))
    return "".join(out)


def _scorers(a: dict, svgs: dict) -> str:
    """Per-scorer curves, a table per checkpoint, what survives, and the disagreement table."""
    block = a.get("scorers")
    if not block:
        return _missing("Scorer sensitivity needs rollout tables graded by several backends "
                        "(<code>rlvr-boundary verify ROLLOUTS --gold GOLD --backend "
                        "math-verify,canonical</code>): the page then shows how pass@k, k*, the "
                        "price and the band verdicts move when only the grader changes.")
    out = [f"<p>{esc(W.scorer_primary_sentence(block))}</p>",
           _figure(svgs, "scorers", "Top: pass@k of each model under each scorer (line style). "
                   "Bottom: D(k) per scorer; triangles mark budgets where that scorer's "
                   "simultaneous band supports a loss.")]
    for m, sens in block["comparisons"].items():
        base, ks = sens["models"]["base"], list(sens["ks"])
        rows = []
        for s, per in sens["per_scorer"].items():
            pk, fl = per["pass_at_k"], per.get("first_loss_set")
            rows.append([esc(s) + (" (main)" if s == block["primary"] else ""),
                         _f(pk[base][0]), _f(pk[m][0]), _f(pk[base][-1]), _f(pk[m][-1]),
                         esc(per["k_star"]) if per["k_star"] is not None else "none on the grid",
                         (f"{W.pts(per['price'], False)} at k = {per['price_k']}"
                          if per["price"] > 0 else "none"),
                         esc(_ranges(per["gain_budgets"])), esc(_ranges(per["loss_budgets"])),
                         (f"{fl[0]}–{fl[1] if fl[1] is not None else 'beyond the grid'}" if fl
                          else "–")])
        out.append(f"<h3>{esc(m)} against {esc(base)}</h3>")
        out.append(_table(["scorer", f"pass@1 {base}", f"pass@1 {m}", f"pass@{ks[-1]} {base}",
                           f"pass@{ks[-1]} {m}", "k*", "price (points)", "supported gain k",
                           "supported loss k", "first-loss set"], rows))
        out.append(f'<p class="verdict">{esc(W.scorer_robust_sentence(sens))}</p>')
    dis = block.get("disagreement")
    if not dis:
        out.append(_missing("The disagreement table needs the verdict columns of one graded "
                            "table per model."))
        return "".join(out)
    ref = dis["reference"]
    others = list(dis["overall"])
    out.append(f"<h3>Disagreement with {esc(ref)} by answer type</h3>"
               f"<p>{esc(W.disagreement_sentence(dis))}</p>")
    head = ["answer type", "completions"]
    for s in others:
        head += [f"{s} differs", f"only {ref} accepts", f"only {s} accepts"]

    def cells(st: dict) -> list[str]:
        row = [f"{next(iter(st.values()))['rows']:,}"]
        for s in others:
            x = st[s]
            row += [f"{x['disagree']:,} ({x['rate']:.1%})", f"{x['only_reference']:,}",
                    f"{x['only_other']:,}"]
        return row

    order = sorted(dis["by_type"], key=lambda ty: (-max(dis["by_type"][ty][s]["rate"]
                                                         for s in others), ty))
    rows = [[esc(ty), *cells(dis["by_type"][ty])] for ty in order]
    rows.append(["<b>all</b>", *cells(dis["overall"])])
    out.append(_table(head, rows))
    for ty, per in dis["examples"].items():
        for s, exs in per.items():
            items = "".join(
                f"<li>{esc(e.get('model'))} · {esc(e.get('prompt_id'))} · sample "
                f"{esc(e.get('sample_idx'))}: gold <code>{esc(e.get('gold'))}</code>, answer "
                f"<code>{esc(e.get('answer'))}</code>; {esc(ref)} "
                f"{'accepts' if e[ref] else 'rejects'}, {esc(s)} "
                f"{'accepts' if e[s] else 'rejects'}</li>" for e in exs)
            out.append(f"<details><summary>{esc(ty)}: examples where {esc(s)} and {esc(ref)} "
                       f"differ</summary><ul>{items}</ul></details>")
    return "".join(out)


def _advisor(a: dict) -> str:
    rows = []
    for r in a["advisor"]:
        if "runner_up" in r:
            verdict = W.advisor_verdict(r)
            cls = {"supported": "ok", "tie": "note", "not separated": "bad"}[verdict]
            rows.append([str(r["k"]), esc(r["best"]), W.pts(r["pass_at_k"], False),
                         esc(r["runner_up"]), W.pts(r["lead"]),
                         f"{W.pts(r['band'][0])} to {W.pts(r['band'][1])}",
                         f'<span class="{cls}">{verdict}</span>'])
        else:
            rows.append([str(r["k"]), esc(r["best"]), W.pts(r["pass_at_k"], False),
                         "–", "–", "–", "–"])
    return ("<p>If you will deploy with k samples per problem (best-of-k with a verifier), "
            "use this checkpoint. All values are in points: pass@k times 100, and differences "
            "of it. 'Supported' means the simultaneous band of its difference to the runner-up "
            "excludes 0 at that k; 'tie' means both models solve every problem or neither "
            "does at that k.</p>"
            + _table(["k", "best", "pass@k (points)", "runner-up", "lead (points)",
                      "band (points)", "verdict"], rows, 2))


def _coverage(a: dict, svgs: dict) -> str:
    cov = a["coverage"]
    out = [f"<p>{esc(W.coverage_rule(cov))}</p>"]
    rows = [[esc(m), str(t["both"]), str(t["base_only"]), str(t["rl_only"]), str(t["neither"])]
            for m, t in cov["table_2x2"].items()]
    if rows:
        out.append(_table(["checkpoint", "both", "base only", "checkpoint only", "neither"], rows))
    out.append(_figure(svgs, "upset", "UpSet plot: each bar counts the problems solved by exactly "
                       "the models marked below it."))
    out.append(_figure(svgs, "histogram", "Per-problem accuracy; the exact 0 and 1 bins are kept "
                       "apart from the interior bins."))
    h = cov["histogram"]
    out.append(_table(["model", *h["labels"]],
                      [[esc(m), *[str(int(x)) for x in h["counts"][m]]] for m in a["models"]]))
    return "".join(out)


def _frontier(a: dict) -> str:
    fr = a.get("frontier")
    if not fr or not fr["transitions"]:
        return _missing("The hard frontier needs a base and at least one checkpoint.")
    rows = [["no model (hard frontier)", str(fr["unsolved"]["count"]),
             f"{fr['unsolved']['share']:.1%}",
             f"{fr['unsolved']['ci'][0]:.1%}–{fr['unsolved']['ci'][1]:.1%}"]]
    for m, t in fr["transitions"].items():
        for key, what in (("gained", "0 → 1: solved by {m}, not by the base"),
                          ("lost", "1 → 0: solved by the base, not by {m}")):
            d = t[key]
            rows.append([esc(what.format(m=m)), str(d["count"]), f"{d['share']:.1%}",
                         f"{d['ci'][0]:.1%}–{d['ci'][1]:.1%}"])
    return (f"<p>{esc(W.frontier_sentence(fr, a['n_prompts'], a['base']))}</p>"
            + _table(["problems", "count", "share", f"{1 - fr['alpha']:.0%} interval "
                      "(Wilson)"], rows))


#: The thresholds the cover@tau table shows (the figure draws every one).
COVER_TABLE_TAUS = (0.1, 0.25, 0.5, 0.75, 0.9, 1.0)


def _cover(a: dict, svgs: dict) -> str:
    comps = a["comparisons"]
    if not comps or not all(r.get("cover") for r in comps.values()):
        return _missing("cover@tau needs a base and at least one checkpoint.")
    first = next(iter(comps.values()))["cover"]
    taus = first["taus"]
    cols = [taus.index(t) for t in COVER_TABLE_TAUS if t in taus]
    curves = {a["base"]: first["models"][a["base"]]}
    curves.update({m: r["cover"]["models"][m] for m, r in comps.items()})

    def cell(cv, j):
        if cv["lower"] is None:
            return f"{cv['cover'][j]:.1%}"
        return f"{cv['cover'][j]:.1%} ({cv['lower'][j]:.1%}–{cv['upper'][j]:.1%})"

    rows = [[esc(m), *[cell(cv, j) for j in cols]] for m, cv in curves.items()]
    head = ["model", *[f"tau = {taus[j]:g}" for j in cols]]
    out = [f"<p>{esc(W.cover_sentence(first, a['n_prompts']))}</p>",
           _figure(svgs, "cover", W.cover_caption(first)),
           _table(head, rows)]
    out += [f"<p>{esc(W.cover_verdict_sentence(m, a['base'], r['cover']))}</p>"
            for m, r in comps.items()]
    return "".join(out)


def _support(a: dict) -> str:
    s = a["support"]
    if not s["problem"]:
        return _missing("Support dynamics need a base and at least one checkpoint.")
    head = ["checkpoint", "P", "E", "S", "O",
            *[Html(term(t)) for t in ("SRR", "NDR", "SDS", "NSCR")]]

    def row(m, d):
        return [esc(m), *[str(d[k]) if isinstance(d[k], int) else _f(d[k], 1) for k in "PESO"],
                *[_f(d[k], 3) for k in ("SRR", "NDR", "SDS", "NSCR")]]

    out = [f"<p>Empirical support at K = {s['K']}: a problem is in a model's support when some "
           f"correct sample is found within K draws with probability at least 1 − ζ = "
           f"{1 - s['zeta']:g}: its success rate per sample must be at least the "
           f"{term('support epsilon', 'support epsilon')} ε = 1 − ζ^(1/K) = {s['epsilon']:.4f}. "
           "P preserved (both models), E expanded (only the checkpoint), S shrunk (only the "
           "base), O outside both. In plain words: SRR is the share of the base's problems the "
           "checkpoint keeps (1 = lost none); NDR the share of the checkpoint's problems that are "
           "new (0 = found nothing new); SDS combines the two (their harmonic mean); NSCR is the "
           "net change, above 0 the support grew, below 0 it shrank. Formulas: SRR = P/(P+S), "
           "NDR = E/(P+E), SDS = 2 SRR NDR/(SRR + NDR), NSCR = (E−S)/(P+E+S).</p>",
           _table(head, [row(m, d) for m, d in s["problem"].items()])]
    for m, d in s["problem"].items():
        for region, label in (("E", "expanded"), ("S", "shrunk")):
            ids = d["regions_by_prompt"][region]
            if ids:
                out.append(f"<details><summary>{esc(m)}: {len(ids)} {label} problems</summary>"
                           f"<p>{esc(', '.join(map(str, ids)))}</p></details>")
    if s["answer"]:
        out.append("<h3>Per distinct correct answer</h3>"
                   + _table(head, [row(m, d) for m, d in s["answer"].items()]))
    else:
        out.append(_missing("Per-answer support needs the extracted <code>answer</code> column "
                            "of the rollout table (run <code>rlvr-boundary verify</code> on the "
                            "completions)."))
    return "".join(out)


def _evolution(a: dict, svgs: dict) -> str:
    ev = a["evolution"]
    if not ev:
        return _missing("No training steps found: give two or more checkpoints whose labels carry "
                        "the step (for example <code>step-100</code>, <code>global_step_200</code>) "
                        "to see pass@1 and pass@K against training step.")
    rows = [[esc(r["model"]), str(r["step"]), _f(r["pass_at_1"]), _f(r["pass_at_K"])]
            for r in ev["rows"]]
    return (_figure(svgs, "evolution", "pass@1 and pass@K against training step.")
            + _table(["model", "step", "pass@1", f"pass@{ev['K']}"], rows))


def _diversity(a: dict) -> str:
    d = a["diversity"]
    if not d:
        return _missing("Answer diversity needs the extracted <code>answer</code> of each sample "
                        "(rollout tables graded by <code>rlvr-boundary verify ROLLOUTS --gold "
                        "GOLD</code>); count-only "
                        "inputs cannot show it.")
    rows = [[esc(m), _f(v["distinct"], 2), _f(v["entropy"], 3), _f(v["exp_entropy"], 2),
             _f(v["inverse_simpson"], 2)] for m, v in d["models"].items()]
    return (f"<p>Expected over random subsets of k = {d['k']} samples per problem, averaged over "
            "problems; incomplete outputs form one class \"NA\".</p>"
            + _table(["model", "distinct answers", "answer entropy (nats)", "exp(entropy)",
                      "inverse Simpson"], rows))


def _moment_table(block: dict, models: list[str], cols: list[str]) -> str:
    rows = []
    for col in cols:
        for m in models:
            cell = block[col].get(m)
            if not cell or cell["all"] is None:
                continue
            rows.append([esc(col), esc(m), *[
                "–" if cell[k] is None else f"{cell[k]['mean']:.4g} ± {cell[k]['std']:.3g} "
                f"(n={cell[k]['count']})" for k in ("all", "correct", "incorrect")]])
    return _table(["statistic", "model", "all samples", "correct", "incorrect"], rows, 2)


def _quality(a: dict) -> str:
    q = a.get("quality")
    if not q:
        return _missing("Quality flags need the completion text: run <code>rlvr-boundary verify "
                        "ROLLOUTS --gold GOLD</code> (it fills the q_* columns: no boxed answer, several boxed answers, text "
                        "after the answer, CJK share, language mixing, 3-gram redundancy).")
    note = W.quality_sampling_note(a.get("quality_sampling"))
    firing, never, everywhere = _quality_split(q)
    omitted = W.quality_omitted_sentence(never, everywhere)
    head = (f'<p class="note">{esc(note)}</p>' if note else "")
    if not firing:
        return head + f"<p>No quality flag fires on these samples. {esc(omitted or '')}</p>"
    meaning = "; ".join(f"<code>{esc(c)}</code>: {esc(W.QUALITY_FLAGS.get(c, c))}"
                        for c in firing)
    return ("<p>Means of the flags that fire, shares for yes/no flags, per model and split by "
            f"verdict. {meaning}.</p>" + head + _moment_table(q, a["models"], firing)
            + (f'<p class="note">{esc(omitted)}</p>' if omitted else ""))


def _quality_split(q: dict) -> tuple[list[str], list[str], list[str]]:
    """The flags that fire on some samples, those that never fire, and those that fire on every
    sample of every model (a property of the task, not a finding)."""
    firing, never, everywhere = [], [], []
    for col, per in q.items():
        means = [c["all"]["mean"] for c in per.values() if c and c.get("all")]
        if not means or all(v == 0 for v in means):
            never.append(col)
        elif all(v == 1 for v in means) and all(
                (c["all"].get("std") or 0) == 0 for c in per.values() if c and c.get("all")):
            everywhere.append(col)
        else:
            firing.append(col)
    return firing, never, everywhere


def _tokens(a: dict, svgs: dict) -> str:
    t = a.get("tokens")
    if not t:
        return _missing("Token statistics need the token summary columns of the rollout table "
                        "(entropy_mean, rbf_mean, log_ppl, entropy_bins), which <code>"
                        "rlvr-boundary sample --model MODEL --prompts PROMPTS --out DIR</code> "
                        "fills (the transformers backend; a server only with logprobs), or "
                        "<code>rlvr-boundary score ROLLOUTS --model MODEL</code> adds under a "
                        "model; these inputs do not have them.")
    cols = [c for c in t if c not in ("entropy_by_position", "truncated_share")]
    out = [_moment_table(t, a["models"], cols) if cols else ""]
    if "truncated_share" in t:
        out.append("<p>Share truncated at max_tokens: " + ", ".join(
            f"{esc(m)} {v:.3f}" for m, v in t["truncated_share"].items()) + "</p>")
    out.append(_figure(svgs, "entropy_position", "Mean token entropy by relative position, "
                       "correct (solid) vs incorrect (dashed) samples."))
    return "".join(out)


def _learning(a: dict, svgs: dict) -> str:
    """Where learning landed: a sentence, the figure and a table by token kind per result."""
    results = a.get("learning") or []
    if not results:
        return _missing(esc(W.LEARNING_MISSING))
    out = [f"<p>{esc(W.LEARNING_INTRO)}</p>"]
    for res in results:
        out.append(f"<p>{esc(W.learning_sentence(res))}</p>")
    out.append(_figure(svgs, "learning", "Mean |Δp| of the produced tokens by token kind (top) "
                       "and by relative position in the text (bottom)."))
    for res in results:
        lab = res["labels"]
        rows = [[esc(c), str(d["tokens"]), *(["–"] * 4 if not d["tokens"] else
                 [f"{d['mean_dlogp']:+.4f}", _f(d["mean_abs_dp"]), f"{d['share_barely_moved']:.1%}",
                  f"{d['mean_dentropy']:+.4f}"])] for c, d in res["by_category"].items()]
        out.append(f"<h3>{esc(lab['after'])} against {esc(lab['before'])}</h3>"
                   + _table(["token kind", "tokens", "mean Δlog p", "mean |Δp|",
                             f"share |Δp| ≤ {res['settings']['eps']:g}", "mean ΔH (nats)"], rows))
        fell = W.learning_entropy_sentence(res)
        if fell:
            out.append(f"<p>{esc(fell)}</p>")
    return "".join(out)


def _strategies(a: dict, svgs: dict) -> str:
    """Strategy mixture, accuracy per strategy, and the problems only minority strategies solve."""
    st = a.get("strategies")
    if not st:
        return _missing(esc(W.STRATEGY_MISSING))
    models, names = a["models"], st["strategies"]
    out = [f"<p>{esc(W.STRATEGY_INTRO)}</p>"]
    for m in a["checkpoints"]:
        out.append(f"<p>{esc(W.strategy_mixture_sentence(st, a['base'], m))}</p>")
        s = W.strategy_minority_sentence(st, a["base"], m)
        if s:
            out.append(f"<p>{esc(s)}</p>")
    out.append(_figure(svgs, "strategies", "Share of samples by strategy, per model."))

    def cell(m, d, s):
        v = st["models"][m][d][s]
        return "–" if v is None else f"{v:.3f}"

    rows = [[esc(m), f"{st['models'][m]['samples']:,}",
             *[f"{cell(m, 'shares', s)} / {cell(m, 'accuracy', s)}" for s in names]]
            for m in models]
    out.append("<p>Share of samples / accuracy of those samples, per strategy:</p>"
               + _table(["model", "samples", *names], rows))
    rows = [[esc(s), str(st["solves"][s]), str(d["problems"]),
             *[str(d["reached"][m]) for m in models]] for s, d in st["only"].items()]
    out.append("<p>Problems each strategy solves, those only it solves, and how many of the "
               "latter each model reaches (at least one correct sample):</p>"
               + _table(["strategy", "solves", "only it", *[f"reached by {m}" for m in models]],
                        rows))
    mo = st.get("minority_only")
    if mo and mo["rows"]:
        rows = [[esc(r["prompt_id"]), esc(", ".join(r["solved_by"])),
                 *[f"{r['correct'][m][0]}/{r['correct'][m][1]}" for m in models]]
                for r in mo["rows"]]
        more = mo["problems"] - len(mo["rows"])
        out.append(f"<details><summary>Problems solved only by strategies other than "
                   f"{esc(st['majority'])}: correct / samples per model"
                   f"{f' (first {len(rows)}; {more} more)' if more > 0 else ''}</summary>"
                   + _table(["prompt", "solved by", *models], rows) + "</details>")
    return "".join(out)


def _sample_block(texts: dict, model: str, pid: str) -> str:
    got = texts.get((model, pid))
    if not got:
        return ""
    out = []
    for kind in ("correct", "incorrect"):
        for s in got[kind]:
            cut = " (cut)" if s["cut"] else ""
            out.append(f"<details><summary>{esc(model)} · sample {esc(s['sample_idx'])} · "
                       f"<span class=\"{'ok' if kind == 'correct' else 'bad'}\">{kind}</span>"
                       f"{' · answer ' + esc(s['answer']) if s.get('answer') is not None else ''}"
                       f"{cut}</summary><pre class=\"sample\">{esc(s['text'])}</pre></details>")
    return "".join(out)


def _problem(pid: str, a: dict) -> str:
    """A problem's id, with its text below it when the result has one (escaped: user data)."""
    got = (a.get("problems") or {}).get(pid)
    if not got:
        return esc(pid)
    text = esc(got["text"]) + ("…" if got.get("cut") else "")
    return f'{esc(pid)}<div class="ptext">{text}</div>'


def _regressions(a: dict, texts: dict) -> str:
    if not a["comparisons"]:
        return _missing("Needs a base and at least one checkpoint.")
    out = []
    have_text = bool(texts)
    for m in a["comparisons"]:
        ranked = a["coverage"]["ranked"][m]
        for kind, title in (("regressions", "most regressed"), ("gains", "most improved")):
            rows = ranked[kind]
            out.append(f"<h3>{esc(m)}: {title} (accuracy c/n)</h3>")
            if not rows:
                out.append("<p class=\"note\">none</p>")
                continue
            out.append(_table(["problem", a["base"], m, "Δ accuracy"],
                              [[_problem(r["prompt_id"], a), f"{r['c_base']}/{r['n_base']}",
                                f"{r['c_model']}/{r['n_model']}", f"{r['delta']:+.3f}"]
                               for r in rows]))
            if have_text:
                for r in rows:
                    block = (_sample_block(texts, a["base"], r["prompt_id"])
                             + _sample_block(texts, m, r["prompt_id"]))
                    if block:
                        out.append(f"<details><summary>samples of {esc(r['prompt_id'])}</summary>"
                                   f"{block}</details>")
    if not have_text:
        out.append(_missing("Sample texts appear here when the inputs are rollout tables with a "
                            "<code>text</code> column; these inputs carry counts only."))
    return "".join(out)


def _lucky(a: dict, texts: dict) -> str:
    rows = a["lucky"]
    if not rows:
        return "<p class=\"note\">No problem is solved with accuracy strictly between 0 and the threshold.</p>"
    out = ["<p>Problems a model solves rarely (0 &lt; c/n &lt; 5%). A correct final answer reached "
           "this rarely may come from flawed reasoning or a guess: read the correct samples and "
           "check the reasoning, as Yue et al. (limit-of-RLVR) did by hand.</p>",
           _table(["model", "problem", "c/n", "other models"],
                  [[esc(r["model"]), _problem(r["prompt_id"], a), f"{r['c']}/{r['n']}",
                    esc(", ".join(f"{k} {v}" for k, v in r["others"].items()))] for r in rows], 2)]
    if texts:
        for r in rows:
            got = texts.get((r["model"], r["prompt_id"]))
            if got and got["correct"]:
                out.append(f"<details><summary>correct samples: {esc(r['model'])} on "
                           f"{esc(r['prompt_id'])}</summary>"
                           + "".join(f"<pre class=\"sample\">{esc(s['text'])}</pre>"
                                     for s in got["correct"]) + "</details>")
    else:
        out.append(_missing("The correct samples to review appear here when the inputs carry "
                            "the completion <code>text</code>."))
    return "".join(out)


def _provenance(prov: dict, options: dict, figure_files: dict) -> str:
    """Inputs with their hashes and manifests, notes, the options and the figure files."""
    rows = [[esc(p["path"]), esc(p.get("format")), esc(", ".join(p.get("models", []))),
             esc(p.get("sha256", "")[:16]), f"<pre class=\"sample\">{esc(json.dumps(p['manifest'], indent=1))}</pre>"
             if p.get("manifest") else "–"] for p in prov["inputs"]]
    out = [_table(["input", "format", "models", "sha256 (first 16)", "manifest"], rows, 5)]
    for note in prov.get("notes", []):
        out.append(f"<p class=\"note\">{esc(note)}</p>")
    out.append(f"<p>Options: <code>{esc(json.dumps(options))}</code></p>")
    if figure_files:
        out.append("<p>Figures (PNG and PDF) in <code>" + esc(figure_files["folder"]) + "</code>: "
                   + esc(", ".join(figure_files["files"])) + "</p>")
    return "".join(out)
