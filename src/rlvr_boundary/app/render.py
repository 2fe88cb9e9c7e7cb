"""Results -> HTML fragments for the page. Every value from a user or a model is escaped.

The fragments are inserted into the page as HTML, so anything that came from
an upload (model labels, prompt ids, file names, error messages quoting a cell)
goes through :func:`esc`. Numbers carry ``data-field`` attributes so a reader
(or a browser test) can find them without parsing sentences. Figures are
inline SVG, as in the HTML report: the page needs no extra request to show them, and
PNG and PDF files are drawn only when a visitor asks for them.
"""

from __future__ import annotations

import html

from rlvr_boundary.app.compute import words as W  # the report's words, re-exported

CSS = """
.rb-out{font-size:15px;line-height:1.45}
.rb-out table{border-collapse:collapse;margin:.4em 0 .8em}
.rb-out th,.rb-out td{border-bottom:1px solid #ddd;padding:.2em .6em;text-align:right}
.rb-out th.l,.rb-out td.l{text-align:left}
.rb-out .rb-verdict{background:#eef6ff;border-left:4px solid #0072B2;padding:.4em .8em;margin:.4em 0}
.rb-out .rb-note{color:#555;font-style:italic}
.rb-out svg{max-width:min(100%,760px);height:auto}
.rb-error{background:#fff0ec;border-left:4px solid #b33c00;padding:.6em .9em;color:#6b1d00;
white-space:pre-wrap;word-break:break-word}
.rb-big{font-size:1.35em;font-weight:600}
"""


def esc(value) -> str:
    """HTML-escape any value, quotes included (values may land in attributes)."""
    return html.escape("" if value is None else str(value), quote=True)


def _f(x, digits: int = 4) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def _k(x) -> str:
    if x is None:
        return "–"
    return f"{x:g}" if isinstance(x, float) else str(x)


def _field(name: str, text: str) -> str:
    return f'<span data-field="{esc(name)}">{text}</span>'


def _table(header: list[str], rows: list[list[str]], left: int = 1) -> str:
    th = "".join(f'<th class="{"l" if i < left else ""}">{esc(h)}</th>'
                 for i, h in enumerate(header))
    body = "".join("<tr>" + "".join(f'<td class="{"l" if i < left else ""}">{c}</td>'
                                    for i, c in enumerate(r)) + "</tr>" for r in rows)
    return f"<table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"


def _svg(res: dict, name: str, alt: str) -> str:
    """A figure as the inline SVG the job drew (the report's own, ``<title>`` escaped there).

    The SVG text comes from matplotlib in the worker, not from the user: labels in it are
    drawn as paths (``svg.fonttype = "path"``) and its title is escaped
    (:func:`rlvr_boundary.report.figures.to_svg`).
    """
    svg = (res.get("svgs") or {}).get(name)
    if not svg:
        return ""
    return f'<figure class="rb-fig" data-figure="{esc(name)}" aria-label="{esc(alt)}">{svg}</figure>'


def error(message: str, *, kind: str = "error") -> str:
    """An error box; the message is shown as text, never as markup."""
    return f'<div class="rb-out"><div class="rb-error" role="alert">{esc(kind)}: {esc(message)}</div></div>'


def idle(text: str) -> str:
    return f'<div class="rb-out"><p class="rb-note">{esc(text)}</p></div>'


def result(res: dict, note: str | None = None) -> str:
    """Dispatch on the job's mode."""
    body = {"audit": audit, "price": price, "theory": theory}[res["mode"]](res)
    if note:
        body += f'<p class="rb-note">{esc(note)}</p>'
    return f'<div class="rb-out" data-mode="{esc(res["mode"])}">{body}</div>'


# --------------------------------------------------------------------------- audit


def audit(res: dict) -> str:
    a = res["audit"]
    base = a["base"]
    parts = [f'<p>{len(a["models"])} models on {a["n_prompts"]:,} problems; base: '
             f'<b>{esc(base)}</b>; budgets k = {esc(a["ks"][0])}..{esc(a["ks"][-1])}.</p>']
    parts += [f'<div class="rb-verdict">{esc(line)}</div>' for line in W.summary_lines(a)]
    for m, c in a["comparisons"].items():
        parts.append(f"<h3>{esc(m)} vs {esc(base)}</h3>")
        parts.append(_comparison(c, base, m))
    parts.append("<h3>Curves</h3>")
    parts.append(_svg(res, "passk", "pass@k curves"))
    parts.append(_svg(res, "difference", "difference D(k) with the simultaneous band"))
    parts.append(_advisor(a["advisor"]))
    parts.append(_coverage(a["coverage"], base))
    parts.append(_svg(res, "upset", "solved sets (UpSet)"))
    parts.append(_svg(res, "histogram", "accuracy histograms"))
    parts.append(_support(a["support"], base))
    parts.append('<p class="rb-note">Downloads below: the full HTML report (every section, '
                 'offline) and the JSON with every number; the figures as PNG and PDF are drawn '
                 'when you press "Figures as PNG and PDF".</p>')
    return "".join(parts)


