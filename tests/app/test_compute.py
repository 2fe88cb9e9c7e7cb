"""The app's compute layer: real data, CLI-identical errors, limits, shaping values.

No Gradio needed: these call :mod:`rlvr_boundary.app.compute` the way the page does.
"""

from __future__ import annotations

import gzip
import json
import zipfile
import math
import re
import time

import numpy as np
import pytest

from rlvr_boundary.app import compute as C
from rlvr_boundary.app.compute import PASTE_SOURCE, AppLimitError
from rlvr_boundary.errors import InputError
from rlvr_boundary.examples import example_files


@pytest.fixture(scope="module")
def deepscaler():
    ex = example_files("deepscaler32k")
    base = {r["id"]: r for r in map(json.loads, ex["base"].read_text().splitlines())}
    rl = {r["id"]: r for r in map(json.loads, ex["rl"].read_text().splitlines())}
    ids = sorted(base)
    return [(base[i]["c"], base[i]["n"], rl[i]["c"], rl[i]["n"]) for i in ids]


# --------------------------------------------------------------------------- parsing


def test_paste_kind_detection():
    assert C.paste_kind("3/8, 5/8\n1/8 0/8\n", "auto") == "counts"
    assert C.paste_kind("c_b n_b c_r n_r\n3 8 5 8\n", "auto") == "counts"
    assert C.paste_kind("0.5 0.7\n0.1 0.0\n", "auto") == "auto"  # the price tool decides
    assert C.paste_kind(C.OMNI_MATH_CURVE, "auto") == "auto"
    assert C.paste_kind("anything", "rates") == "rates"
    with pytest.raises(InputError, match="unknown input kind"):
        C.paste_kind("1 2", "percent")


def test_count_pairs_two_forms_agree():
    h1, a = C.read_count_pairs("base, RL\n3/8, 5/8\n0/8, 1/8\n")
    h2, b = C.read_count_pairs("3\t8\t5\t8\n0\t8\t1\t8\n")
    assert h1 == ["base", "RL"] and h2 is None
    assert a == b == [(3, 8, 5, 8), (0, 8, 1, 8)]


@pytest.mark.parametrize("text, line, needle", [
    ("3/8 5/8\n9/8 1/8\n", 2, "c must satisfy 0 <= c <= n (base: c = 9, n = 8)"),
    ("3/8 5/8\n1/0 1/8\n", 2, "n must be >= 1"),
    ("3/8 5/8\nx/8 1/8\n", 2, "expected an integer c"),
    ("3/8 5/8\n2.5/8 1/8\n", 2, "expected an integer c"),
    ("3/8 5/8\n3 8 5 8\n", 2, "mixed row forms"),
    ("3/8 5/8 1/8\n", 1, "expected 2 cells"),
    ("1 2 3 4\n1 2 3\n", 2, "4 columns"),
])
def test_count_pair_errors_name_the_line(text, line, needle):
    with pytest.raises(InputError) as err:
        C.read_count_pairs(text)
    assert err.value.line == line and err.value.path == PASTE_SOURCE
    assert needle in str(err.value)


def test_rate_errors_are_the_cli_errors(tmp_path):
    """A malformed paste gets the message ``rlvr-boundary price`` prints for that file."""
    from rlvr_boundary.pipelines.price import PriceOptions
    from rlvr_boundary.analysis.price import diagnose
    from rlvr_boundary.io.formats import read_price_table

    def cli_price(path):  # what ``rlvr-boundary price FILE`` runs
        opts = PriceOptions()
        kind, _, values, source = read_price_table(path, opts.kind)
        try:
            return diagnose(kind, values, opts)
        except InputError as exc:
            exc.path = exc.path or source
            exc.args = (str(exc),)
            raise

    for text in ("0.5 0.6\nabc 0.3\n", "0.5 0.6\n1.5 0.2\n", "0.5 0.6 0.7 0.1 0.2\n",
                 "k a b\n4 .2 .3\n1 .1 .2\n"):
        f = tmp_path / "t.txt"
        f.write_text(text)
        with pytest.raises(InputError) as cli:
            cli_price(str(f))
        with pytest.raises(InputError) as app:
            C.paste_job(text, "auto", ("", ""), {"bootstrap": 10}, str(tmp_path))
        assert str(app.value) == str(cli.value).replace(str(f), PASTE_SOURCE)


