"""Clustered prompts and several runs: the band's influence rows against references."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr_boundary.analysis.structure import cluster_labels, structured_band
from rlvr_boundary.cli import main
from rlvr_boundary.core import compare as cc
from rlvr_boundary.errors import InputError
from rlvr_boundary.examples import example_files


def _curves(rng, P, K):
    base = rng.normal(size=(P, 1)) + 0.3 * rng.normal(size=(P, K))
    return np.cumsum(base, axis=1) / np.arange(1, K + 1)  # (P, K), smooth in k


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 60), st.integers(1, 12), st.integers(0, 2**31 - 1))
def test_one_prompt_per_cluster_is_the_independent_band(P, K, seed):
    rng = np.random.default_rng(seed)
    d = _curves(rng, P, K)
    labels = rng.permutation(P).astype(str)  # any labels, one prompt each
    ind = cc.simultaneous_band(d, n_multipliers=300, seed=seed % 97)
    clu = cc.simultaneous_band(d, n_multipliers=300, seed=seed % 97, groups=labels)
    np.testing.assert_allclose(clu["se"], ind["se"], rtol=1e-10, atol=1e-15)
    assert clu["critical_value"] == pytest.approx(ind["critical_value"], rel=1e-7, abs=1e-9)
    assert clu["degenerate"] == ind["degenerate"]


def test_cluster_variance_is_the_sandwich_formula():
    """Brute force: sum over clusters of squared cluster sums, G/(G-1) factor, over P^2."""
    rng = np.random.default_rng(3)
    P, K = 90, 5
    d = _curves(rng, P, K)
    g = rng.integers(0, 12, P)
    e = d - d.mean(axis=0)
    G = np.unique(g).size
    ref = np.zeros(K)
    for lab in np.unique(g):
        ref += e[g == lab].sum(axis=0) ** 2
    ref = np.sqrt(ref * G / (G - 1)) / P
    band = cc.simultaneous_band(d, n_multipliers=200, groups=g)
    np.testing.assert_allclose(band["se"], ref, rtol=1e-12)


def test_duplicated_prompts_clustered_give_the_original_band():
    """m exact copies of each prompt, clustered by original: the original's variance."""
    rng = np.random.default_rng(4)
    d = _curves(rng, 40, 6)
    dup = np.repeat(d, 5, axis=0)  # (200, 6)
    g = np.repeat(np.arange(40), 5)
    a = cc.simultaneous_band(d, n_multipliers=4000, seed=1)
    b = cc.simultaneous_band(dup, n_multipliers=4000, seed=1, groups=g)
    naive = cc.simultaneous_band(dup, n_multipliers=4000, seed=1)
    np.testing.assert_allclose(b["se"], a["se"], rtol=1e-10)
    assert b["critical_value"] == pytest.approx(a["critical_value"], rel=1e-8)
    # Treating the copies as independent understates the standard error by ~sqrt(5).
    np.testing.assert_allclose(naive["se"] * np.sqrt(5), a["se"], rtol=0.02)


def test_run_influence_against_loops_and_single_run():
    rng = np.random.default_rng(5)
    R, Rb, P, K = 4, 1, 50, 3
    pr = rng.random((R, P, K))
    pb = rng.random((Rb, P, K))
    mean, H, df = cc.run_influence(pr, pb)
    assert H.shape == (P + R, K)
    a = pr.mean(axis=0) - pb.mean(axis=0)  # (P, K)
    np.testing.assert_allclose(mean, a.mean(axis=0))
    var = ((a - a.mean(axis=0)) ** 2).sum(axis=0) / (P * (P - 1))
    rm = pr.mean(axis=1)
    v_run = ((rm - rm.mean(axis=0)) ** 2).sum(axis=0) / (R * (R - 1))
    np.testing.assert_allclose((H**2).sum(axis=0), var + v_run, rtol=1e-12)
    np.testing.assert_allclose(df, (var + v_run) ** 2 / (var**2 / (P - 1) + v_run**2 / (R - 1)))
    # One run per model: the prompt rows alone, i.e. the independent band.
    m1, H1, _ = cc.run_influence(pr[:1], pb)
    np.testing.assert_allclose(H1, cc.cluster_influence(pr[0] - pb[0]), atol=1e-15)