def _comparison(c: dict, base: str, m: str) -> str:
    ks = list(c["ks"])
    pb, pr = c["pass_at_k"][base], c["pass_at_k"][m]
    cross = ", ".join(f"({x['k_before']}, {x['k_after']}] ~ k = {x['k_continuous']:.1f}"
                      for x in c["crossings"]) or "none"
    d1 = f"{W.pts(c['diff'][0])} points"
    rows = [
        ["pass@1", f"{_f(pb[0])} → {_field('pass1_rl', _f(pr[0]))} "
                   f"(D(1) = {_field('d1', d1)})"],
        ["pass@" + str(ks[-1]), f"{_f(pb[-1])} → {_f(pr[-1])}"],
        ["crossover k*", _field("k_star", _k(c["k_star"]))
         + (f" (log-k interpolation {c['k_star_continuous']:.1f})"
            if c.get("k_star_continuous") else "")],
        ["price", _field("price", W.pts(c["price"], False)) + " points at k = "
         + _field("price_k", _k(c["price_k"]))],
        ["crossings on the grid", _field("n_crossings", str(c["n_crossings"])) + f": {esc(cross)}"],
        ["crossing bound", _field("crossing_bound", str(c["crossing_bound"]))
         + f" (V = {_field('crossing_bound_V', str(c['crossing_bound_V']))}); "
         + esc(W.crossings_sentence(c))],
    ]
    if c.get("delta_se") is not None:
        rows.append([f"Delta_SE = pass@{c['delta_se_K']} base - pass@1 RL",
                     _field("delta_se", W.pts(c["delta_se"])) + " points"])
    band = c.get("band")
    if band:
        rows += [
            [f"{band['level']:.0%} simultaneous band",
             f"supported gain at k = {_field('gain_budgets', esc(W.ranges(c['gain_budgets'])))}; "
             f"supported loss at k = {_field('loss_budgets', esc(W.ranges(c['loss_budgets'])))}"],
            ["first-loss confidence set", _field("first_loss_set", _first_loss(c))],
            ["in words", esc(W.band_sentence(c))],
        ]
        ci = c.get("bootstrap_ci")
        if ci:
            kc = ci["k_star"]["ci"]
            rows.append([f"paired bootstrap {1 - ci['alpha']:.0%} intervals",
                         f"k* [{_k(kc[0])}, {_k(kc[1])}]; price "
                         f"[{_pts1(ci['price']['ci'][0], False)}, "
                         f"{_pts1(ci['price']['ci'][1], False)}] points"])
            rows.append(["Monte Carlo error", _field("mc_error", esc(mc_sentence(
                band["critical_value"], max(band["se"]), ci["n_boot"])))])
    else:
        rows.append(["band", "needs at least 2 prompts"])
    return _table(["", ""], rows, left=2)


#: Monte Carlo standard deviation of the band's critical value times sqrt(B): measured over
#: 20 seeds at B = 500 to 4,000 on the DeepScaleR example (1,060 prompts, k = 1..128):
#: 1.8 / sqrt(B) (0.081 at 500, 0.060 at 1,000, 0.043 at 2,000, 0.022 at 4,000).
MC_SD_SQRT_B = 1.8

#: The band edges and bootstrap intervals are printed to 0.1 points on the page.
PRINTED_PTS = 0.1


def _pts1(x: float, sign: bool = True) -> str:
    """Points to one decimal: the digits the Monte Carlo error supports for band edges."""
    return f"{x * 100:+.1f}" if sign else f"{x * 100:.1f}"