# --------------------------------------------------------------------------- jobs on real data


@pytest.mark.slow  # the whole report with figures: ~10-30 s on a loaded two-core machine
def test_paste_deepscaler_counts_matches_published_figures(deepscaler, tmp_path):
    text = "".join(f"{cb}/{nb}, {cr}/{nr}\n" for cb, nb, cr, nr in deepscaler)
    res = C.paste_job(text, "auto", ("base", "RL"), {"bootstrap": 200}, str(tmp_path))
    assert res["mode"] == "audit"
    c = res["audit"]["comparisons"]["RL"]
    # Published: the difference changes sign between k = 21 and 22; largest loss 0.0198 at 128.
    assert c["k_star"] == 22 and c["price_k"] == 128
    assert c["price"] == pytest.approx(0.0198, abs=5e-5)
    assert res["audit"]["coverage"]["solved"] == {"base": 944, "RL": 923}
    for f in res["files"]:
        assert (tmp_path / f.rsplit("/", 1)[-1]).is_file()
    assert set(res["svgs"]) >= {"passk", "difference"}
    from rlvr_boundary.app import render

    page = render.result(res)  # B = 200 is too few for the printed digits: the page says so
    assert re.search(r'data-field="mc_error">B = 200 multipliers: .* not below half', page)
    assert all(v.startswith("<svg") for v in res["svgs"].values())
    # No PNG or PDF until a download asks for them; then from the result JSON, not recomputed.
    assert not list(tmp_path.rglob("*.png")) and not list(tmp_path.rglob("*.pdf"))
    figs = C.figures_job(str(tmp_path), str(tmp_path / "dl"))
    with zipfile.ZipFile(figs["files"][0]) as zf:
        names = set(zf.namelist())
    assert {"figures/passk.png", "figures/passk.pdf", "figures/difference.png",
            "figures/difference.pdf"} <= names


def test_paste_decimal_rates_match_a_brute_force_rate_curve(deepscaler, tmp_path):
    text = "".join(f"{cb / nb!r} {cr / nr!r}\n" for cb, nb, cr, nr in deepscaler)
    res = C.paste_job(text, "auto", ("", ""), {"bootstrap": 10, "ks_rates": "1-256"},
                      str(tmp_path))
    r = res["result"]
    assert res["mode"] == "price" and r["input_kind"] == "rates"
    # Brute force: D(k) = mean over prompts of (1 - p_rl)^... as plain loops.
    diffs = []
    for k in range(1, 257):
        d = sum((1 - (1 - cr / nr) ** k) - (1 - (1 - cb / nb) ** k)
                for cb, nb, cr, nr in deepscaler) / len(deepscaler)
        diffs.append(d)
    k_star = next(k for k, d in enumerate(diffs, start=1) if d < 0)
    assert r["k_star"] == k_star == 24  # plug-in rate curves cross later than the unbiased ones
    j = int(np.argmax(-np.array(diffs)))
    assert r["price"] == pytest.approx(-diffs[j], abs=1e-12) and r["price_k"] == j + 1


def test_omni_math_points_equal_the_cli_result(tmp_path):
    from rlvr_boundary.cli import main

    f = tmp_path / "omni.csv"
    f.write_text(C.OMNI_MATH_CURVE)
    assert main(["price", str(f), "--json", str(tmp_path / "cli.json")]) == 0
    cli = json.loads((tmp_path / "cli.json").read_text())
    res = C.paste_job(C.OMNI_MATH_CURVE, "auto", ("", ""), {"bootstrap": 10}, str(tmp_path))
    app = json.loads((tmp_path / "price.json").read_text())
    assert res["result"]["crossing_intervals"] == [[64, 256]] == cli["crossing_intervals"]
    for key in ("k_star", "price", "price_k", "crossings", "diff", "schema_version", "kind"):
        assert app[key] == cli[key], key
    assert res["svgs"]["price"].startswith("<svg") and not list(tmp_path.rglob("*.png"))
    figs = C.figures_job(str(tmp_path), str(tmp_path / "dl"))
    with zipfile.ZipFile(figs["files"][0]) as zf:
        assert set(zf.namelist()) == {"figures/price.png", "figures/price.pdf"}
        assert zf.read("figures/price.png")[:8] == b"\x89PNG\r\n\x1a\n"
        assert zf.read("figures/price.pdf")[:5] == b"%PDF-"


