"""RFT selection: rule filters, strategies, drop counts, and the rft-select CLI end to end."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pytest

from rlvr_boundary.cli import main
from rlvr_boundary.io.rollouts import read_rollouts, write_rollouts
from rlvr_boundary.pipelines.rft_select import RftOptions
from rlvr_boundary.shaping.rft import select_rft as _select_rft
from rlvr_boundary.verify import quality


def select_rft(*args, **kw):
    return _select_rft(*args, text_ops=quality, **kw)

GOOD = "We add {a} and {b} to get {s}. So the answer is \\boxed{{{s}}}."
TAIL = " Let me double check. Yes this is right, I am sure about it."
NO_BOX = "The answer is {s} but I forgot the box."
NO_DIGIT = "We reason about it in words only and conclude \\boxed{{yes}}."
REDUNDANT = ("so we try again " * 12) + "and finally \\boxed{{{s}}}"


def make_rows():
    """42 rows with known fates; positives' rbf_mean decreases with their index."""
    rows = []
    for i in range(30):  # correct, good, rbf 30 - i
        rows.append(dict(text=GOOD.format(a=i, b=1, s=i + 1) + TAIL, correct=True,
                         rbf_mean=float(30 - i), entropy_mean=float(i)))
    for i in range(6):  # incorrect, good
        rows.append(dict(text=GOOD.format(a=i, b=2, s=i), correct=False,
                         rbf_mean=100.0, entropy_mean=100.0))
    rows.append(dict(text=None, correct=True, rbf_mean=50.0, entropy_mean=50.0))  # no_text
    rows.append(dict(text=NO_BOX.format(s=3), correct=True, rbf_mean=50.0, entropy_mean=50.0))
    rows.append(dict(text=NO_DIGIT, correct=True, rbf_mean=50.0, entropy_mean=50.0))
    rows.append(dict(text=REDUNDANT.format(s=7), correct=True, rbf_mean=50.0, entropy_mean=50.0))
    rows.append(dict(text=GOOD.format(a=1, b=1, s=2), correct=True, rbf_mean=float("nan"),
                     entropy_mean=1.0))  # missing_score under rbf
    rows.append(dict(text=GOOD.format(a=2, b=2, s=4), correct=False, rbf_mean=1.0,
                     entropy_mean=1.0))
    for j, r in enumerate(rows):
        r.update(prompt_id=f"p{j // 7}", model="m", sample_idx=j % 7)
    return rows


def test_select_rbf_with_negatives_counts_every_drop():
    rows = make_rows()
    sel = select_rft([r["text"] for r in rows], [r["correct"] for r in rows],
                     [r["rbf_mean"] for r in rows], RftOptions(budget=20, neg_frac=0.1))
    assert sel.n_negative == 2 and sel.n_positive == 18 and sel.shortfall == 0
    pos = [i for i in sel.indices if rows[i]["correct"]]
    assert pos == list(range(18))  # the 18 highest-RBF positives
    neg = [i for i in sel.indices if not rows[i]["correct"]]
    assert all(i in list(range(30, 36)) + [41] for i in neg)
    assert sel.drop_counts() == {"no_text": 1, "no_boxed": 1, "no_digit": 1, "redundant": 1,
                                 "missing_score": 1, "over_budget": 12 + 5}
    # the text is cut after the boxed answer
    assert all("\\boxed{" in t and "double check" not in t for t in sel.texts)


def test_select_entropy_random_and_shortfall():
    rows = make_rows()
    texts, correct = [r["text"] for r in rows], [r["correct"] for r in rows]
    sel = select_rft(texts, correct, [r["entropy_mean"] for r in rows],
                     RftOptions(budget=5, neg_frac=0.0, by="entropy"))
    assert list(sel.indices) == [25, 26, 27, 28, 29]  # highest entropy
    a = select_rft(texts, correct, None, RftOptions(budget=10, by="random", seed=3))
    b = select_rft(texts, correct, None, RftOptions(budget=10, by="random", seed=3))
    c = select_rft(texts, correct, None, RftOptions(budget=10, by="random", seed=4))
    np.testing.assert_array_equal(a.indices, b.indices)
    assert not np.array_equal(a.indices, c.indices)
    # 31 eligible positives (NaN rbf is no issue at random), 7 negatives; ask for 50% negatives
    big = select_rft(texts, correct, None, RftOptions(budget=100, neg_frac=0.5, by="random"))
    assert big.n_negative == 7 and big.n_positive == 31 and big.shortfall == 62
    # too few negatives: positives fill the gap
    fill = select_rft(texts, correct, None, RftOptions(budget=20, neg_frac=0.5, by="random"))
    assert fill.n_negative == 7 and fill.n_positive == 13 and fill.shortfall == 0


def test_options_are_checked():
    with pytest.raises(ValueError, match="--by"):
        RftOptions(by="ppl")
    with pytest.raises(ValueError, match="--neg-frac"):
        RftOptions(neg_frac=1.5)
    with pytest.raises(ValueError, match="budget"):
        RftOptions(budget=0)


def table_of(rows, drop=()):
    cols = ["prompt_id", "model", "sample_idx", "text", "correct", "rbf_mean", "entropy_mean"]
    cols = [c for c in cols if c not in drop]
    return pa.table({c: [r[c] for r in rows] for c in cols})