def mc_sentence(critical_value: float, se_max: float, n: int) -> str:
    r"""The band's Monte Carlo error against the printed digits.

    Notes
    -----
    The critical value :math:`c` is a (1 - alpha) quantile of B Gaussian-multiplier
    draws; its Monte Carlo standard deviation is about :data:`MC_SD_SQRT_B` / sqrt(B)
    (measured), so a band edge :math:`\bar d_k \pm c\, s_k` moves by about that
    times :math:`\max_k s_k` between seeds. It is compared with half the printed unit.
    """
    sd_c = MC_SD_SQRT_B / n ** 0.5
    edge = sd_c * se_max * 100  # points
    ok = edge < PRINTED_PTS / 2
    return (f"B = {n:,} multipliers: the critical value {critical_value:.2f} has a Monte Carlo "
            f"standard error of about {sd_c:.3f}, so the band edges move by about "
            f"{edge:.3f} points between seeds, "
            + (f"below half the {PRINTED_PTS:g} points to which they are printed"
               if ok else f"not below half the {PRINTED_PTS:g} points printed: read them to "
                          f"+/-{2 * edge:.2f} points (or run rlvr-boundary report with a "
                          "larger --bootstrap)"))


def _first_loss(c: dict) -> str:
    """The first-loss confidence set [lo, hi] as budgets ('none' when no loss is supported)."""
    fl = c.get("first_loss_set")
    if not fl:
        return "none"
    hi = "beyond the grid" if fl[1] is None else str(fl[1])
    return esc(f"k = {fl[0]} to {hi}")


def _advisor(rows: list[dict]) -> str:
    if not rows:
        return ""
    body = []
    for r in rows:
        body.append([str(r["k"]), esc(r["best"]), _f(r["pass_at_k"]),
                     esc(r.get("runner_up", "–")),
                     W.pts(r["lead"]) if "lead" in r else "–",
                     (f"[{_pts1(r['band'][0])}, {_pts1(r['band'][1])}]" if "band" in r else "–"),
                     esc(W.advisor_verdict(r)) if "supported" in r else "–"])
    return ("<h3>Budget advisor</h3><p>The best model at each deployment budget k, and whether "
            "the simultaneous band separates it from the runner-up.</p>"
            + _table(["k", "best model", "pass@k", "runner-up", "lead, points", "band, points",
                      "supported"],
                     body, left=1))


def _coverage(cov: dict, base: str) -> str:
    rows = [[esc(m), str(v)] for m, v in cov["solved"].items()]
    rows.append(["<i>union</i>", str(cov["union"])])
    out = (f"<h3>Coverage at K = {cov['K']}</h3><p>{esc(W.coverage_rule(cov))}</p>"
           + _table(["model", "problems solved"], rows))
    for m, t in cov["table_2x2"].items():
        out += _table(["", f"{m} solves", f"{m} misses"],
                      [[f"{esc(base)} solves", str(t["both"]), str(t["base_only"])],
                       [f"{esc(base)} misses", str(t["rl_only"]), str(t["neither"])]])
    return out


def _support(sup: dict, base: str) -> str:
    rows = []
    for m, r in sup["problem"].items():
        rows.append([esc(m), *(str(r[x]) for x in ("P", "E", "S", "O")),
                     *(_f(r[x], 3) for x in ("SRR", "NDR", "SDS", "NSCR"))])
    return (f"<h3>Support at K = {sup['K']} (per problem)</h3><p>Empirical support: found "
            f"within K samples (epsilon = {sup['epsilon']:.4g} at zeta = {sup['zeta']:g}). "
            "P preserved, E expanded, S shrunk, O outside both (Wu et al., \"The Invisible "
            "Leash\", arXiv 2507.14843).</p>"
            + _table(["model", "P", "E", "S", "O", "SRR", "NDR", "SDS", "NSCR"], rows))


# --------------------------------------------------------------------------- price


