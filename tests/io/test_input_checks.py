"""Input checks that cannot be fooled: exact ids, monotone curves, unique names, bounded reads."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rlvr_boundary.errors import InputError
from rlvr_boundary.io.formats import load_counts, parse_price_table
from rlvr_boundary.io.matrix import parse_matrix
from rlvr_boundary.io.text import iter_json_lines
from tests.fuzz.harness import run_cli

# ----------------------------------------------------------------------------- ids


def test_ids_that_differ_only_in_invalid_bytes_are_refused_not_merged(tmp_path):
    (tmp_path / "b.jsonl").write_bytes(b'{"id": "p5\xff\xfe", "n": 4, "c": 1}\n'
                                       b'{"id": "q", "n": 4, "c": 1}\n')
    (tmp_path / "r.jsonl").write_bytes(b'{"id": "q", "n": 4, "c": 1}\n'
                                       b'{"id": "p5\xff\xfd", "n": 4, "c": 3}\n')
    with pytest.raises(InputError) as e:
        load_counts(tmp_path / "r.jsonl")
    assert (e.value.line, e.value.field) == (2, "id") and "not valid UTF-8" in str(e.value)
    code, err = run_cli(tmp_path, ["compare", "--base", "b.jsonl", "--rl", "r.jsonl"])
    assert code == 2 and "b.jsonl:1, field 'id'" in err


@pytest.mark.parametrize("line, field", [
    (b'{"prompt_id": "a\xff", "model": "m", "sample_idx": 0, "correct": true}', "prompt_id"),
    (b'{"prompt_id": "a", "model": "m\xfe", "sample_idx": 0, "correct": true}', "model"),
    (b'{"prompt_id": "a\\udcff", "model": "m", "sample_idx": 0, "correct": true}', "prompt_id"),
    (b'{"custom_id": "r\xff", "response": {}}', "custom_id"),
    (b'{"doc": {"id": "x\\ud800"}, "n": 1}', "id"),
])
def test_an_id_with_invalid_bytes_or_a_lone_surrogate_is_refused(tmp_path, line, field):
    (tmp_path / "x.jsonl").write_bytes(b'{"prompt_id": "ok"}\n' + line + b"\n")
    with pytest.raises(InputError) as e:
        list(iter_json_lines(tmp_path / "x.jsonl"))
    assert (e.value.line, e.value.field) == (2, field)


def test_invalid_bytes_in_model_text_are_still_replaced(tmp_path):
    (tmp_path / "x.jsonl").write_bytes(b'{"prompt_id": "a", "text": "so \xff\xfe \\udcff 4"}\n')
    (_, obj), = iter_json_lines(tmp_path / "x.jsonl")
    assert obj["prompt_id"] == "a" and "\ufffd" in obj["text"]


def test_a_genuine_replacement_character_in_an_id_is_kept(tmp_path):
    """U+FFFD written as valid UTF-8 is a character like any other: no bytes were lost."""
    (tmp_path / "x.jsonl").write_text('{"id": "p\ufffd", "n": 2, "c": 1}\n', encoding="utf-8")
    ct, = load_counts(tmp_path / "x.jsonl")
    assert ct.prompt_ids.tolist() == ["p\ufffd"]


def test_a_count_table_csv_that_is_not_utf8_is_refused_at_the_line(tmp_path):
    (tmp_path / "t.csv").write_bytes(b"prompt_id,model,n,c\na,m,4,1\np5\xff\xfe,m,4,1\n")
    with pytest.raises(InputError, match="not valid UTF-8") as e:
        load_counts(tmp_path / "t.csv")
    assert e.value.line == 3


# ----------------------------------------------------------------------------- published curves


@pytest.mark.parametrize("text, line, field, message", [
    ("k,base,rl\n1,0.5,0.6\n2,0.3,0.4\n4,0.1,0.05\n", 3, "base", "falls from 0.5 at k = 1"),
    ("k,base,rl\n1,0.2,0.6\n4,0.3,0.5\n", 3, "rl", "falls from 0.6 at k = 1 to 0.5 at k = 4"),
    ("1 0.2 0.3\n4 0.3 0.3\n4 0.4 0.4\n", 3, "k", "increase down the rows"),
    ("k,base,rl\n1,20,30\n", 2, "base", "fractions, not percent"),
    ("k,base,rl\n0,0.1,0.2\n", 2, "k", "k must be > 0"),
])
def test_a_curve_that_is_not_a_pass_at_k_curve_is_refused(text, line, field, message):
    with pytest.raises(InputError) as e:
        parse_price_table(text, "<pasted>")
    assert message in str(e.value)
    assert (e.value.line, e.value.field) == (line, field)


def test_the_published_anchor_and_flat_stretches_are_accepted(tmp_path):
    text = "k, base, GRPO\n1, .102, .251\n4, .224, .368\n16, .392, .496\n64, .578, .608\n" \
           "256, .691, .683\n"
    kind, header, curve, _ = parse_price_table(text, "<pasted>")
    assert kind == "curve" and curve.shape == (5, 3)
    parse_price_table("1 0.5 0.5\n2 0.5 0.5\n", "<pasted>")  # equal values: allowed
    (tmp_path / "dec.csv").write_text("k,base,rl\n1,0.5,0.6\n2,0.3,0.4\n4,0.1,0.05\n")
    code, err = run_cli(tmp_path, ["price", "dec.csv"])
    assert code == 2 and "dec.csv:3, field 'base'" in err and "k* =" not in err


# ----------------------------------------------------------------------------- theory matrix


@pytest.mark.parametrize("text, line, message", [
    ("strategy,pi0,p1,p1,p3\nA,0.5,0.9,0.1,0.5\nB,0.5,0.2,0.8,0.5\n", 1,
     "prompt id 'p1' names columns 3 and 4"),
    ("strategy,pi0,p1,p2\nA,0.5,0.9,0.1\nA,0.5,0.2,0.8\n", 3,
     "strategy 'A' appears twice (first on line 2)"),
    ("strategy,pi0,p1,,p3\nA,1,0.9,0.1,0.5\n", 1, "column 4 of the header has no prompt id"),
    ("strategy,pi0,p1\n,1,0.9\n", 2, "a strategy needs a name"),
])
def test_duplicate_or_empty_names_in_a_matrix_are_refused(text, line, message):
    with pytest.raises(InputError) as e:
        parse_matrix(text, "m.csv")
    assert message in str(e.value)
    assert e.value.line == line


def test_theory_diagnose_refuses_duplicate_columns_from_the_cli(tmp_path):
    (tmp_path / "m.csv").write_text("strategy,pi0,p1,p1\nA,0.5,0.9,0.1\nB,0.5,0.2,0.8\n")
    code, err = run_cli(tmp_path, ["theory", "diagnose", "m.csv"])
    assert code == 2 and "m.csv:1, field 'p1'" in err


def test_unique_names_parse_as_before():
    names, pi0, F, prompts = parse_matrix("strategy,pi0,a,b\nS,0.25,1,0\nT,0.75,0,1\n", "m")
    assert names == ["S", "T"] and prompts == ["a", "b"]
    assert np.allclose(pi0, [0.25, 0.75]) and F.tolist() == [[1, 0], [0, 1]]


def test_read_json_lines_round_trip(tmp_path):
    rows = [{"id": "a\u00e9", "n": 2, "c": 1}, {"id": "\u4e2d", "n": 2, "c": 0}]
    (tmp_path / "x.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))  # \\u escapes
    assert [o for _, o in iter_json_lines(tmp_path / "x.jsonl")] == rows


# ----------------------------------------------------------------------------- bounded CSV records


def test_csv_records_line_numbers_quotes_bom_and_blank_lines(tmp_path):
    from rlvr_boundary.io.text import iter_csv_records

    (tmp_path / "g.csv").write_bytes(b'\xef\xbb\xbfprompt_id,answer\n\na,"1,2"\n'
                                     b'b,"two\nlines"\n\nc,3\n')
    got = list(iter_csv_records(tmp_path / "g.csv"))
    assert got == [(3, {"prompt_id": "a", "answer": "1,2"}),
                   (4, {"prompt_id": "b", "answer": "two\nlines"}),
                   (7, {"prompt_id": "c", "answer": "3"})]
    (tmp_path / "t.tsv").write_text("id\tanswer\nx\t4\n")
    assert list(iter_csv_records(tmp_path / "t.tsv")) == [(2, {"id": "x", "answer": "4"})]
    (tmp_path / "w.csv").write_text("a,b\n1,2,3\n")
    with pytest.raises(InputError, match="row has 3 values, the header has 2"):
        list(iter_csv_records(tmp_path / "w.csv"))


def test_a_gold_csv_without_newlines_is_refused_unread(tmp_path, monkeypatch):
    """The same reader as a 2 GB file without newlines (benchmarks/fuzz_catalogue.py runs
    that one), with the line limit lowered so the test stays small."""
    import rlvr_boundary.io.text as T

    monkeypatch.setattr(T, "MAX_LINE_BYTES", 1000)
    (tmp_path / "gold.csv").write_text("prompt_id,answer\n" + "a" * 5000)
    (tmp_path / "raw.jsonl").write_text('{"prompt_id": "a", "model": "m", "sample_idx": 0, '
                                        '"text": "4"}\n')
    code, err = run_cli(tmp_path, ["verify", "raw.jsonl", "--gold", "gold.csv", "--backend",
                                   "canonical", "--out", "v.parquet"])
    assert code == 2 and "gold.csv:2: line is longer than" in err
    assert not (tmp_path / "v.parquet").exists()


@pytest.mark.parametrize("data", [b"", b"\n\n", b"a", b"a\n", b"a\n\n b \n  \nc", b" \n" * 5,
                                  b"x" * 3000 + b"\n" + b"y" * 10])
def test_count_nonblank_lines_equals_the_line_loop(tmp_path, data):
    from rlvr_boundary.io.text import count_nonblank_lines

    (tmp_path / "f.jsonl").write_bytes(data)
    ref = sum(1 for line in data.split(b"\n") if line.strip())
    assert count_nonblank_lines(tmp_path / "f.jsonl", chunk=7) == ref


# ----------------------------------------------------------------------------- size caps


def test_more_prompt_model_pairs_than_the_cap_are_refused_while_reading(tmp_path, monkeypatch):
    """The cap is a million pairs (about 0.9 GB compared); lowered to 3 here."""
    import rlvr_boundary.io.counts as C
    import rlvr_boundary.io.formats as F
    import rlvr_boundary.io.rollouts as R

    monkeypatch.setattr(C, "MAX_PAIRS", 3)
    monkeypatch.setattr(F, "MAX_PAIRS", 3)
    monkeypatch.setattr(R, "MAX_PAIRS", 3)
    (tmp_path / "c.jsonl").write_text("".join(json.dumps({"id": f"p{i}", "n": 2, "c": 1}) + "\n"
                                              for i in range(5)))
    with pytest.raises(InputError, match="more than 3 \\(prompt, model\\) pairs") as e:
        load_counts(tmp_path / "c.jsonl")
    assert e.value.line == 4
    (tmp_path / "t.csv").write_text("prompt_id,model,n,c\n" + "".join(
        f"p{i},m,2,1\n" for i in range(5)))
    with pytest.raises(InputError, match="pairs in one input"):
        load_counts(tmp_path / "t.csv")
    (tmp_path / "r.jsonl").write_text("".join(json.dumps(
        {"prompt_id": f"p{i}", "model": "m", "sample_idx": 0, "correct": True}) + "\n"
        for i in range(5)))
    with pytest.raises(InputError, match="pairs in one input"):
        load_counts(tmp_path / "r.jsonl")
    (tmp_path / "ok.jsonl").write_text("".join(json.dumps({"id": f"p{i}", "n": 2, "c": 1})
                                               + "\n" for i in range(3)))
    assert load_counts(tmp_path / "ok.jsonl")[0].n.size == 3


def test_matrix_size_caps(monkeypatch):
    import rlvr_boundary.io.matrix as M

    monkeypatch.setattr(M, "MAX_PROMPTS", 3)
    monkeypatch.setattr(M, "MAX_CELLS", 6)
    with pytest.raises(InputError, match="more than 3 columns") as e:
        parse_matrix("strategy,pi0,a,b,c,d,e,f\nA,1,0,0,0,0,0,0\n", "m")
    assert e.value.line == 1
    with pytest.raises(InputError, match="more than 6 fitness values") as e:
        parse_matrix("strategy,pi0,a,b,c\nA,0.5,0,0,0\nB,0.5,1,1,1\nC,0,1,1,1\n", "m")
    assert e.value.line == 4
    names, *_ = parse_matrix("strategy,pi0,a,b,c\nA,0.5,0,0,0\nB,0.5,1,1,1\n", "m")
    assert names == ["A", "B"]
