"""``compare --extrapolate``: a model-based block beside the exact curves."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rlvr_boundary.analysis.extrapolation import extrapolation_grid
from rlvr_boundary.cli import main


def test_grid_keeps_powers_of_two_and_reaches_k_max():
    g = extrapolation_grid(16, 1024)
    assert list(g[:5]) == [1, 2, 4, 8, 16] and g[-1] == 1024 and np.all(np.diff(g) > 0)
    # Four budgets per doubling beyond n.
    assert list(g[5:9]) == [19, 23, 27, 32]
    assert list(extrapolation_grid(16, 8)) == [1, 2, 4, 8]
    assert list(extrapolation_grid(12, 12)) == [1, 2, 4, 8, 12]


def _counts_files(tmp_path, P, n, rng, zero_rl=0.15):
    pb = np.where(rng.random(P) < 0.05, 0.0, rng.beta(0.5, 0.8, P))
    pr = np.where(rng.random(P) < zero_rl, 0.0, rng.beta(1.5, 1.0, P))
    for name, p in (("b", pb), ("r", pr)):
        c = rng.binomial(n, p)
        (tmp_path / f"{name}.jsonl").write_text(
            "".join(json.dumps({"id": f"q{i}", "n": n, "c": int(ci)}) + "\n"
                    for i, ci in enumerate(c)))
    return tmp_path / "b.jsonl", tmp_path / "r.jsonl"


def test_compare_extrapolate_block(tmp_path):
    b, r = _counts_files(tmp_path, 150, 16, np.random.default_rng(0))
    out = tmp_path / "o.json"
    assert main(["compare", "--base", str(b), "--rl", str(r), "--bootstrap", "20",
                 "--extrapolate", "512", "--extrapolate-method", "npmle",
                 "--json", str(out)]) == 0
    res = json.loads(out.read_text())
    e = res["extrapolation"]
    assert e["model_based"] is True and "model-based prediction beyond k = 16" in e["note"]
    assert e["ks"][-1] == 512 and e["observed_up_to"] == 16
    assert res["options"]["extrapolate"] == 512
    assert e["interval"] == "profile likelihood" and e["reach"]["reasons"] == []
    assert all(e["calibrated"]) and e["reach"]["k_max_calibrated"] == 512
    # At observed budgets the fit follows the exact curve.
    j = e["ks"].index(16)
    assert abs(e["diff"][j] - res["diff"][15]) < 0.02
    assert all(lo <= d + 1e-9 <= hi + 2e-9 for lo, d, hi in
               zip(e["diff_lower"], e["diff"], e["diff_upper"]))
    assert set(e["power_law"]) >= {"base", "rl", "pass_base", "pass_rl", "diff", "k_star"}


def test_beyond_the_reach_no_interval_and_the_reason(tmp_path, capsys):
    """From 8 samples per prompt, 1,024 is 128 times n: beyond the validated 64."""
    b, r = _counts_files(tmp_path, 150, 8, np.random.default_rng(1))
    out = tmp_path / "o.json"
    capsys.readouterr()
    assert main(["compare", "--base", str(b), "--rl", str(r), "--bootstrap", "20",
                 "--extrapolate", "1024", "--json", str(out)]) == 0
    e = json.loads(out.read_text())["extrapolation"]
    ks = np.array(e["ks"])
    assert e["reach"]["reasons"] == ["ratio"] and e["reach"]["k_max_calibrated"] == ks[ks <= 512][-1]
    beyond = ks > 64 * 8
    assert all(e["diff_lower"][j] is None for j in np.flatnonzero(beyond))
    assert all(e["diff_lower"][j] is not None for j in np.flatnonzero(~beyond))
    assert e["diff"][-1] is not None  # the prediction itself is still shown
    text = " ".join(capsys.readouterr().out.split())
    assert "not calibrated, no interval" in text
    assert f"Intervals up to k = {e['reach']['k_max_calibrated']}" in text
    assert "budgets beyond 64 times n were not validated" in text


def test_extrapolation_does_not_depend_on_the_seed(tmp_path):
    b, r = _counts_files(tmp_path, 120, 16, np.random.default_rng(2))
    docs = []
    for seed in (0, 1, 7):
        out = tmp_path / f"o{seed}.json"
        assert main(["compare", "--base", str(b), "--rl", str(r), "--bootstrap", "20",
                     "--seed", str(seed), "--extrapolate", "256", "--json", str(out)]) == 0
        docs.append(json.loads(out.read_text())["extrapolation"])
    for key in ("pass_base", "pass_rl", "diff", "diff_lower", "diff_upper", "k_star",
                "k_star_set"):
        assert docs[0][key] == docs[1][key] == docs[2][key], key


def test_compare_verifier_error_block(tmp_path, capsys):
    rng = np.random.default_rng(1)
    P, n = 200, 8
    for name, a in (("b", 0.5), ("r", 1.5)):
        c = rng.binomial(n, rng.beta(a, 1.0, P))
        (tmp_path / f"{name}.jsonl").write_text(
            "".join(json.dumps({"id": f"q{i}", "n": n, "c": int(ci)}) + "\n"
                    for i, ci in enumerate(c)))
    args = ["compare", "--base", str(tmp_path / "b.jsonl"), "--rl", str(tmp_path / "r.jsonl"),
            "--bootstrap", "15"]
    out = tmp_path / "o.json"
    assert main([*args, "--verifier-error", "0.02,0.05", "--json", str(out)]) == 0
    v = json.loads(out.read_text())["verifier_error"]
    assert (v["fp"], v["fn"]) == (0.02, 0.05) and v["model_based"] is True
    assert isinstance(v["verdicts_survive"], bool)
    assert set(v["gain_survives"]) <= set(json.loads(out.read_text())["gain_budgets"])
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main([*args, "--verifier-error", "0.6,0.5"])
    assert "FP + FN < 1" in capsys.readouterr().err


def test_console_lines_for_clusters_verifier_error_and_extrapolation(tmp_path, capsys):
    rng = np.random.default_rng(2)
    P, n = 120, 8
    for name, a in (("b", 0.6), ("r", 1.4)):
        c = rng.binomial(n, rng.beta(a, 1.0, P))
        (tmp_path / f"{name}.jsonl").write_text(
            "".join(json.dumps({"id": f"s{i % 12}-{i}", "n": n, "c": int(ci),
                                "source": f"s{i % 12}"}) + "\n" for i, ci in enumerate(c)))
    out = tmp_path / "o.json"
    capsys.readouterr()
    assert main(["compare", "--base", str(tmp_path / "b.jsonl"), "--rl", str(tmp_path / "r.jsonl"),
                 "--bootstrap", "12", "--cluster-by", "source", "--verifier-error", "0.01,0.02",
                 "--extrapolate", "64", "--extrapolate-method", "npmle",
                 "--json", str(out)]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "Band drawn over clusters of prompts (12 units" in text
    assert "Under verifier error (false positives 0.01, false negatives 0.02)" in text
    assert "Model-based prediction (npmle) at k = 64" in text
    assert "Not calibrated" in text  # 120 prompts with n = 8 and 12 clusters: below the reach
    r = json.loads(out.read_text())
    assert r["band"]["n_clusters"] == 12 and r["extrapolation"]["ks"][-1] == 64
