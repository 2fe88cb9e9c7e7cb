"""The catalogue of bad inputs (docs/reliability.md, "Inputs"): what each one gets.

Each case is written as a user (or an attacker) would: a file on disk and the
command line, run through ``main``. The expected outcome is exit code 2 and a
message naming the file, line and field where there is one, or, where the input
is fine after all, exit 0 and the right numbers.
"""

from __future__ import annotations

import json
import logging

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr_boundary.analysis.price import crossing_bound_from_histograms, rate_histogram
from rlvr_boundary.core.compare import crossing_bound
from rlvr_boundary.io.formats import load_counts
from rlvr_boundary.report.html import esc
from tests.fuzz.harness import _rollout_rows, run_cli


def _counts(rows):
    return "".join(json.dumps(r) + "\n" for r in rows)


GOOD_RL = _counts([{"id": "a", "n": 4, "c": 2}, {"id": "b", "n": 4, "c": 1}])


def _compare(tmp_path, base_text, name="base.jsonl", extra=()):
    (tmp_path / name).write_text(base_text, encoding="utf-8")
    (tmp_path / "rl.jsonl").write_text(GOOD_RL)
    return run_cli(tmp_path, ["compare", "--base", name, "--rl", "rl.jsonl", "--ks", "1-4",
                              "--bootstrap", "20", *extra])


@pytest.mark.parametrize("n, message", [
    ("1e30", "larger than the largest accepted"),
    (str(10**30), "larger than the largest accepted"),
    ('"4"', "expected an integer count, found '4'"),
    ('"\\u0663"', "expected an integer count"),
    ("true", "found boolean True"),
    ("4.5", "found 4.5"),
    ("NaN", "found nan"),
    ("-1", "counts must be >= 0"),
])
def test_jsonl_counts_refused_with_line_and_field(tmp_path, n, message):
    text = '{"id": "a", "n": 4, "c": 1}\n\n{"id": "b", "n": ' + n + ', "c": 1}\n'
    code, err = _compare(tmp_path, text)
    assert code == 2 and "Traceback" not in err
    assert "base.jsonl:3, field 'n'" in err and message in err


def test_integral_float_counts_mean_the_same_in_jsonl_and_csv(tmp_path):
    (tmp_path / "a.jsonl").write_text('{"id": "a", "n": 4.0, "c": 2.0}\n')
    (tmp_path / "a.csv").write_text("prompt_id,n,c\na,4.0,2\n")
    j, = load_counts(tmp_path / "a.jsonl")
    c, = load_counts(tmp_path / "a.csv")
    assert (j.n.tolist(), j.c.tolist()) == (c.n.tolist(), c.c.tolist()) == ([4], [2])


@pytest.mark.parametrize("cell, message", [
    ("\u0663", "expected an integer count"),     # Arabic-Indic three
    ("\uff13", "expected an integer count"),     # fullwidth three
    ("1e3", "expected an integer count"),
    ("1_000", "expected an integer count"),
    ("1" + "0" * 40, "larger than the largest accepted"),
    ("4.5", "expected an integer count"),
])
def test_csv_counts_ascii_digits_only(tmp_path, cell, message):
    (tmp_path / "t.csv").write_text(f"prompt_id,model,n,c\na,m,4,1\n\nb,m,{cell},1\n",
                                    encoding="utf-8")
    code, err = run_cli(tmp_path, ["report", "t.csv", "--no-figures"])
    assert code == 2 and "t.csv:4, field 'n'" in err and message in err


def test_csv_with_byte_order_mark_reads_its_header(tmp_path):
    (tmp_path / "t.csv").write_bytes("\ufeffprompt_id,model,n,c\na,m,4,1\n".encode())
    ct, = load_counts(tmp_path / "t.csv")
    assert ct.prompt_ids.tolist() == ["a"] and ct.model == "m"