def test_small_sample_correction_widens_to_student_t():
    rng = np.random.default_rng(6)
    d = _curves(rng, 30, 1)
    g = np.repeat(np.arange(5), 6)
    band = cc.simultaneous_band(d, n_multipliers=40_000, seed=2, groups=g, df=4)
    # One budget: Gaussian quantile 1.96 moved to t with 4 df, 2.776.
    assert band["critical_value"] == pytest.approx(1.96, abs=0.03)
    assert band["critical_values"][0] == pytest.approx(2.776, abs=0.06)
    assert band["upper"][0] - band["mean"][0] == pytest.approx(
        band["critical_values"][0] * band["se"][0])


def test_structured_band_reports_its_unit():
    rng = np.random.default_rng(7)
    pb, pr = rng.random((1, 30, 4)), rng.random((3, 30, 4))
    out = structured_band(pb, pr, groups=np.arange(30) // 3, n_multipliers=300)
    assert out["unit"] == "clusters of prompts and runs" and out["n_clusters"] == 10
    assert out["n_runs"] == {"base": 1, "rl": 3}
    assert np.all(out["critical_values"] >= out["critical_value"])


def test_cluster_labels_rules():
    ids = np.array(["x-aime-1", "x-aime-2", "x-amc-1", "solo"], dtype=object)
    assert list(cluster_labels("id-prefix:-", ids, [])) == ["x-aime", "x-aime", "x-amc", "solo"]
    col = {"source": np.array(["a", "a", "b", "b"], dtype=object)}
    assert list(cluster_labels("source", ids, [col, col])) == ["a", "a", "b", "b"]
    with pytest.raises(InputError, match="no input carries the field 'topic'"):
        cluster_labels("topic", ids, [col])
    with pytest.raises(InputError, match="at least 2 clusters"):
        cluster_labels("id-prefix:-", np.array(["x-1", "x-2"], dtype=object), [])
    other = {"source": np.array(["a", "b", "b", "b"], dtype=object)}
    with pytest.raises(InputError, match="disagree on prompt 'x-aime-2'"):
        cluster_labels("source", ids, [col, other])


def test_cluster_bootstrap_resamples_clusters():
    rng = np.random.default_rng(8)
    ks = np.array([1, 2, 4])
    pb = rng.random((60, 3))
    pr = np.clip(pb + 0.05 + 0.1 * rng.normal(size=(60, 1)), 0, 1)
    out = cc.paired_bootstrap(pb, pr, ks, n_boot=200, groups=np.arange(60) // 6)
    assert out["resampled"] == "clusters"
    assert cc.paired_bootstrap(pb, pr, ks, n_boot=200)["resampled"] == "prompts"


def test_compare_cli_cluster_by_source_and_runs(tmp_path, capsys):
    ex = example_files("deepscaler32k")
    out = tmp_path / "c.json"
    assert main(["compare", "--example", "--bootstrap", "500", "--cluster-by", "source",
                 "--json", str(out)]) == 0
    r = json.loads(out.read_text())
    assert r["band"]["n_clusters"] == 4 and r["band"]["unit"] == "clusters of prompts"
    assert r["options"]["cluster_by"] == "source"
    assert r["bootstrap_ci"]["resampled"] == "clusters"
    # Four clusters leave 3 degrees of freedom: the t correction widens every budget.
    assert min(r["band"]["critical_values"]) > 2 * r["band"]["critical_value"]
    # The same clusters from the ids (fresh32k-<source>-<i>).
    out2 = tmp_path / "c2.json"
    assert main(["compare", "--example", "--bootstrap", "500", "--cluster-by", "id-prefix:-",
                 "--json", str(out2)]) == 0
    assert json.loads(out2.read_text())["band"]["n_clusters"] == 4
    # Several runs: the example RL file given again as a second run changes no curve and
    # adds run rows with zero variance.
    out3 = tmp_path / "r.json"
    assert main(["compare", "--base", str(ex["base"]), "--rl", str(ex["rl"]), "--rl-run",
                 str(ex["rl"]), "--bootstrap", "500", "--json", str(out3)]) == 0
    r3 = json.loads(out3.read_text())
    assert r3["band"]["n_runs"] == {"base": 1, "rl": 2}
    assert r3["k_star"] == 22 and r3["options"]["rl_runs"] == [str(ex["rl"])]
    capsys.readouterr()
    assert main(["compare", "--example", "--bootstrap", "100", "--cluster-by", "topic"]) == 2
    assert "no input carries the field 'topic'" in " ".join(capsys.readouterr().err.split())