def test_upload_job_names_the_file_as_uploaded(tmp_path):
    bad = tmp_path / "tmpxyz123"  # a server-side temporary name
    bad.write_text('{"id": "a", "c": 1, "n": 4}\n{"id": "b", "c": 7, "n": 4}\n')
    ok = tmp_path / "tmpabc"
    ok.write_text('{"id": "a", "c": 1, "n": 4}\n{"id": "b", "c": 2, "n": 4}\n')
    run = tmp_path / "run"
    run.mkdir()
    with pytest.raises(InputError) as err:
        C.files_job([(str(bad), "my base.jsonl"), (str(ok), "rl.jsonl")], {"bootstrap": 10},
                    (10**6, 1000), str(run))
    assert str(err.value).startswith("my base.jsonl:2, field 'c'")
    assert str(tmp_path) not in str(err.value)


def test_upload_job_on_deepscaler_files_labels_by_file_name(tmp_path):
    ex = example_files("deepscaler32k")
    res = C.files_job([(str(ex["base"]), "base.jsonl"), (str(ex["rl"]), "rl.jsonl")],
                      {"bootstrap": 200}, (10**7, 10**5), str(tmp_path))
    a = res["audit"]
    assert a["base"] == "base" and a["checkpoints"] == ["rl"]
    assert a["comparisons"]["rl"]["k_star"] == 22


# --------------------------------------------------------------------------- limits


def test_paste_limits():
    with pytest.raises(InputError, match="nothing pasted"):
        C.check_paste("  \n", 100, 10)
    with pytest.raises(AppLimitError, match="1,001 characters"):
        C.check_paste("x" * 1001, 1000, 10)
    with pytest.raises(AppLimitError, match="at most 10"):
        C.check_paste("1 2\n" * 11, 10**6, 10)
    C.check_paste("1 2\n" * 9, 10**6, 10)


def test_upload_limits(tmp_path):
    f = tmp_path / "x.jsonl"
    f.write_text('{"id": 1, "c": 1, "n": 2}\n' * 50)
    C.check_upload(f, "x.jsonl", 10**6, 50)
    with pytest.raises(AppLimitError, match="more than 49 rows"):
        C.check_upload(f, "x.jsonl", 10**6, 49)
    with pytest.raises(AppLimitError, match="at most 0.0 MB"):
        C.check_upload(f, "x.jsonl", 10, 50)
    with pytest.raises(InputError, match="unsupported file type"):
        C.check_upload(f, "x.pkl", 10**6, 50)
    empty = tmp_path / "e.csv"
    empty.write_text("")
    with pytest.raises(InputError, match="empty"):
        C.check_upload(empty, "e.csv", 10**6, 50)


def test_gzip_cannot_expand_without_bound(tmp_path):
    bomb = tmp_path / "b.jsonl.gz"
    with gzip.open(bomb, "wb") as fh:
        fh.write(b"x" * 5_000_000)  # no newlines: one huge row
    assert bomb.stat().st_size < 50_000
    with pytest.raises(AppLimitError, match="expands to more than"):
        C.check_upload(bomb, "b.jsonl.gz", 100_000, 10)


def test_absurd_grids_are_refused_before_they_are_built(tmp_path):
    t0 = time.perf_counter()
    assert C.grid_size("1-1000000000") == 10**9
    with pytest.raises(AppLimitError, match="budgets"):
        C.paste_job("0.5 0.4\n0.3 0.2\n", "rates", ("", ""),
                    {"bootstrap": 10, "ks_rates": "1-1000000000", "max_cells": 10**6},
                    str(tmp_path))
    assert time.perf_counter() - t0 < 2
    assert C.grid_size("1-16,32,64") == 18 and C.grid_size("pow2") == 0