def test_csv_field_of_128_kb_is_read_and_a_long_line_is_refused(tmp_path, monkeypatch):
    big = "p" * 131_073
    (tmp_path / "t.csv").write_text(f"prompt_id,model,n,c\n{big},m,4,1\n")
    ct, = load_counts(tmp_path / "t.csv")
    assert ct.prompt_ids[0] == big
    import rlvr_boundary.io.text as R

    monkeypatch.setattr(R, "MAX_LINE_BYTES", 1000)
    (tmp_path / "u.jsonl").write_text('{"id": "a", "n": 4, "c": 1}\n{"id": "' + "x" * 2000
                                      + '", "n": 4, "c": 1}\n')
    code, err = run_cli(tmp_path, ["compare", "--base", "u.jsonl", "--rl", "u.jsonl"])
    assert code == 2 and "u.jsonl:2: line is longer than" in err


def test_price_with_byte_order_mark_keeps_the_first_row(tmp_path):
    (tmp_path / "r.csv").write_bytes(b"\xef\xbb\xbf0.5,0.25\n0.1,0.2\n0.3,0.9\n")
    code, err = run_cli(tmp_path, ["price", "r.csv", "--json", "p.json"])
    assert code == 0, err
    assert json.loads((tmp_path / "p.json").read_text())["n_prompts"] == 3


def test_error_lines_count_blank_lines(tmp_path):
    (tmp_path / "r.csv").write_text("base,rl\n\n0.5,0.2\n\n\n0.1,x\n")
    code, err = run_cli(tmp_path, ["price", "r.csv"])
    assert code == 2 and "r.csv:6: expected numbers" in err
    (tmp_path / "m.csv").write_text("strategy,pi0,p1\n\nA,0.5,0.3\n\nB,0.5,abc\n")
    code, err = run_cli(tmp_path, ["theory", "diagnose", "m.csv"])
    assert code == 2 and "m.csv:5: expected numbers" in err


def test_unsigned_64_bit_parquet_counts_are_not_read_as_negative(tmp_path):
    pq.write_table(pa.table({"prompt_id": ["a", "b"], "model": ["m", "m"],
                             "n": pa.array([4, 2**64 - 1], pa.uint64()),
                             "c": pa.array([1, 1], pa.uint64())}), tmp_path / "t.parquet")
    code, err = run_cli(tmp_path, ["report", "t.parquet", "--no-figures"])
    assert code == 2 and "t.parquet:2, field 'n'" in err and "-1" not in err
    rows = _rollout_rows("m", np.ones((1, 2), bool))
    t = pa.Table.from_pylist(rows).set_column(
        2, "sample_idx", pa.array([0, 2**64 - 1], pa.uint64()))
    pq.write_table(t, tmp_path / "r.parquet")
    code, err = run_cli(tmp_path, ["report", "r.parquet", "--no-figures"])
    assert code == 2 and "r.parquet:2, field 'sample_idx'" in err and "out of range" in err


@pytest.mark.parametrize("arr", [
    pa.array([{"a": 1}, {"a": 2}], pa.struct([("a", pa.int64())])),
    pa.array([b"a", b"b"], pa.binary()),
])
def test_struct_or_binary_ids_are_refused(tmp_path, arr):
    pq.write_table(pa.table({"prompt_id": arr, "model": ["m", "m"], "n": [4, 4], "c": [1, 1]}),
                   tmp_path / "t.parquet")
    code, err = run_cli(tmp_path, ["report", "t.parquet", "--no-figures"])
    assert code == 2 and "field 'prompt_id'" in err and "string or integer" in err
    t = pa.Table.from_pylist(_rollout_rows("m", np.ones((2, 1), bool)))
    pq.write_table(t.set_column(0, "prompt_id", arr), tmp_path / "r.parquet")
    code, err = run_cli(tmp_path, ["report", "r.parquet", "--no-figures"])
    assert code == 2 and "field 'prompt_id'" in err and "expected a string" in err


