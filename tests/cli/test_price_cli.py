"""``rlvr-boundary price``: the count-free diagnostic on rates and on published curves."""

from __future__ import annotations

import io
import json
import sys

import numpy as np
import pytest

from rlvr_boundary.cli import main
from rlvr_boundary.core.passk import pass_at_k_plugin

OMNI = "k,base,grpo\n1,.102,.251\n4,.224,.368\n16,.392,.496\n64,.578,.608\n256,.691,.683\n"


def test_omni_math_anchor(tmp_path, capsys):
    """SPEC section 3: one crossing in (64, 256], price .008 at 256."""
    f = tmp_path / "omni.csv"
    f.write_text(OMNI)
    out = tmp_path / "p.json"
    assert main(["price", str(f), "--json", str(out)]) == 0
    r = json.loads(out.read_text())
    assert r["input_kind"] == "curve"
    assert r["crossing_intervals"] == [[64, 256]]
    assert r["price"] == pytest.approx(0.008, abs=1e-12) and r["price_k"] == 256
    assert r["kind"] == "price" and "schema_version" in r and "tool_version" in r
    assert "(64, 256]" in capsys.readouterr().out


def test_rates_from_stdin_match_a_direct_computation(monkeypatch, capsys, tmp_path):
    rng = np.random.default_rng(4)
    pb = np.round(rng.uniform(size=50), 3)
    pr = np.round(np.clip(pb + rng.normal(0, 0.3, 50), 0, 1), 3)
    pr[:5] = 0.0  # RL forgets five prompts: a loss at large k
    text = "\n".join(f"{a}\t{b}" for a, b in zip(pb, pr)) + "\n"
    monkeypatch.setattr(sys, "stdin", io.StringIO(text))
    out = tmp_path / "r.json"
    assert main(["price", "--ks", "1-256", "--json", str(out)]) == 0
    r = json.loads(out.read_text())
    ks = np.arange(1, 257)
    d = (pass_at_k_plugin(pr, ks) - pass_at_k_plugin(pb, ks)).mean(axis=0)
    assert r["n_prompts"] == 50 and r["input_kind"] == "rates"
    assert r["price"] == pytest.approx(max(0.0, -d.min()), abs=1e-12)
    assert r["price_k"] == int(ks[np.argmin(d)])
    neg = np.flatnonzero(d < 0)
    assert r["k_star"] == (int(ks[neg[0]]) if neg.size else None)
    assert r["n_crossings"] == int(np.count_nonzero(np.diff(np.sign(d[d != 0]))))
    assert r["n_crossings"] <= r["crossing_bound"]
    # As k -> infinity D tends to the difference in the share of prompts with p > 0.
    assert r["asymptotic_diff"] == pytest.approx(np.mean(pr > 0) - np.mean(pb > 0))


@pytest.mark.parametrize("text, msg", [
    ("base,rl\n0.1,0.2\n0.3,abc\n", "<stdin>:3: expected numbers"),
    ("base,rl\n0.1,0.2\n0.3,1.2\n", "<stdin>:3: success rates must lie in [0, 1]"),
    ("k,b,r\n1,.1,.2\n4,.3\n", "<stdin>:3: expected 3 columns, found 2"),
    ("", "no data rows"),
    ("k,b,r\n1,.1,.2\n1,.3,.4\n", "must increase"),
])
def test_bad_tables_are_located(monkeypatch, capsys, text, msg):
    monkeypatch.setattr(sys, "stdin", io.StringIO(text))
    assert main(["price"]) == 2
    assert msg in capsys.readouterr().err.replace("\n", "")


def test_the_readme_price_example_prints_what_the_readme_says(monkeypatch, capsys):
    import io
    from pathlib import Path

    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    cmd = next(line for line in readme.splitlines() if line.startswith("printf 'k,base,rl"))
    table = cmd.split("'")[1].encode().decode("unicode_escape")
    said = readme.split(cmd, 1)[1].splitlines()[1].lstrip("# ")
    monkeypatch.setattr("sys.stdin", io.StringIO(table))
    assert main(["price"]) == 0
    printed = capsys.readouterr().out
    for part in said.split("; ", 1):
        assert part in printed, part