def test_cell_limit_on_counts(tmp_path):
    text = "".join(f"{i % 5}/1000 {i % 7}/1000\n" for i in range(200))
    with pytest.raises(AppLimitError, match="200 prompts x 1,000 budgets"):
        C.paste_job(text, "auto", ("a", "b"), {"bootstrap": 10, "max_cells": 100_000},
                    str(tmp_path))


@pytest.mark.parametrize("name, want", [("../../etc/passwd", "passwd"), ("..", "upload"),
                                        ("a b<c>.jsonl", "a_b_c_.jsonl"), (".hidden.csv",
                                                                          "hidden.csv")])
def test_safe_names(name, want):
    assert C.safe_name(name) == want


# --------------------------------------------------------------------------- theory


def test_theory_counterexample_has_a_free_lunch(tmp_path):
    res = C.matrix_job(C.example_matrix(), 11, 256, str(tmp_path))
    r = res["diagnosis"]
    assert r["free_lunch"] is True and r["strategies"] == ["spec1", "spec2", "general"]
    F = np.array([[1.0, 0.0, 0.6], [0.0, 1.0, 0.6], [0.6, 0.6, 0.7]])
    d = np.array(r["direction"])
    assert abs(d.sum()) < 1e-9 and np.all(F.T @ d >= -1e-9) and np.any(F.T @ d > 1e-6)
    assert len(res["frontier"]["frontier"]) == 11 and res["frontier"]["kind"] == "theory-frontier"


def test_theory_exclusive_specialists_have_no_free_lunch(tmp_path):
    text = "strategy,pi0,x1,x2,x3\na,0.5,1,0,0.5\nb,0.5,0,1,0.5\n"
    res = C.matrix_job(text, 5, 64, str(tmp_path))
    r = res["diagnosis"]
    assert r["free_lunch"] is False and r["exclusive"] is True
    w = np.array(r["weights"])
    F = np.array([[1, 0, 0.5], [0, 1, 0.5]])
    assert np.all(w > 0) and np.allclose(F @ w, (F @ w)[0])
    # At tau = 1 every prompt keeps its base success: no gain is possible.
    assert res["frontier"]["frontier"][-1]["gain"] == pytest.approx(0, abs=1e-9)


def test_theory_matrix_errors_name_the_line(tmp_path):
    with pytest.raises(InputError) as err:
        C.matrix_job("strategy,pi0,x1\na,0.5,1\nb,0.5,2\n", 5, 64, str(tmp_path))
    assert str(err.value).startswith("strategy matrix:3")


# --------------------------------------------------------------------------- shaping


DEFAULTS = dict(ppl="1.2, 1.5, 1.8, 2.1, 2.4", rewards="1 0 1 0 1", alpha=0.01, gamma=0.1, m=15,
                n=-0.5, d=1, cap=0.5, length=11, step=250, window=(200, 300),
                passk_rewards="1 1 0 0 0 0 0 0", k=4)


def test_shaping_perplexity_matches_the_formula():
    for alpha in (0.01, 1.0):
        r = C.shaping_explore({**DEFAULTS, "alpha": alpha})["perplexity"]
        x = np.log([1.2, 1.5, 1.8, 2.1, 2.4])
        w = (x - x.mean()) / x.std()  # population std
        assert np.allclose(r["multiplier"], 1 - alpha * w)
    # The report's worked example (population std): 1.015 and 0.987 at alpha = 0.01,
    # 2.54 and -0.29 at alpha = 1.
    lo = C.shaping_explore({**DEFAULTS, "alpha": 1.0})["perplexity"]["multiplier"]
    assert round(lo[0], 2) == 2.54 and round(lo[-1], 2) == -0.29


def test_shaping_position_matches_the_paper_values():
    q = C.shaping_explore(DEFAULTS)["position"]
    rel = np.arange(11) / 11
    assert np.allclose(q["rel"], rel)
    sig = 1 / (1 + np.exp(-15 * (rel - 0.5)))
    assert np.allclose(q["bias"], 0.1 * sig)
    assert np.allclose(q["positive"], 1 + np.minimum(0.1 * sig, 0.5))
    assert np.allclose(q["negative"], -1 - np.minimum(0.1 * sig, 0.5))
    # Paper constants: 0.0025 gamma at l = 0.1, 0.5 gamma at 0.5, 0.9975 gamma at 0.9.
    one = C.shaping_explore({**DEFAULTS, "length": 10})["position"]
    assert one["bias"][1] == pytest.approx(0.1 * 0.0025, rel=0.02)  # sigmoid(-6) = 0.00247
    assert one["bias"][5] == pytest.approx(0.05)
    assert one["bias"][9] == pytest.approx(0.1 * 0.9975, rel=1e-4)
    off = C.shaping_explore({**DEFAULTS, "step": 150})["position"]
    assert off["active"] is False and np.allclose(off["positive"], 1.0)


