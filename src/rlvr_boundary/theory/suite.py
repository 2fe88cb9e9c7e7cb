"""The fixed-seed verification suite of the theory lab.

Every claim is checked on a stated number of instances drawn with fixed seeds
(one ``numpy.random.default_rng(SEED + i)`` per claim, so claims do not depend
on each other's draws). Three kinds of claim:

- ``theorem``: must hold on every instance; PASS, or FAIL with the first
  counterexample in ``details``;
- ``anchor``: a published figure (the Omni-MATH curves) recomputed with our
  code; PASS when we get the paper's numbers;
- ``measured``: a property the paper reports from simulations (GRPO close to
  the tilt, a single crossing under preserved difficulty order). Reported with
  its figure and the counterexamples found, status MEASURED, never tuned to
  pass; where the paper's figure is not reproduced the figure says so.

The instance families are fixed in code before any run (generators, sizes,
parameter grids below); ``quick=True`` runs the same claims on about a tenth
of the instances (at least 10), for CI.

Deviation from the paper: its pack checks 34 figures of its own text; we check
the claims the paper states, with the instance counts it reports, and add the checks
that make our implementation trustworthy (independent mirror steps, exact
vertex enumeration against the frontier LP, the exact GRPO/tilt identity).
"""

from __future__ import annotations

import time
from collections import Counter

import numpy as np

from rlvr_boundary.core.compare import first_negative, grid_crossings, price
from rlvr_boundary.theory import crossings as C
from rlvr_boundary.theory import generators as G
from rlvr_boundary.theory.frontier import achieved_floor, best_at_floor, best_at_floor_brute
from rlvr_boundary.theory.grpo import GRPOSettings, simulate_grpo, tv_to_tilt
from rlvr_boundary.theory.model import (
    mirror_descent,
    mirror_step_numeric,
    pass1,
    pass1_gradient_fd,
    success,
    tilt,
    tv,
)
from rlvr_boundary.theory.specialization import (
    dominance_margin,
    equalizing_weights_from_blocks,
    is_exclusive,
    three_by_three,
)
from rlvr_boundary.theory.stiemke import alternative, check_direction, check_weights, free_lunch_direction

SEED = 20260003

#: Omni-MATH, Qwen2.5-7B base vs GRPO (limit-of-RLVR table, quoted by the No Free Lunch paper).
OMNI_MATH = {"ks": [1, 4, 16, 64, 256],
             "base": [0.102, 0.224, 0.392, 0.578, 0.691],
             "grpo": [0.251, 0.368, 0.496, 0.608, 0.683]}

#: The paper's simulation figure for GRPO vs the tilt at matched entropy.
PAPER_TV = 3e-4