@pytest.mark.parametrize("flags, message", [
    (["--seed", "-1"], "--seed must be an integer from 0"),
    (["--K-se", "7"], "--K-se 7 is not a budget of the grid"),
    (["--bootstrap", "1000000001"], "--bootstrap must be an integer >= 2 and at most 1,000,000"),
    (["--ks", "1-1000000000000"], "a grid holds at most"),
    (["--ks", "1-\u0663"], "cannot parse the budget grid"),
])
def test_flags_out_of_range(tmp_path, flags, message):
    code, err = _compare(tmp_path, GOOD_RL, extra=flags)
    assert code == 2 and message in err


def test_grid_too_large_for_memory_refused_before_it_is_built(tmp_path):
    rows = [{"id": f"p{i}", "n": 100_000, "c": i % 7} for i in range(101)]
    (tmp_path / "a.jsonl").write_text(_counts(rows))
    (tmp_path / "b.jsonl").write_text(_counts(rows))
    code, err = run_cli(tmp_path, ["compare", "--base", "a.jsonl", "--rl", "b.jsonl",
                                   "--ks", "1-100000"])
    assert code == 2 and "101 prompts x 100,000 budgets" in err


@pytest.mark.parametrize("argv, message", [
    (["report", "a.json", "b.jsonl", "--out", "a.html"], "would overwrite the input a.json"),
    (["report", "a.json", "b.jsonl", "--out", "b.html", "--no-figures"],
     "would overwrite the input"),  # b.json is not b.jsonl: allowed? see below
    (["compare", "--base", "a.json", "--rl", "b.jsonl", "--json", "a.json"],
     "would overwrite the input a.json"),
    (["compare", "--base", "a.json", "--rl", "b.jsonl", "--json", "d"], "is a directory"),
    (["compare", "--base", "a.json", "--rl", "b.jsonl", "--json", "a.json/x.json"],
     "a.json is not a directory"),
    (["compare", "--base", "a.json", "--rl", "b.jsonl", "--out", "a.json"],
     "a.json is not a directory"),
    (["price", "r.csv", "--json", "r.csv"], "would overwrite the input r.csv"),
    (["rft-select", "roll.jsonl", "--out", "roll.jsonl"], "would overwrite the input"),
    (["rft-select", "roll.jsonl", "--out", "roll.parquet"], "its manifest"),
])
def test_outputs_that_would_overwrite_inputs_or_cannot_be_written(tmp_path, argv, message):
    (tmp_path / "a.json").write_text(GOOD_RL)
    (tmp_path / "b.jsonl").write_text(GOOD_RL.replace('"c": 1', '"c": 3'))
    (tmp_path / "d").mkdir()
    (tmp_path / "r.csv").write_text("0.5,0.2\n0.1,0.3\n")
    (tmp_path / "roll.jsonl").write_text(_counts(_rollout_rows("m", np.ones((2, 2), bool))))
    (tmp_path / "roll.manifest.json").write_text('{"model": "m"}')
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    code, err = run_cli(tmp_path, argv)
    if argv[-2:] == ["b.html", "--no-figures"]:
        assert code == 0, err  # b.json beside b.html is a new file, not the input b.jsonl
    else:
        assert code == 2 and message in err, err
    for name, data in before.items():
        assert (tmp_path / name).read_bytes() == data, f"{name} was changed"