def test_shaping_passk_matches_the_closed_form():
    r = C.shaping_explore(DEFAULTS)["passk"]
    n, c, k = 8, 2, 4
    rho = 1 - math.comb(n - c, k) / math.comb(n, k)
    sigma = math.sqrt(rho * (1 - rho))
    a_pos = (1 - rho) / sigma
    a_neg = (1 - rho - math.comb(n - c - 1, k - 1) / math.comb(n - 1, k - 1)) / sigma
    assert r["rho"] == pytest.approx(rho)
    assert np.allclose(r["advantage"], [a_pos] * 2 + [a_neg] * 6)


@pytest.mark.parametrize("change, field", [({"ppl": "1, x"}, "perplexities"),
                                           ({"rewards": "1 0"}, "rewards"),
                                           ({"ppl": "1 -2 3 4 5"}, "perplexities"),
                                           ({"k": 9}, "k"), ({"gamma": -1}, "shaping"),
                                           ({"passk_rewards": "1 " * 65}, "pass@k rewards"),
                                           ({"step": None}, "step")])
def test_shaping_bad_controls_are_input_errors(change, field):
    with pytest.raises(InputError) as err:
        C.shaping_explore({**DEFAULTS, **change})
    assert err.value.field == field


# --------------------------------------------------------------------------- other inputs


@pytest.mark.slow  # two full reports from rollouts: ~15-35 s on a loaded machine
def test_upload_rollout_table_equals_the_cli_report(tmp_path):
    from rlvr_boundary.cli import main
    from rlvr_boundary.io.rollouts import write_rollouts
    from tests.report.fixtures import synthetic_rollouts

    src = tmp_path / "rollouts.parquet"
    write_rollouts(synthetic_rollouts(prompts=20, n=8), src)
    run = tmp_path / "run"
    run.mkdir()
    res = C.files_job([(str(src), "rollouts.parquet")], {"bootstrap": 200, "seed": 0},
                      (10**7, 10**5), str(run))
    assert main(["report", str(src), "--out", str(tmp_path / "cli.html"), "--bootstrap", "200",
                 "--no-figures"]) == 0
    cli = json.loads((tmp_path / "cli.json").read_text())
    app = res["audit"]
    assert app["checkpoints"] == cli["checkpoints"] == ["step-100", "step-200"]
    for m in app["checkpoints"]:
        a, b = app["comparisons"][m], cli["comparisons"][m]
        for key in ("k_star", "price", "price_k", "diff", "gain_budgets", "crossing_bound"):
            assert a[key] == b[key], (m, key)
    assert app["support"] == cli["support"] and app["diversity"] == cli["diversity"]


def test_upload_other_tools_files(tmp_path):
    """verl validation dumps, one per checkpoint, are read by the library's adapter."""
    from tests.io.fixtures.tool_formats import write_verl_dump

    rng = np.random.default_rng(3)
    V0 = rng.random((12, 8)) < 0.4  # (P, n) verdicts of the base
    V1 = rng.random((12, 8)) < 0.6
    f0 = write_verl_dump(tmp_path / "a", 0, V0)
    f1 = write_verl_dump(tmp_path / "b", 100, V1)
    run = tmp_path / "run"
    run.mkdir()
    res = C.files_job([(str(f0), "0.jsonl"), (str(f1), "100.jsonl")],
                      {"bootstrap": 100, "format": "verl"}, (10**7, 10**5), str(run))
    a = res["audit"]
    assert a["n_prompts"] == 12
    assert a["pass_at_k"][a["base"]][0] == pytest.approx(V0.mean())
    (m,) = a["checkpoints"]
    assert a["pass_at_k"][m][0] == pytest.approx(V1.mean())