def _n(full: int, quick: bool) -> int:
    return max(10, full // 10) if quick else full


def _claim(name, kind, instances, figure, ok, details=None, seconds=0.0) -> dict:
    status = "MEASURED" if kind == "measured" else ("PASS" if ok else "FAIL")
    return {"claim": name, "kind": kind, "instances": int(instances), "figure": figure,
            "status": status, "details": details or {}, "seconds": round(seconds, 2)}


def _tilt_has_price(F, pi0, beta) -> bool:
    """A tilt step that raises pass@1 lowers some prompt (True also when it gains nothing)."""
    pb = tilt(pi0, F, beta)
    delta = success(F, pb) - success(F, pi0)
    return not (delta.mean() > 1e-12) or bool(delta.min() < -1e-15)


# --------------------------------------------------------------------------- theorems

def claim_exclusive(quick: bool) -> dict:
    t0, rng, n = time.perf_counter(), np.random.default_rng(SEED + 1), _n(1000, quick)
    held, bad = 0, None
    for _ in range(n):
        S = int(rng.integers(2, 7))
        F, pi0 = G.exclusive_blocks(rng, S=S, X=int(rng.integers(2 * S, 4 * S + 1)))
        ok = (is_exclusive(F) and free_lunch_direction(F) is None
              and _tilt_has_price(F, pi0, float(rng.uniform(0.1, 50))))
        held += ok
        bad = bad if ok or bad is not None else {"F": F.tolist(), "pi0": pi0.tolist()}
    return _claim("no free lunch under exclusive specialization", "theorem", n,
                  f"{held}/{n}: no free-lunch direction, and the tilt's pass@1 gain lowers some prompt",
                  held == n, {"counterexample": bad}, time.perf_counter() - t0)


def claim_dominant(quick: bool) -> dict:
    t0, rng, n = time.perf_counter(), np.random.default_rng(SEED + 2), _n(2000, quick)
    held, bad, margins = 0, None, []
    for _ in range(n):
        S = int(rng.integers(2, 7))
        delta = float(rng.choice([0.02, 0.05, 0.1, 0.2]))
        F, pi0, blocks = G.dominant(rng, S=S, X=int(rng.integers(S, 5 * S + 1)), delta=delta)
        m = dominance_margin(F, blocks)
        margins.append(m)
        ok = (m >= delta - 1e-12 and check_weights(F, equalizing_weights_from_blocks(F, blocks))
              and free_lunch_direction(F) is None
              and _tilt_has_price(F, pi0, float(rng.uniform(0.1, 50))))
        held += ok
        bad = bad if ok or bad is not None else {"F": F.tolist(), "blocks": blocks.tolist()}
    return _claim("no free lunch under dominant specialization of strength delta", "theorem", n,
                  f"{held}/{n}: block weights certify each, no free-lunch direction, tilt pays "
                  f"(margins {min(margins):.3f}..{max(margins):.3f})",
                  held == n, {"counterexample": bad}, time.perf_counter() - t0)


def claim_stiemke(quick: bool) -> dict:
    t0, rng = time.perf_counter(), np.random.default_rng(SEED + 3)
    per = _n(200, quick)
    by_gen, total, agree, bad = {}, 0, 0, None
    for name, gen in G.GENERATORS.items():
        ok_here, lunches = 0, 0
        for _ in range(per):
            F, _ = gen(rng)
            res = alternative(F)
            ok = res["exactly_one"] and res["certificate_ok"]
            ok_here += ok
            lunches += res["free_lunch"]
            bad = bad if ok or bad is not None else {"generator": name, "F": F.tolist()}
        by_gen[name] = {"instances": per, "agree": ok_here, "free_lunch": lunches}
        total += per
        agree += ok_here
    mix = ", ".join(f"{k} {v['free_lunch']}/{per}" for k, v in by_gen.items())
    return _claim("Stiemke alternative: exactly one of a free lunch / strictly positive "
                  "equalizing weights, certificate re-checked", "theorem", total,
                  f"{agree}/{total} ({100 * agree / total:.1f}%) across six generators; "
                  f"free lunches: {mix}", agree == total,
                  {"by_generator": by_gen, "counterexample": bad}, time.perf_counter() - t0)


def claim_counterexample(quick: bool) -> dict:
    t0 = time.perf_counter()
    F = three_by_three()
    firsts = all(np.any(F[s] > np.delete(F, s, axis=0).max(axis=0)) for s in range(3))
    res = alternative(F)
    d = res["direction"]
    gain = F.T @ np.array([-0.5, -0.5, 1.0])
    ok = (firsts and res["free_lunch"] and check_direction(F, d)
          and np.allclose(gain, 0.1, atol=1e-12) and not is_exclusive(F))
    return _claim("3x3 counterexample: every strategy ranks first somewhere, yet a free lunch exists",
                  "theorem", 1, f"LP direction {np.round(d, 3).tolist() if d is not None else None}; "
                  f"F^T(-1/2, -1/2, 1) = {np.round(gain, 12).tolist()}", ok, {},
                  time.perf_counter() - t0)


def claim_bound(quick: bool) -> dict:
    t0, rng, n = time.perf_counter(), np.random.default_rng(SEED + 4), _n(3000, quick)
    viol, worst, bad = 0, 0, None
    hist: Counter = Counter()
    gens = list(G.GENERATORS.values())
    for i in range(n):
        if i % 3 == 2:  # order-preserving monotone maps: large V, several crossings
            pb, pr = C.monotone_instance(rng, knots=int(rng.integers(1, 6)), prompts=40)
        else:
            F, pi0 = gens[i % len(gens)](rng)
            other = (tilt(pi0, F, float(rng.uniform(0.5, 50))) if i % 3 == 0
                     else rng.dirichlet(np.ones(F.shape[0])))
            pb, pr = success(F, pi0), success(F, other)
        cs = C.crossing_stats(pb, pr)
        c, b = cs["crossings"], cs["bound"]
        hist[c] += 1
        if c > b:
            viol += 1
            bad = bad or {"p_base": pb.tolist(), "p_rl": pr.tolist(), "crossings": c, "bound": b}
        worst = max(worst, c)
    return _claim("observed crossings never exceed the sign-change bound (real k >= 0.01)",
                  "theorem", n, f"{viol} violations in {n} instances; most crossings seen {worst}",
                  viol == 0, {"crossings_histogram": {str(k): v for k, v in sorted(hist.items())},
                              "counterexample": bad}, time.perf_counter() - t0)


def claim_constructed(quick: bool) -> dict:
    t0 = time.perf_counter()
    got = {}
    for m in range(1, 7):
        pb, pr = C.constructed(m, prompts=50_000 if quick else 200_000)
        got[m] = C.crossing_stats(pb, pr)
    ok = all(v["crossings"] == m == v["bound"] for m, v in got.items())
    return _claim("constructed instances with exactly 1..6 crossings (bound attained)", "theorem", 6,
                  ", ".join(f"m={m}: {v['crossings']} (bound {v['bound']})" for m, v in got.items()),
                  ok, {str(m): v for m, v in got.items()}, time.perf_counter() - t0)


def claim_strict_floor(quick: bool) -> dict:
    t0, rng, n = time.perf_counter(), np.random.default_rng(SEED + 5), _n(400, quick)
    gens = list(G.GENERATORS.items())
    gains, spec_gains, crossed, worst_drop, mismatch = [], [], 0, 0.0, 0
    for i in range(n):
        name, gen = gens[i % len(gens)]
        F, pi0 = gen(rng)
        pi = best_at_floor(F, pi0, 1.0)
        pb, pr = success(F, pi0), success(F, pi)
        worst_drop = max(worst_drop, float((pb - pr).max()))
        # HiGHS meets constraints to ~1e-9: a prompt that moves by less is solver noise.
        # Snap it back, else a 1e-12 drop on the hardest prompt is a "crossing" at k ~ 1e12.
        pr = np.where(np.abs(pr - pb) < 1e-9, pb, pr)
        crossed += C.count_crossings(pb, pr, tol=1e-9) > 0
        g = pass1(F, pi) - pass1(F, pi0)
        gains.append(g)
        # pi0 is interior, so a gain at tau = 1 exists exactly when a free lunch does
        mismatch += (g > 1e-7) != (free_lunch_direction(F) is not None)
        if name in ("exclusive_blocks", "dominant"):
            spec_gains.append(g)
    med = float(np.median(gains))
    ok = crossed == 0 and max(abs(g) for g in spec_gains) < 1e-8 and mismatch == 0
    return _claim("strict floor tau = 1: zero crossings; zero gain under specialization; "
                  "a gain only where a free lunch exists", "theorem", n,
                  f"{crossed} with a crossing; median pass@1 gain {med:.1e} (all {n}); "
                  f"max |gain| under specialization {max(map(abs, spec_gains)):.1e}; "
                  f"gain>0 vs free lunch disagree on {mismatch}; largest per-prompt drop "
                  f"{worst_drop:.1e} (LP tolerance)", ok,
                  {"median_gain_all": med, "share_positive_gain": float(np.mean(np.array(gains) > 1e-7)),
                   "largest_prompt_drop": worst_drop}, time.perf_counter() - t0)


def claim_support(quick: bool) -> dict:
    t0, rng, n = time.perf_counter(), np.random.default_rng(SEED + 6), _n(300, quick)
    held, bad = 0, None
    for i in range(n):
        F, pi0 = G.uniform(rng, S=5, X=12)
        F[:, rng.random(12) < 0.3] = 0.0  # prompts nobody solves
        pi0[rng.random(5) < 0.4] = 0.0
        if pi0.sum() == 0:
            pi0[int(rng.integers(5))] = 1.0
        pi0 /= pi0.sum()
        zero = pi0 == 0
        pis = [tilt(pi0, F, b) for b in (0.5, 5, 50, 500)]
        for st in (GRPOSettings(steps=60), GRPOSettings(steps=60, natural=True, std_norm=False),
                   GRPOSettings(steps=60, expected=True, lr=5.0)):
            pis.append(simulate_grpo(F, pi0, st, rng)[-1])
        base_support = success(F, pi0) > 0
        ok = all(np.all(p[zero] == 0) and np.all((success(F, p) > 0) <= base_support) for p in pis)
        held += ok
        bad = bad if ok or bad is not None else {"F": F.tolist(), "pi0": pi0.tolist()}
    return _claim("support preservation: tilt and on-policy GRPO never give mass outside the base's "
                  "support, so asymptotic pass@k never exceeds the base's", "theorem", n,
                  f"{held}/{n} instances (4 tilts and 3 GRPO runs each)", held == n,
                  {"counterexample": bad}, time.perf_counter() - t0)


def claim_mirror_descent(quick: bool) -> dict:
    t0, rng, n = time.perf_counter(), np.random.default_rng(SEED + 7), _n(200, quick)
    worst_closed, worst_prox = 0.0, 0.0
    n_prox = 5 if quick else 40  # the numeric prox costs ~30 ms a step
    for i in range(n):
        S = int(rng.integers(2, 7))
        F, pi0 = G.uniform(rng, S=S, X=int(rng.integers(2, 15)))
        eta, steps = float(rng.uniform(0.1, 2)), int(rng.integers(1, 8))
        target = tilt(pi0, F, eta * steps)
        worst_closed = max(worst_closed, float(np.abs(mirror_descent(pi0, F, eta, steps)[-1] - target).max()))
        if i < n_prox:
            pi = pi0
            for _ in range(steps):  # the proximal problem, solved numerically, numeric gradient
                pi = mirror_step_numeric(pi, pass1_gradient_fd(F, pi), eta)
            worst_prox = max(worst_prox, float(np.abs(pi - target).max()))
    return _claim("the exponential tilt equals entropic mirror descent on pass@1", "theorem", n,
                  f"max |tilt - closed-form steps| {worst_closed:.1e}; max |tilt - numerically "
                  f"solved KL-prox steps| {worst_prox:.1e} (first {min(n, n_prox)} instances)",
                  worst_closed < 1e-12 and worst_prox < 1e-6, {}, time.perf_counter() - t0)


def claim_natural_drgrpo(quick: bool) -> dict:
    t0, rng, n = time.perf_counter(), np.random.default_rng(SEED + 8), _n(200, quick)
    worst = 0.0
    for i in range(n):
        F, pi0 = G.GENERATORS[list(G.GENERATORS)[i % 6]](rng)
        st = GRPOSettings(lr=float(rng.uniform(0.05, 2)), steps=int(rng.integers(1, 100)),
                          expected=True, natural=True, std_norm=False)
        worst = max(worst, tv(simulate_grpo(F, pi0, st)[-1], tilt(pi0, F, st.lr * st.steps)))
    return _claim("expected natural-gradient Dr. GRPO is the tilt: after t steps of size lr, "
                  "pi = pi_beta with beta = lr * t", "theorem", n, f"max TV {worst:.1e}",
                  worst < 1e-10, {}, time.perf_counter() - t0)


def claim_frontier(quick: bool) -> dict:
    t0, rng, n = time.perf_counter(), np.random.default_rng(SEED + 9), _n(200, quick)
    taus = np.array([0.0, 0.25, 0.5, 0.75, 0.9, 1.0])
    worst_lp, worst_mono, worst_tilt = 0.0, 0.0, 0.0
    for i in range(n):
        S, X = int(rng.integers(2, 5)), int(rng.integers(2, 6))
        name = list(G.GENERATORS)[i % 6]
        if name == "exclusive_blocks":
            F, pi0 = G.exclusive_blocks(rng, S=S, X=max(X, S), per=1)
        elif name == "dominant":
            F, pi0, _ = G.dominant(rng, S=S, X=max(X, S))
        else:
            F, pi0 = G.GENERATORS[name](rng, S=S, X=max(X, S))
        lp = np.array([pass1(F, best_at_floor(F, pi0, t)) for t in taus])  # (T,)
        brute = np.array([best_at_floor_brute(F, pi0, t) for t in taus])
        worst_lp = max(worst_lp, float(np.abs(lp - brute).max()))
        worst_mono = max(worst_mono, float(np.diff(lp).max()))
        pb = tilt(pi0, F, float(rng.uniform(0.1, 30)))
        best = pass1(F, best_at_floor(F, pi0, achieved_floor(F, pi0, pb)))
        worst_tilt = max(worst_tilt, pass1(F, pb) - best)
    ok = worst_lp < 1e-7 and worst_mono < 1e-9 and worst_tilt < 1e-9
    return _claim("price frontier LP: equals vertex enumeration, non-increasing in tau, never "
                  "beaten by the tilt at the tilt's own floor", "theorem", n,
                  f"max |LP - brute force| {worst_lp:.1e} over 6 floors; largest rise in tau "
                  f"{worst_mono:.1e}; largest tilt excess {worst_tilt:.1e}", ok, {},
                  time.perf_counter() - t0)


def claim_anchor(quick: bool) -> dict:
    t0 = time.perf_counter()
    ks = np.array(OMNI_MATH["ks"])
    d = np.round(np.array(OMNI_MATH["grpo"]) - np.array(OMNI_MATH["base"]), 3)  # typed to 3 decimals
    cr = grid_crossings(ks, d)
    pr, pk = price(ks, d)
    kstar = first_negative(ks, d)
    ok = (len(cr) == 1 and cr[0]["k_before"] == 64 and cr[0]["k_after"] == 256
          and abs(pr - 0.008) < 1e-12 and pk == 256 and kstar == 256 and abs(d[0] - 0.149) < 1e-12)
    return _claim("Omni-MATH anchor (Qwen2.5-7B base vs GRPO): one crossing between k = 64 and 256, "
                  "price .008 at 256", "anchor", 1,
                  f"D(k) = {d.tolist()}; {len(cr)} crossing between {cr[0]['k_before']} and "
                  f"{cr[0]['k_after']} (log-k interpolation {cr[0]['k_continuous']:.0f}); price "
                  f"{pr:.3f} at k = {pk}", ok, {"crossings": cr, "price": pr, "price_k": pk},
                  time.perf_counter() - t0)


# --------------------------------------------------------------------------- measured

def measure_grpo(quick: bool) -> dict:
    """TV between GRPO and the tilt at matched entropy, over a grid of settings."""
    t0, rng = time.perf_counter(), np.random.default_rng(SEED + 10)
    per = 1 if quick else 6
    steps = 100 if quick else 200
    rows = []
    for mode in ("expected", "group 4", "group 16"):
        for natural in (False, True):
            for std_norm in (True, False):
                for lr in (0.05, 0.5):
                    for start in ("uniform", "random"):
                        final, peak = [], []
                        for _ in range(per):
                            F, pi0 = G.uniform(rng, S=4, X=12)
                            if start == "uniform":
                                pi0 = np.full(4, 0.25)
                            st = GRPOSettings(lr=lr, group=16 if mode == "group 16" else 4,
                                              steps=steps, std_norm=std_norm, natural=natural,
                                              expected=mode == "expected")
                            path = simulate_grpo(F, pi0, st, rng)  # (steps + 1, S)
                            tvs = [tv_to_tilt(F, pi0, path[j])["tv"]
                                   for j in range(steps // 5, steps + 1, steps // 5)]  # 5 checkpoints
                            final.append(tvs[-1])
                            peak.append(max(tvs))
                        rows.append({"mode": mode, "update": "natural" if natural else "softmax",
                                     "std_norm": std_norm, "lr": lr, "start": start,
                                     "tv_final_median": float(np.median(final)),
                                     "tv_max": float(np.max(peak))})

    def med(**kw):
        sel = [r["tv_final_median"] for r in rows if all(r[k] == v for k, v in kw.items())]
        return float(np.median(sel))

    within = [r for r in rows if r["tv_max"] <= PAPER_TV]
    groups = {"exact tilt dynamics (expected, natural, no std)":
              med(mode="expected", update="natural", std_norm=False),
              "expected, softmax, no std (pi_s factor only)": med(mode="expected", update="softmax",
                                                                  std_norm=False),
              "expected, natural, std norm (prompt reweighting only)":
              med(mode="expected", update="natural", std_norm=True),
              "expected, softmax, std norm (GRPO in expectation)":
              med(mode="expected", update="softmax", std_norm=True),
              "sampled GRPO (softmax, std norm, groups 4 and 16)":
              float(np.median([r["tv_final_median"] for r in rows if r["mode"] != "expected"
                               and r["update"] == "softmax" and r["std_norm"]]))}
    figure = ("median final TV: " + "; ".join(f"{k} {v:.2g}" for k, v in groups.items())
              + f". {len(within)}/{len(rows)} settings stay within the paper's {PAPER_TV:g} along "
              "the whole run (" + (", ".join(sorted({f"{r['mode']}/{r['update']}/std={r['std_norm']}"
                                                    for r in within})) or "none")
              + "): the paper's figure holds for the tilt's own dynamics, not for GRPO in general")
    return _claim("GRPO vs tilt at matched entropy (total variation), 48 settings", "measured",
                  len(rows) * per, figure, True, {"by_mechanism": groups, "settings": rows},
                  time.perf_counter() - t0)


def measure_order(quick: bool) -> dict:
    """Family A: single crossing under a difficulty-order-preserving sharpening.

    Instances fall in three cases fixed by the theory, not by the outcome:
    ``gain_and_loss`` (pass@1 rises and some prompt loses: the claim predicts
    exactly one crossing), ``all_gain`` (no prompt loses: no price, predicted
    0 crossings), ``no_gain`` (pass@1 does not rise: outside the claim, counted).
    """
    t0, rng = time.perf_counter(), np.random.default_rng(SEED + 11)
    a_vals, b_vals = np.linspace(1.1, 4.0, 9), np.linspace(-1.0, 1.0, 5)
    draws = 2 if quick else 23  # 9 * 5 * 23 = 1035
    hist = {"gain_and_loss": Counter(), "all_gain": Counter(), "no_gain": Counter()}
    counter, vs, beyond = [], [], 0
    for a in a_vals:
        for b in b_vals:
            for _ in range(draws):
                pb, pr = C.sharpening_instance(rng, float(a), float(b))
                cs = C.crossing_stats(pb, pr, C.BUDGET_K)
                c = cs["crossings"]
                beyond += cs["beyond_grid"]
                vs.append(cs["V"])
                case = ("no_gain" if pr.mean() <= pb.mean()
                        else "gain_and_loss" if np.any(pr < pb) else "all_gain")
                hist[case][c] += 1
                wrong = (case == "gain_and_loss" and c != 1) or (case == "all_gain" and c != 0)
                if wrong or c > 1:
                    counter.append({"a": float(a), "b": float(b), "case": case, "crossings": c,
                                    "pass1_gain": float(pr.mean() - pb.mean()),
                                    "p_base": pb.tolist(), "p_rl": pr.tolist()})
    n = sum(sum(h.values()) for h in hist.values())
    gl = hist["gain_and_loss"]
    fmt = lambda h: "{" + ", ".join(f"{k}: {v}" for k, v in sorted(h.items())) + "}"  # noqa: E731
    return _claim("single crossing under preserved difficulty order (family A: logit-affine "
                  "sharpening with one fixed point; budgets k >= 1)", "measured", n,
                  f"pass@1 up and some prompt down: {gl.get(1, 0)}/{sum(gl.values())} cross exactly "
                  f"once; every prompt up: crossings {fmt(hist['all_gain'])}; pass@1 not up: "
                  f"crossings {fmt(hist['no_gain'])}; counterexamples {len(counter)}; last "
                  f"crossing past k = 1e6 in {beyond}; sign-change bound V median "
                  f"{int(np.median(vs))} (order does not bound V)", True,
                  {"histograms": {k: {str(c): v for c, v in sorted(h.items())} for k, h in hist.items()},
                   "counterexamples": counter[:5], "counterexample_count": len(counter)},
                  time.perf_counter() - t0)


def measure_monotone(quick: bool) -> dict:
    """Family B: any increasing map; order preserved, gains and losses may alternate."""
    t0, rng, n = time.perf_counter(), np.random.default_rng(SEED + 12), _n(500, quick)
    hist: Counter = Counter()
    counter = []
    for _ in range(n):
        pb, pr = C.monotone_instance(rng, knots=int(rng.integers(1, 6)))
        cs = C.crossing_stats(pb, pr, C.BUDGET_K)
        c = cs["crossings"]
        hist[c] += 1
        if c > 1 and len(counter) < 5:
            counter.append({"crossings": c, "bound": cs["bound"],
                            "p_base": pb.tolist(), "p_rl": pr.tolist()})
    multi = sum(v for k, v in hist.items() if k > 1)
    return _claim("order preservation alone (family B: random increasing maps with several fixed "
                  "points)", "measured", n,
                  f"{hist.get(1, 0)}/{n} cross once, {multi} cross more than once (counterexamples "
                  "to 'order preserved => one crossing'); histogram "
                  + ", ".join(f"{k}: {v}" for k, v in sorted(hist.items())), True,
                  {"histogram": {str(k): v for k, v in sorted(hist.items())},
                   "counterexamples": counter}, time.perf_counter() - t0)


CLAIMS = [claim_exclusive, claim_dominant, claim_stiemke, claim_counterexample, claim_bound,
          claim_constructed, claim_strict_floor, claim_support, claim_mirror_descent,
          claim_natural_drgrpo, claim_frontier, claim_anchor,
          measure_grpo, measure_order, measure_monotone]


def run_suite(quick: bool = False, progress=None) -> list[dict]:
    """Run every claim in order.

    Parameters
    ----------
    quick
        About a tenth of the instances per claim (at least 10).
    progress
        Optional ``progress(name)`` called before each claim.

    Returns
    -------
    list of dict
        One dict per claim: ``claim``, ``kind``, ``instances``, ``figure``,
        ``status`` (PASS / FAIL / MEASURED), ``details``, ``seconds``.
    """
    out = []
    for fn in CLAIMS:
        if progress:
            progress(fn.__name__)
        out.append(fn(quick))
    return out