def test_cli_end_to_end(tmp_path):
    rows = make_rows()
    src = tmp_path / "rollouts.jsonl"
    write_rollouts(table_of(rows), src)
    out = tmp_path / "sel.parquet"
    assert main(["rft-select", str(src), "--budget", "20", "--neg-frac", "0.1",
                 "--out", str(out), "--seed", "1"]) == 0
    got = read_rollouts(out)
    assert got.num_rows == 20
    assert sum(got.column("correct").to_pylist()) == 18
    assert all("double check" not in t for t in got.column("text").to_pylist())
    doc = json.loads((tmp_path / "sel.summary.json").read_text())
    assert doc["kind"] == "rft-select" and doc["schema_version"]
    assert doc["options"]["budget"] == 20 and doc["options"]["by"] == "rbf"
    assert doc["n_input"] == 42 and doc["n_selected"] == 20
    assert doc["drops"]["redundant"] == 1 and doc["drops"]["over_budget"] == 17
    manifest = json.loads((tmp_path / "sel.manifest.json").read_text())
    assert manifest["rft_select"]["neg_frac"] == 0.1


def test_cli_missing_column_is_a_clear_error_and_writes_nothing(tmp_path, capsys):
    rows = make_rows()
    src = tmp_path / "r.parquet"
    write_rollouts(table_of(rows, drop=("rbf_mean",)), src)
    out = tmp_path / "sel.parquet"
    assert main(["rft-select", str(src), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "rbf_mean" in err and "--by random" in err
    assert not out.exists()
    # the entropy strategy works on the same table, default output path
    assert main(["rft-select", str(src), "--by", "entropy", "--budget", "5"]) == 0
    assert (tmp_path / "r.rft.parquet").exists() and (tmp_path / "r.rft.summary.json").exists()
    write_rollouts(table_of(rows, drop=("text",)), tmp_path / "nt.parquet")
    assert main(["rft-select", str(tmp_path / "nt.parquet"), "--by", "random"]) == 2


@pytest.mark.parametrize("by", ["rbf", "entropy", "random"])
def test_cli_streaming_selects_what_the_whole_table_selection_does(tmp_path, by, monkeypatch):
    """rft-select reads its table in batches (rules per batch, then the chosen rows again);
    with batches of 5 rows over 8 copies of the 42 rows it writes exactly the rows and
    cut texts that select_rft gives on the whole table in memory."""
    import rlvr_boundary.io.rollouts as R

    rows = []
    for k in range(8):
        for j, r in enumerate(make_rows()):
            rows.append({**r, "prompt_id": f"c{k}-{r['prompt_id']}",
                         "rbf_mean": r["rbf_mean"] + (k * 0.37) % 1,
                         "entropy_mean": r["entropy_mean"] + (k * 0.19) % 1})
    src = tmp_path / "r.jsonl"
    write_rollouts(table_of(rows), src)
    whole = read_rollouts(src)
    opts = RftOptions(budget=60, neg_frac=0.1, by=by, seed=5)
    col = {"rbf": "rbf_mean", "entropy": "entropy_mean", "random": None}[by]
    ref = select_rft(whole.column("text").to_pylist(),
                     whole.column("correct").to_numpy(zero_copy_only=False),
                     None if col is None else whole.column(col).to_numpy().astype(float), opts)
    monkeypatch.setattr(R, "BATCH_ROWS", 5)
    monkeypatch.setattr(R.iter_rollout_batches, "__kwdefaults__", {"batch_rows": 5,
                                                                   "required": R.REQUIRED_ROLLOUT})
    out = tmp_path / "sel.jsonl"
    assert main(["rft-select", str(src), "--budget", "60", "--neg-frac", "0.1", "--by", by,
                 "--seed", "5", "--out", str(out)]) == 0
    got = read_rollouts(out)
    assert got.column("text").to_pylist() == ref.texts
    expect = whole.take(pa.array(ref.indices, pa.int64()))
    for c in ("prompt_id", "sample_idx", "correct"):
        assert got.column(c).to_pylist() == expect.column(c).to_pylist()
    doc = json.loads((tmp_path / "sel.summary.json").read_text())
    assert doc["drops"] == ref.drop_counts() and doc["n_input"] == len(rows)


def test_cli_no_surviving_row_on_a_verify_output_writes_an_empty_table(tmp_path, capsys):
    """A graded table (with `verify_status`) where every row fails the rules: rft-select
    writes an empty selection with the drop counts, not an IndexError."""
    src = tmp_path / "r.jsonl"
    src.write_text("".join(json.dumps({"model": "m", "prompt_id": f"p{i // 2}",
                                       "sample_idx": i % 2, "text": "answer 42"}) + "\n"
                           for i in range(4)))
    gold = tmp_path / "gold.jsonl"
    gold.write_text('{"prompt_id": "p0", "answer": "7"}\n{"prompt_id": "p1", "answer": "7"}\n')
    graded = tmp_path / "g.parquet"
    assert main(["verify", str(src), "--gold", str(gold), "--out", str(graded),
                 "--workers", "1"]) == 0
    assert "verify_status" in read_rollouts(graded).column_names
    out = tmp_path / "x.parquet"
    capsys.readouterr()
    assert main(["rft-select", str(graded), "--budget", "100", "--by", "random",
                 "--out", str(out)]) == 0
    assert "4 samples -> 0 selected" in capsys.readouterr().out
    import pyarrow.parquet as pq
    assert pq.read_table(out).num_rows == 0
    doc = json.loads((tmp_path / "x.summary.json").read_text())
    assert doc["n_selected"] == 0 and doc["drops"]["no_boxed"] == 4
