"""The token-replacement aggregation (numpy only) against plain loops, and its invariants."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr_boundary.analysis.replacement import ppl_tertiles, replacement_effects


def _records(rng, n_samples=30, n_bins=4, R=2):
    log_ppl = rng.gamma(2.0, 0.2, size=n_samples)
    sample, pos, orig, rep, ctl = [], [], [], [], []
    for i in range(n_samples):
        o = float(rng.random() < 0.5)
        for b in range(n_bins):
            if rng.random() < 0.15:  # some samples miss some bins (short completions)
                continue
            sample.append(i)
            pos.append(b)
            orig.append(o)
            rep.append(rng.integers(0, R + 1) / R)
            ctl.append(rng.integers(0, R + 1) / R)
    return (np.array(sample), np.array(pos), np.array(orig), np.array(rep), np.array(ctl),
            log_ppl)


def _mean(xs):
    return sum(xs) / len(xs)


def _se(xs):
    m = _mean(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1)) / math.sqrt(len(xs))


def test_matches_a_plain_loop():
    rng = np.random.default_rng(3)
    sample, pos, orig, rep, ctl, lp = _records(rng)
    res = replacement_effects(sample, pos, orig, rep, ctl, lp, 4)

    # tertiles by sorting: edges at the 1/3 and 2/3 quantiles, ties to the lower group
    srt = sorted(lp)
    q = [np.quantile(srt, 1 / 3), np.quantile(srt, 2 / 3)]
    group = [0 if x <= q[0] else 1 if x <= q[1] else 2 for x in lp]
    assert res["tertile_edges"] == pytest.approx(q)

    for b in range(4):
        ch = [rep[r] - orig[r] for r in range(len(sample)) if pos[r] == b]
        fl = [abs(rep[r] - orig[r]) for r in range(len(sample)) if pos[r] == b]
        ef = [rep[r] - ctl[r] for r in range(len(sample)) if pos[r] == b]
        row = res["by_position"][b]
        assert row["n"] == len(ch)
        assert row["change"] == pytest.approx(_mean(ch))
        assert row["change_se"] == pytest.approx(_se(ch))
        assert row["flip"] == pytest.approx(_mean(fl))
        assert row["effect"] == pytest.approx(_mean(ef))

    for t in range(3):
        per_sample = []
        for i in range(len(lp)):
            rs = [r for r in range(len(sample)) if sample[r] == i]
            if rs and group[i] == t:
                per_sample.append(_mean([abs(rep[r] - orig[r]) for r in rs]))
        row = res["by_tertile"][t]
        assert row["n"] == len(per_sample)
        assert row["flip"] == pytest.approx(_mean(per_sample))
        assert row["flip_se"] == pytest.approx(_se(per_sample))

    # break (correct -> wrong) and fix (wrong -> right) rates per bin, and per category
    cats = np.array(["digit", "word", "operator"])[rng.integers(0, 3, size=len(sample))]
    res_c = replacement_effects(sample, pos, orig, rep, ctl, lp, 4, category=cats)
    for b in range(4):
        br = [1 - rep[r] for r in range(len(sample)) if pos[r] == b and orig[r] == 1]
        fx = [rep[r] for r in range(len(sample)) if pos[r] == b and orig[r] == 0]
        assert res["by_position"][b]["break"] == pytest.approx(_mean(br))
        assert res["by_position"][b]["fix"] == pytest.approx(_mean(fx))
    assert res["by_category"] is None
    for k in ("digit", "word", "operator"):
        fl = [abs(rep[r] - orig[r]) for r in range(len(sample)) if cats[r] == k]
        assert res_c["by_category"][k]["n"] == len(fl)
        assert res_c["by_category"][k]["flip"] == pytest.approx(_mean(fl))
    assert res_c["by_position"] == res["by_position"]

    for t in range(3):
        for b in range(4):
            br = [1 - rep[r] for r in range(len(sample))
                  if pos[r] == b and group[sample[r]] == t and orig[r] == 1]
            got = res["grid"]["break"][t][b]
            assert (got is None) if not br else got == pytest.approx(_mean(br))
            ch = [rep[r] - orig[r] for r in range(len(sample))
                  if pos[r] == b and group[sample[r]] == t]
            got = res["grid"]["change"][t][b]
            assert (got is None) if not ch else got == pytest.approx(_mean(ch))


def test_hand_example():
    # two samples, two bins: sample 0 correct, its first token decides (replaced -> wrong)
    res = replacement_effects(sample=[0, 0, 1, 1], position_bin=[0, 1, 0, 1],
                              original=[1, 1, 0, 0], replaced=[0.0, 1.0, 0.5, 0.0],
                              control=[1.0, 1.0, 0.0, 0.0], log_ppl=[0.1, 0.9], n_bins=2)
    assert res["by_position"][0]["change"] == pytest.approx((-1 + 0.5) / 2)
    assert res["by_position"][0]["flip"] == pytest.approx(0.75)
    assert res["by_position"][0]["effect"] == pytest.approx((-1 + 0.5) / 2)
    assert res["by_position"][1]["change"] == 0.0 and res["by_position"][1]["flip"] == 0.0
    assert res["by_tertile"][0]["flip"] == pytest.approx(0.5)  # sample 0, the low-PPL one
    assert res["by_tertile"][2]["flip"] == pytest.approx(0.25)  # sample 1
    assert res["by_tertile"][1]["n"] == 0 and res["by_tertile"][1]["flip"] is None


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 6))
def test_invariants(seed, n_bins):
    rng = np.random.default_rng(seed)
    sample, pos, orig, rep, ctl, lp = _records(rng, n_samples=12, n_bins=n_bins)
    if sample.size == 0:
        return
    res = replacement_effects(sample, pos, orig, rep, ctl, lp, n_bins)
    assert sum(r["n"] for r in res["by_position"]) == sample.size
    assert sum(r["n"] for r in res["by_tertile"]) == len(np.unique(sample))
    for r in res["by_position"] + res["by_tertile"]:
        if r["n"]:
            assert 0 <= r["flip"] <= 1
            assert abs(r["change"]) <= r["flip"] + 1e-12  # |mean| <= mean |.|
            assert r["change"] == pytest.approx(r["replaced"] - r["original"])
            assert r["effect"] == pytest.approx(r["replaced"] - r["control"])
    # no replacement effect when replaced == control
    same = replacement_effects(sample, pos, orig, ctl, ctl, lp, n_bins)
    assert all(r["effect"] == 0 for r in same["by_position"] if r["n"])


def test_tertiles_split_evenly_and_refuse_bad_input():
    edges, g = ppl_tertiles(np.arange(9.0))
    assert g.tolist() == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    assert edges.tolist() == pytest.approx([8 / 3, 16 / 3])
    with pytest.raises(ValueError):
        ppl_tertiles(np.array([]))
    with pytest.raises(ValueError):
        ppl_tertiles(np.array([0.1, np.nan]))
    ok = dict(sample=[0], position_bin=[0], original=[1], replaced=[0.0], control=[1.0],
              log_ppl=[0.2], n_bins=1)
    replacement_effects(**ok)
    for bad in ({"position_bin": [1]}, {"sample": [1]}, {"replaced": [1.5]}, {"n_bins": 0},
                {"control": [0.0, 1.0]}):
        with pytest.raises(ValueError):
            replacement_effects(**{**ok, **bad})