def test_invalid_utf8_in_a_rollout_line_is_replaced_and_counted(tmp_path, caplog):
    rows = _rollout_rows("base", np.ones((2, 2), bool)) + _rollout_rows("rl", np.zeros((2, 2),
                                                                                       bool))
    lines = [json.dumps(r).encode() for r in rows]
    lines[1] = lines[1].replace(b"so ", b"so \xff\xfe ")
    (tmp_path / "r.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    with caplog.at_level(logging.WARNING):
        code, err = run_cli(tmp_path, ["report", "r.jsonl", "--no-figures"])
    assert code == 0, err
    assert "1 line(s) held bytes that are not UTF-8" in caplog.text


@pytest.mark.parametrize("record, message", [
    ({"custom_id": "r", "response": True}, "field 'response'"),
    ({"custom_id": {"a": 1}, "response": {"body": {"choices": [{"index": 0, "message": {
        "content": "x"}}]}}, "score": [1]}, "field 'custom_id'"),
    ({"request_id": "1", "outputs": [{"text": "a", "index": None, "correct": True}]},
     "outputs[].index"),
])
def test_adapter_records_with_one_field_of_the_wrong_type(tmp_path, record, message):
    (tmp_path / "g.jsonl").write_text(json.dumps(record) + "\n")
    code, err = run_cli(tmp_path, ["compare", "--base", "g.jsonl", "--rl", "g.jsonl",
                                   "--format", "vllm-jsonl"])
    assert code == 2 and message in err and "Traceback" not in err


def test_bidi_controls_are_shown_visibly_on_the_page():
    assert esc("x = 1\u202e; evil\u2066") == "x = 1[U+202E]; evil[U+2066]"
    assert esc("<b>") == "&lt;b&gt;"


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.integers(0, 8), st.integers(0, 8)), min_size=1, max_size=40),
       st.sampled_from([None, 1, 2]))
def test_bound_from_histograms_equals_the_row_wise_bound(pairs, decimals):
    """Reference (core, row by row) against the streaming form (histograms)."""
    pb = np.array([a / 8 for a, _ in pairs])
    pr = np.array([b / 8 for _, b in pairs])
    ref = crossing_bound(pb, pr, decimals=decimals)
    got = crossing_bound_from_histograms(rate_histogram(pb), rate_histogram(pr),
                                         decimals=decimals)
    assert got["V"] == ref["V"] and got["bound"] == ref["bound"]
    assert got["zero_at_k0"] == ref["zero_at_k0"]
    assert np.allclose(got["q"], ref["q"]) and np.allclose(got["a"], ref["a"])


def test_a_failed_run_leaves_no_partial_outputs(tmp_path, monkeypatch):
    """The page or figures fail after the result JSON was written: nothing is left."""
    import rlvr_boundary.report.build as R
    import rlvr_boundary.report.compare_figures as CF

    (tmp_path / "a.jsonl").write_text(GOOD_RL)
    (tmp_path / "b.jsonl").write_text(GOOD_RL.replace('"c": 1', '"c": 3'))

    def boom(*a, **k):
        raise R.InputError("figure failed")

    monkeypatch.setattr(R, "render_report", boom)
    monkeypatch.setattr(CF, "render_compare_figures", boom)
    before = sorted(p.name for p in tmp_path.iterdir())
    code, err = run_cli(tmp_path, ["report", "a.jsonl", "b.jsonl", "--out", "r.html"])
    assert code == 2 and "figure failed" in err
    code, err = run_cli(tmp_path, ["compare", "--base", "a.jsonl", "--rl", "b.jsonl",
                                   "--json", "c.json", "--out", "cmp"])
    assert code == 2 and "figure failed" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == before


@pytest.mark.slow
@pytest.mark.parametrize("seed", ["count-parquet", "rollouts-parquet", "lighteval"])
def test_every_byte_of_a_parquet_footer_flipped(tmp_path, seed):
    """Exhaustive over the footer (schema, column names, offsets): read or InputError."""
    from rlvr_boundary.errors import InputError
    from rlvr_boundary.io.inputs import load_inputs
    from tests.fuzz.harness import build

    case = build(tmp_path, seed)
    path = tmp_path / case.files[0]
    data = path.read_bytes()
    footer = int.from_bytes(data[-8:-4], "little") + 8
    outcomes = {"ok": 0, "error": 0}
    for pos in range(len(data) - footer, len(data)):
        bad = bytearray(data)
        bad[pos] ^= 0xA5
        path.write_bytes(bytes(bad))
        try:
            load_inputs([path], facts=True)
            outcomes["ok"] += 1
        except InputError:
            outcomes["error"] += 1
    assert outcomes["error"] > 0 and sum(outcomes.values()) == footer


