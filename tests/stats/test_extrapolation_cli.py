"""``compare --extrapolate``: a model-based block beside the exact curves."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rlvr_boundary.analysis.extrapolation import extrapolation_grid
from rlvr_boundary.cli import main


def test_grid_keeps_observed_budgets_and_reaches_k_max():
    g = extrapolation_grid(16, 1024)
    assert list(g[:16]) == list(range(1, 17)) and g[-1] == 1024 and np.all(np.diff(g) > 0)
    assert list(extrapolation_grid(16, 8)) == list(range(1, 9))


def test_compare_extrapolate_block(tmp_path):
    rng = np.random.default_rng(0)
    P, n = 150, 16
    pb = np.where(rng.random(P) < 0.05, 0.0, rng.beta(0.5, 0.8, P))
    pr = np.where(rng.random(P) < 0.15, 0.0, rng.beta(1.5, 1.0, P))
    for name, p in (("b", pb), ("r", pr)):
        c = rng.binomial(n, p)
        (tmp_path / f"{name}.jsonl").write_text(
            "".join(json.dumps({"id": f"q{i}", "n": n, "c": int(ci)}) + "\n"
                    for i, ci in enumerate(c)))
    out = tmp_path / "o.json"
    assert main(["compare", "--base", str(tmp_path / "b.jsonl"), "--rl", str(tmp_path / "r.jsonl"),
                 "--bootstrap", "20", "--extrapolate", "512", "--extrapolate-method", "npmle",
                 "--json", str(out)]) == 0
    r = json.loads(out.read_text())
    e = r["extrapolation"]
    assert e["model_based"] is True and "model-based prediction beyond k = 16" in e["note"]
    assert e["ks"][-1] == 512 and e["observed_up_to"] == 16
    assert r["options"]["extrapolate"] == 512
    # At observed budgets the fit follows the exact curve.
    j = e["ks"].index(16)
    assert abs(e["diff"][j] - r["diff"][15]) < 0.02
    assert all(lo <= hi for lo, hi in zip(e["diff_lower"], e["diff_upper"]))
    assert set(e["power_law"]) >= {"base", "rl", "pass_base", "pass_rl", "diff", "k_star"}


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
    r = json.loads(out.read_text())
    assert r["band"]["n_clusters"] == 12 and r["extrapolation"]["ks"][-1] == 64