def price(res: dict) -> str:
    r = res["result"]
    lab = r.get("labels") or {"base": "base", "rl": "RL"}
    ks = r["ks"]
    parts = []
    if r["input_kind"] == "rates":
        parts.append(f"<p>{r['n_prompts']:,} prompts; rate curves 1-(1-p)^k on k = {ks[0]}.."
                     f"{ks[-1]} ({len(ks):,} budgets).</p>")
    else:
        parts.append(f"<p>Printed curve at k = {esc(', '.join(map(_k, ks)))}.</p>")
    cross = [f"{c['direction'].replace('_', ' ')} between k = {_k(c['k_before'])} and "
             f"{_k(c['k_after'])} (log-k interpolation {c['k_continuous']:.1f})"
             for c in r["crossings"]]
    rows = [["crossover k*", _field("k_star", _k(r["k_star"]))],
            ["price", _field("price", W.pts(r["price"], False)) + " points at k = "
             + _field("price_k", _k(r["price_k"]))],
            ["crossings", _field("n_crossings", str(r["n_crossings"]))
             + ("" if not cross else ": " + esc("; ".join(cross)))]]
    if r["input_kind"] == "curve":
        iv = ", ".join(f"({_k(a)}, {_k(b)}]" for a, b in r["crossing_intervals"]) or "none"
        rows.append(["crossing interval(s)", _field("crossing_intervals", esc(iv))])
    else:
        rows.append(["crossing bound (generalized Descartes)",
                     _field("crossing_bound", str(r["crossing_bound"]))
                     + f" (V = {_field('crossing_bound_V', str(r['crossing_bound_V']))})"])
        rows.append(["as k → ∞", f"D → {W.pts(r['asymptotic_diff'])} points (difference in the "
                                 "share of prompts with a nonzero success rate)"])
    parts.append(_table(["", ""], rows, left=2))
    pb, pr = r["pass_at_k"]["base"], r["pass_at_k"]["rl"]
    show = [j for j, k in enumerate(ks) if r["input_kind"] == "curve" or (k & (k - 1)) == 0]
    parts.append(_table(["k", f"pass@k {lab['base']}", f"pass@k {lab['rl']}", "D(k), points"],
                        [[_k(ks[j]), _f(pb[j]), _f(pr[j]), W.pts(r["diff"][j])] for j in show]))
    parts.append(_svg(res, "price", "pass@k curves and difference"))
    if r["input_kind"] == "rates":
        parts.append('<p class="rb-note">Rates are read as true success rates: the curves are '
                     "1-(1-p)^k, for which the crossing bound holds exactly. For the unbiased "
                     "estimator, the confidence band, coverage and support, paste counts (c/n "
                     "cells) or upload count files.</p>")
    else:
        parts.append(f'<p class="rb-note">{esc(r["note"])}.</p>')
    return "".join(parts)


# --------------------------------------------------------------------------- theory


def theory(res: dict) -> str:
    """The diagnosis (its sentences are the command line's) and the price frontier, in points."""
    d, fr = res["diagnosis"], res["frontier"]
    names, prompts = d["strategies"], d["prompts"]
    lines = W.diagnose_sentences(d)
    head, _, rest = lines[0].partition(": ")
    parts = [f'<p class="rb-big" data-field="free_lunch">{esc(head)}</p><p>{esc(rest)}</p>']
    if d["free_lunch"]:
        parts.append(_table(["strategy", "d"], [[esc(n), f"{v:+.4f}"]
                                                for n, v in zip(names, d["direction"])]))
        parts.append(_table(["prompt", "change per unit step"],
                            [[esc(p), f"{g:+.4f}"] for p, g in zip(prompts, d["prompt_change"])]))
        parts.append(f"<p>From pi0 the step can go up to {d['max_step']:.4f} before a weight "
                     "hits 0.</p>")
    else:
        parts.append(_table(["prompt", "weight"], [[esc(p), f"{v:.4f}"]
                                                   for p, v in zip(prompts, d["weights"])]))
    spec = [ln for ln in lines if ln.startswith(("The matrix has", "Dominance margin"))]
    spec = spec or ["The matrix meets neither specialization condition."]
    parts.append("".join(f"<p>{esc(x)}</p>" for x in spec))
    kmax = fr["options"]["kmax"]
    rows = [[f"{x['tau']:.2f}", W.pts(x["gain"]), W.pts(x["price"], False),
             _k(x["price_k"]) if x["price"] > W.NO_LOSS else "–"] for x in fr["frontier"]]
    parts.append("<h3>Price frontier</h3><p>Largest pass@1 gain with every prompt kept at or "
                 "above tau times its base success, and the worst pass@k loss over k <= "
                 f"{esc(_k(kmax))} it costs, in points.</p>"
                 + _table(["tau", "pass@1 gain", "price", "at k"], rows))
    parts += [f'<p class="rb-note">{esc(n)}</p>'
              for n in W.frontier_notes(fr["tilt_above_frontier"], len(fr["frontier"]))]
    parts.append(_svg(res, "frontier", "price frontier"))
    return "".join(parts)


# --------------------------------------------------------------------------- shaping


def _cells(name: str, values, digits: int = 4) -> list[str]:
    return [f'<span data-field="{name}-{i}">{v:.{digits}f}</span>' for i, v in enumerate(values)]