def test_oversized_result_and_manifest_files_are_refused_unread(tmp_path, monkeypatch):
    import rlvr_boundary.io.results as RS

    monkeypatch.setattr(RS, "MAX_RESULT_BYTES", 1000)
    (tmp_path / "r.json").write_text("[" * 5000)
    code, err = run_cli(tmp_path, ["report", "--from", "r.json", "--out", "x.html"])
    assert code == 2 and "larger than 0 MB: not a result file" in err
    monkeypatch.setattr(RS, "MAX_RESULT_BYTES", 1 << 20)
    code, err = run_cli(tmp_path, ["report", "--from", "r.json", "--out", "x.html"])
    assert code == 2 and "r.json" in err  # deep nesting or invalid JSON: located, no traceback


def test_price_fast_path_equals_line_by_line_and_names_late_bad_lines(tmp_path):
    """70,000 rows: the block fast path and the line path agree; an error past the first
    block is named at its file line (blank lines and a comment counted)."""
    rng = np.random.default_rng(7)
    c = rng.integers(0, 17, size=(70_000, 2)) / 16
    lines = [f"{a},{b}" for a, b in c.tolist()]
    (tmp_path / "fast.csv").write_text("base,rl\n" + "\n".join(lines) + "\n")
    # the same rows with spaces after the comma: every line takes the line-by-line path
    (tmp_path / "slow.csv").write_text("base,rl\n" + "\n".join(x.replace(",", ", ")
                                                               for x in lines) + "\n")
    docs = []
    for name in ("fast", "slow"):
        code, err = run_cli(tmp_path, ["price", f"{name}.csv", "--ks", "1-64", "--json",
                                       f"{name}.json"])
        assert code == 0, err
        docs.append(json.loads((tmp_path / f"{name}.json").read_text()))
    for key in ("n_prompts", "crossing_bound", "k_star", "price_k", "asymptotic_diff"):
        assert docs[0][key] == docs[1][key]
    assert np.allclose(docs[0]["diff"], docs[1]["diff"], atol=1e-12)
    bad = lines[:]
    bad[68_000] = "0.5,1.5"
    (tmp_path / "bad.csv").write_text("base,rl\n\n# note\n" + "\n".join(bad) + "\n")
    code, err = run_cli(tmp_path, ["price", "bad.csv"])
    assert code == 2 and f"bad.csv:{68_000 + 4}: success rates must lie in [0, 1]" in err


def test_pasted_price_table_reads_as_the_same_file(tmp_path):
    """parse_price_table (pasted text) and read_price_table (a file) share one parser."""
    from rlvr_boundary.errors import InputError
    from rlvr_boundary.io.formats import parse_price_table, read_price_table

    text = "\ufeffbase,rl\n\n# a comment\n0.5,0.25\n0.1,0.2\n0.5,0.9\n"
    (tmp_path / "r.csv").write_text(text, encoding="utf-8")
    k1, h1, v1, _ = read_price_table(str(tmp_path / "r.csv"))
    k2, h2, v2, src = parse_price_table(text, "<pasted>")
    assert (k1, h1, src) == (k2, h2, "<pasted>") and k1 == "rates" and h1 == ["base", "rl"]
    assert v1["n"] == v2["n"] == 3
    for m in ("base", "rl"):
        assert np.array_equal(v1[m][0], v2[m][0]) and np.array_equal(v1[m][1], v2[m][1])
    assert v2["base"][0].tolist() == [0.1, 0.5] and v2["base"][1].tolist() == [1, 2]
    with pytest.raises(InputError, match="<pasted>:6: success rates must lie in"):
        parse_price_table(text.replace("0.5,0.9", "0.5,1.9"), "<pasted>")
    kind, _, curve, _ = parse_price_table("1 0.2 0.3\n4 0.5 0.5\n", "<pasted>")
    assert kind == "curve" and curve.tolist() == [[1, 0.2, 0.3], [4, 0.5, 0.5]]
