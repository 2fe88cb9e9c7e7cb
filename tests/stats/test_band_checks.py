"""Bands that never certify from nothing: zero variance, too few prompts, and the warning below
the validated number of prompts, through the same path as ``compare``."""

from __future__ import annotations

import json

import numpy as np

from rlvr_boundary.analysis.aligned import Aligned
from rlvr_boundary.analysis.calibration_data import BAND
from rlvr_boundary.pipelines.compare import CompareOptions
from rlvr_boundary.analysis.pairwise import compare_aligned
from rlvr_boundary.analysis.structure import BAND_VALIDATED_PROMPTS
from rlvr_boundary.cli import main


def _compare(cb, cr, n, **kw):
    P = len(cb)
    al = Aligned(models=["b", "r"], prompt_ids=np.array([f"q{i}" for i in range(P)]),
                 n=np.array([n, n]), c=np.array([cb, cr]))
    return compare_aligned(al, "b", "r", CompareOptions(bootstrap=500, **kw))


def _write(path, counts, n):
    path.write_text("".join(json.dumps({"id": f"q{i}", "n": int(ni), "c": int(c)}) + "\n"
                            for i, (c, ni) in enumerate(zip(counts, n))))
    return path


def test_three_prompts_at_n1_support_no_gain(tmp_path, capsys):
    b = _write(tmp_path / "b.jsonl", [0, 0, 0], [1, 1, 1])
    r = _write(tmp_path / "r.jsonl", [1, 1, 1], [1, 1, 1])
    out = tmp_path / "o.json"
    assert main(["compare", "--base", str(b), "--rl", str(r), "--bootstrap", "300",
                 "--json", str(out)]) == 0
    res = json.loads(out.read_text())
    assert res["diff"] == [1.0] and res["gain_budgets"] == [] and res["loss_budgets"] == []
    assert res["band"]["too_few_prompts"] and res["band"]["no_variance"] == [0]
    assert res["verdict_per_k"] == ["inconclusive"]
    text = " ".join(capsys.readouterr().out.split())
    assert "With 3 prompts no gain or loss can be supported at the 95% level" in text
    assert "No variance at k = 1" in text and "RL helps" not in text


def test_identical_losses_at_every_k_are_not_supported():
    # 4 prompts at n = 8: base 4/8, RL 1/8 on each: the same loss on every prompt at every
    # k < 8 (no spread), a tie at k = 8 where both solve every prompt.
    res = _compare([4] * 4, [1] * 4, [8] * 4)
    assert all(d < 0 for d in res["diff"][:7])
    assert res["loss_budgets"] == [] and res["gain_budgets"] == []
    assert res["band"]["no_variance"] == list(range(7)) and res["verdict_per_k"][-1] == "tie"
    # With 40 such prompts there are enough prompts, still no variance: still nothing.
    res = _compare([4] * 40, [1] * 40, [8] * 40)
    assert not res["band"]["too_few_prompts"] and res["loss_budgets"] == []
    assert all(v == "inconclusive" for v in res["verdict_per_k"][:7])


def test_zero_width_budgets_never_supported_beside_real_ones():
    rng = np.random.default_rng(3)
    P = 60
    cb = rng.integers(0, 3, P)
    cr = np.minimum(cb + rng.integers(1, 4, P), 8)
    res = _compare(cb, cr, np.full(P, 8))
    deg = [k for k, g in zip(res["ks"], res["degenerate"]) if g]
    assert not set(deg) & (set(res["gain_budgets"]) | set(res["loss_budgets"]))
    assert 1 in res["gain_budgets"]


def test_warning_below_the_validated_prompts_quotes_the_measured_coverage(capsys, tmp_path):
    rng = np.random.default_rng(4)
    P = 30
    p = rng.beta(0.5, 1.0, P)
    b = _write(tmp_path / "b.jsonl", rng.binomial(8, p), [8] * P)
    r = _write(tmp_path / "r.jsonl", rng.binomial(8, np.minimum(p + 0.2, 1)), [8] * P)
    out = tmp_path / "o.json"
    assert main(["compare", "--base", str(b), "--rl", str(r), "--bootstrap", "300",
                 "--json", str(out)]) == 0
    band = json.loads(out.read_text())["band"]
    w = band["warning"]
    assert w["prompts"] == P and w["validated_from"] == BAND_VALIDATED_PROMPTS
    assert [m["prompts"] for m in w["measured"]] == sorted(
        k for k in BAND["independent"] if k <= BAND_VALIDATED_PROMPTS)
    assert band["small_sample"] == "kurtosis-t" and band["df_range"][0] <= P - 1
    text = " ".join(capsys.readouterr().out.split())
    assert f"Only {P} prompts: the band's level is validated from {BAND_VALIDATED_PROMPTS}" in text
    # At the validated size and above: no warning.
    many = _compare(np.zeros(BAND_VALIDATED_PROMPTS, int), np.ones(BAND_VALIDATED_PROMPTS, int),
                    np.full(BAND_VALIDATED_PROMPTS, 2))
    assert many["band"]["warning"] is None


def test_calibration_data_supports_the_threshold():
    """The generated figures back the rule: from the validated size on, the band covered
    within [0.93, 0.97] (95% level) on the DeepScaleR population."""
    rows = BAND["independent"]
    assert BAND["level"] == 0.95 and BAND_VALIDATED_PROMPTS in rows
    for P, row in rows.items():
        if P >= BAND_VALIDATED_PROMPTS:
            assert 0.93 <= row["coverage"] <= 0.97, (P, row)