def _svg_curve(xs, ys, width=420, height=140, ymax=None) -> str:
    """A minimal line chart (numbers only, no user text) of the position bias."""
    ymax = ymax or max(max(ys), 1e-12)
    pts = " ".join(f"{30 + x * (width - 40):.1f},{height - 20 - (y / ymax) * (height - 30):.1f}"
                   for x, y in zip(xs, ys))
    return (f'<svg width="{width}" height="{height}" role="img" aria-label="position bias">'
            f'<line x1="30" y1="{height - 20}" x2="{width - 10}" y2="{height - 20}" stroke="#999"/>'
            f'<line x1="30" y1="10" x2="30" y2="{height - 20}" stroke="#999"/>'
            f'<polyline fill="none" stroke="#0072B2" stroke-width="2" points="{pts}"/>'
            f'<text x="30" y="{height - 4}" font-size="10">l = 0</text>'
            f'<text x="{width - 40}" y="{height - 4}" font-size="10">l = 1</text>'
            f'<text x="34" y="18" font-size="10">{ymax:.3g}</text></svg>')


def shaping(res: dict) -> str:
    p, q, k = res["perplexity"], res["position"], res["passk"]
    G = len(p["ppl"])
    parts = [f"<h3>Perplexity shaping (alpha = {p['alpha']:g})</h3>"
             "<p>Within the group, w = (log PPL - mean)/std (population std); each advantage is "
             "multiplied by 1 - alpha w, so confident (low-perplexity) completions count a little "
             "more.</p>"]
    rows = [["PPL", *[f"{x:g}" for x in p["ppl"]]],
            ["log PPL", *[f"{x:.4f}" for x in p["log_ppl"]]],
            ["w", *_cells("w", p["w"])],
            ["factor 1 - alpha w", *_cells("multiplier", p["multiplier"])],
            ["reward", *[f"{x:g}" for x in p["rewards"]]],
            ["GRPO advantage", *_cells("advantage", p["advantage"])],
            ["shaped advantage", *_cells("shaped", p["shaped"])]]
    parts.append(_table(["completion", *[str(i + 1) for i in range(G)]], rows))
    win = q["window"]
    active = "active" if q["active"] else "inactive"
    parts.append(f"<h3>Position shaping (gamma = {q['gamma']:g}, m = {q['m']:g}, n = {q['n']:g}, "
                 f"d = {q['d']:g}, cap = {q['cap']:g})</h3>"
                 f"<p>A_t + sign(A) min(gamma sigmoid(d m (l_t + n)), cap |A|) with l_t = (t-1)/L; "
                 f"window {esc('always' if win is None else f'{win[0]} < step < {win[1]}')}, "
                 f"step {esc(q['step'])}: <b data-field=\"position_active\">{active}</b>.</p>")
    L = len(q["rel"])
    idx = list(range(L)) if L <= 20 else sorted({round(i * (L - 1) / 19) for i in range(20)})
    rows = [["l_t", *[f"{q['rel'][i]:.3f}" for i in idx]],
            ["bias", *[f'<span data-field="bias-{i}">{q["bias"][i]:.4f}</span>' for i in idx]],
            ["A = +1 becomes", *[f'<span data-field="pos-{i}">{q["positive"][i]:.4f}</span>'
                                 for i in idx]],
            ["A = -1 becomes", *[f'<span data-field="neg-{i}">{q["negative"][i]:.4f}</span>'
                                 for i in idx]]]
    parts.append(_table(["token t", *[str(i + 1) for i in idx]], rows))
    parts.append(_svg_curve(q["rel"], q["bias"]))
    parts.append(f"<h3>Pass@k advantage (k = {k['k']})</h3>"
                 f"<p>Group of n = {k['n']} with c = {k['c']} correct: rho = pass@k = "
                 f"{_field('rho', _f(k['rho']))}; each completion's advantage is the mean "
                 "normalized advantage of the k-subsets that contain it (Chen et al., \"Pass@k "
                 "Training for Adaptively Balancing Exploration and Exploitation of Large "
                 "Reasoning Models\", arXiv 2508.10751). k = 1 is GRPO with the population std.</p>")
    rows = [["reward", *[f"{x:g}" for x in k["rewards"]]],
            [f"pass@{k['k']} advantage", *_cells("passk", k["advantage"])],
            ["k = 1 (GRPO)", *_cells("passk1", k["advantage_k1"])]]
    parts.append(_table(["completion", *[str(i + 1) for i in range(k["n"])]], rows))
    return '<div class="rb-out" data-mode="shaping">' + "".join(parts) + "</div>"
