"""What a person reads after ``compare`` and ``report``: words, flags, files, no Python leaking."""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rlvr_boundary.pipelines.audit import ReportOptions
from rlvr_boundary.pipelines.compare import CompareOptions
from rlvr_boundary.cli import build_parser, main
from tests.io.fixtures import tool_formats as tf

PY_LEAKS = re.compile(r"\bNone\b|\{'|\{\"|\[\]|np\.|array\(")


def _counts(path: Path, rows: list[tuple[str, int, int]]) -> Path:
    path.write_text("".join(json.dumps({"id": i, "n": n, "c": c}) + "\n" for i, n, c in rows))
    return path


def _run(capsys, argv) -> tuple[int, str, str]:
    code = main(argv)
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def test_example_headline_and_no_python_in_the_output(capsys):
    code, out, err = _run(capsys, ["compare", "--example"])
    assert code == 0 and err == ""
    # Seed 0 at B = 4,000 starts the loss at k = 60 (Monte Carlo error; k = 61 at large B).
    assert "RL helps up to k = 10 and hurts from k = 60." in out
    # The sentence behind it defines its terms; no nested parentheses anywhere.
    assert "k* = 22, the first budget where RL is behind" in out
    assert "the price, the largest loss over the grid, is 1.98 points at k = 128" in out
    assert "the first budget where RL is truly worse lies between k = 11 and k = 60" in out
    assert not PY_LEAKS.search(out), PY_LEAKS.search(out)
    assert not re.search(r"\([^()]*\(", out)
    # The README shows this output: it must stay true.
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    block = readme.split("On the example:\n\n```\n", 1)[1].split("```", 1)[0]
    for line in block.strip().splitlines():
        assert line in out, line


def test_rl_that_never_loses_prints_no_none(tmp_path, capsys):
    rows_b = [(f"p{i}", 8, i % 5) for i in range(30)]
    # i % 2: the differences vary at k = 1 too (a budget where every prompt differs by the
    # same amount gets no verdict: no variance to draw a band from)
    rows_r = [(f"p{i}", 8, min(8, i % 5 + 3 + i % 2)) for i in range(30)]
    b, r = _counts(tmp_path / "b.jsonl", rows_b), _counts(tmp_path / "r.jsonl", rows_r)
    code, out, _ = _run(capsys, ["compare", "--base", str(b), "--rl", str(r),
                                 "--bootstrap", "200"])
    assert code == 0
    assert "no k* on the grid; no price on the grid." in out
    assert "RL helps at every budget from k = 1 to 8." in out
    assert not PY_LEAKS.search(out)


def test_intersect_note_once_and_not_a_dict(tmp_path, capsys):
    b = _counts(tmp_path / "b.jsonl", [("a", 4, 1), ("b", 4, 2), ("c", 4, 0)])
    r = _counts(tmp_path / "r.jsonl", [("a", 4, 3), ("b", 4, 2), ("z", 4, 1)])
    code, out, err = _run(capsys, ["compare", "--base", str(b), "--rl", str(r), "--intersect",
                                   "--bootstrap", "50"])
    assert code == 0
    text = out + err
    assert text.count("Compared on the 2 prompts common to all models; dropped 1 from b, "
                      "1 from r.") == 1
    assert not PY_LEAKS.search(text)


def test_missing_argument_names_the_flag(tmp_path, capsys):
    b = _counts(tmp_path / "b.jsonl", [("a", 4, 1)])
    code, _, err = _run(capsys, ["compare", "--base", str(b)])
    assert code == 2 and "missing --rl FILE" in err and "field" not in err
    code, _, err = _run(capsys, ["compare"])
    assert code == 2 and "missing --base FILE and --rl FILE" in err
    code, _, err = _run(capsys, ["report", "--out", str(tmp_path / "x.html")])
    assert code == 2 and "missing ROLLOUTS" in err and "field" not in err
    code, _, err = _run(capsys, ["compare", "--example", "--bootstrap", "1"])
    assert code == 2 and "--bootstrap must be an integer >= 2" in err and "field" not in err


def test_piped_output_is_not_cut_at_80_columns(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "rlvr_boundary.cli", "compare", "--example",
                           "--bootstrap", "200"], capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": ":".join(sys.path)})
    assert proc.returncode == 0, proc.stderr
    assert "…" not in proc.stdout
    assert "inconclusive" in proc.stdout
    # Each sentence on one line, however long.
    assert any(len(line) > 200 and line.endswith("excludes zero.")
               for line in proc.stdout.splitlines())


def test_one_sample_per_prompt_says_so(tmp_path, capsys):
    b = _counts(tmp_path / "b.jsonl", [(f"p{i}", 1, i % 2) for i in range(20)])
    r = _counts(tmp_path / "r.jsonl", [(f"p{i}", 1, (i // 2) % 2) for i in range(20)])
    code, out, _ = _run(capsys, ["compare", "--base", str(b), "--rl", str(r),
                                 "--bootstrap", "50"])
    assert code == 0
    assert "pass@k beyond k = 1 needs repeated samples per prompt" in out


def test_label_path_equals_name_as_given_or_resolved(tmp_path, capsys, monkeypatch):
    b = _counts(tmp_path / "b.jsonl", [("a", 4, 1), ("b", 4, 2)])
    r = _counts(tmp_path / "r.jsonl", [("a", 4, 3), ("b", 4, 2)])
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "o.json"
    # --base given relative, its label given resolved; the other the other way round.
    code, _, err = _run(capsys, ["compare", "--base", "b.jsonl", "--rl", str(r),
                                 "--label", f"{b}=Qwen-base", "--label", "r.jsonl=Qwen-RL",
                                 "--bootstrap", "50", "--json", str(out)])
    assert code == 0, err
    assert json.loads(out.read_text())["models"] == {"base": "Qwen-base", "rl": "Qwen-RL"}
    code, _, err = _run(capsys, ["compare", "--base", "b.jsonl", "--rl", "r.jsonl",
                                 "--label", "nope.jsonl=x"])
    assert code == 2 and "nope.jsonl is not one of the inputs" in err
    html = tmp_path / "l.html"
    code, _, err = _run(capsys, ["report", "b.jsonl", "r.jsonl", "--label", "b.jsonl=base",
                                 "--label", f"{r}=tuned", "--out", str(html), "--bootstrap", "50",
                                 "--no-figures"])
    assert code == 0, err
    assert json.loads(html.with_suffix(".json").read_text())["models"] == ["base", "tuned"]


def test_compare_out_dir_writes_result_curves_and_figures(tmp_path, capsys):
    d = tmp_path / "cmp"
    code, out, _ = _run(capsys, ["compare", "--example", "--bootstrap", "300", "--out", str(d)])
    assert code == 0
    res = json.loads((d / "result.json").read_text())
    with open(d / "curves.csv", newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["k", "base_pass_at_k", "rl_pass_at_k", "diff", "band_lower", "band_upper",
                       "verdict"]
    assert len(rows) == 1 + len(res["ks"]) == 129
    base, rl = res["models"]["base"], res["models"]["rl"]
    for row, j in ((rows[1], 0), (rows[64], 63)):
        assert int(row[0]) == res["ks"][j]
        assert float(row[1]) == res["pass_at_k"][base][j]
        assert float(row[2]) == res["pass_at_k"][rl][j]
        assert float(row[3]) == res["diff"][j]
        assert float(row[4]) == res["band"]["lower"][j] and float(row[5]) == res["band"]["upper"][j]
        assert row[6] == res["verdict_per_k"][j]
    assert rows[1][6] == "gain" and rows[128][6] == "loss"
    # PNG figures by default; --pdf adds the PDFs (tests/cli/test_startup.py).
    assert sorted(p.name for p in d.iterdir()) == sorted(
        ["result.json", "curves.csv", "passk.png", "difference.png"])
    assert f"wrote {d / 'result.json'}" in out


def test_degenerate_budgets_are_ties_not_a_unit_band(tmp_path, capsys):
    # Every prompt has at least one correct sample for both models: at k = n = 4 both
    # solve every prompt, so D(4) has no spread: a tie, not a [-1, 1] band.
    b = _counts(tmp_path / "b.jsonl", [(f"p{i}", 4, 1 + i % 4) for i in range(12)])
    r = _counts(tmp_path / "r.jsonl", [(f"p{i}", 4, 1 + (i + 1) % 4) for i in range(12)])
    out = tmp_path / "o.json"
    code, text, _ = _run(capsys, ["compare", "--base", str(b), "--rl", str(r),
                                  "--bootstrap", "200", "--json", str(out)])
    assert code == 0
    res = json.loads(out.read_text())
    assert res["degenerate"] == [False, False, False, True]
    assert res["verdict_per_k"][3] == "tie"
    assert res["band"]["lower"][3] == res["band"]["upper"][3] == pytest.approx(0.0, abs=1e-12)
    assert "tie at k = 4, where every prompt is solved by both models or by neither" in text
    html = tmp_path / "d.html"
    code, _, _ = _run(capsys, ["report", str(b), str(r), "--label", f"{b}=base", "--out",
                               str(html), "--bootstrap", "200", "--no-figures"])
    assert code == 0
    a = json.loads(html.with_suffix(".json").read_text())
    row4 = next(r for r in a["advisor"] if r["k"] == 4)
    assert row4["tie"] is True and row4["supported"] is False and row4["band"] == [0.0, 0.0]
    page = html.read_text()
    advisor = page[page.index('<section id="advisor">'):page.index('<section id="coverage">')]
    assert '<span class="note">tie</span>' in advisor
    assert "pass@k (points)" in advisor and "lead (points)" in advisor
    # Every number of the advisor is in points: no fraction such as 0.0123 is left.
    assert "band (points)" in advisor
    assert not re.search(r"(?<![\d.])0\.(?!00\b)\d", re.sub(r"<[^>]+>", " ", advisor))


def test_no_blank_k_cells_when_nothing_is_lost(tmp_path, capsys):
    b = _counts(tmp_path / "b.jsonl", [(f"p{i}", 8, i % 5) for i in range(30)])
    r = _counts(tmp_path / "r.jsonl", [(f"p{i}", 8, min(8, i % 5 + 3 + i % 2)) for i in range(30)])
    html = tmp_path / "n.html"
    code, _, _ = _run(capsys, ["report", str(b), str(r), "--label", f"{b}=base", "--out",
                               str(html), "--bootstrap", "100", "--no-figures"])
    assert code == 0
    page = html.read_text()
    assert "at k = <" not in page and "at k = –" not in page and "k = None" not in page
    assert "None" not in re.sub(r"<code>.*?</code>", "", page)  # options JSON aside
    assert ">none</td>" in page  # the price cell says so
    assert "RL helps at every budget from k = 1 to 8." in page


def test_adapter_choices_are_reachable_from_the_cli(tmp_path, capsys):
    rng = np.random.default_rng(0)
    V = rng.random((9, 1)) < 0.5
    d = tf.lm_eval_dir(tmp_path, "m")
    f = tf.write_lm_eval_gsm8k(d, V)
    base = _counts(tmp_path / "b.jsonl", [(f"gsm8k/{i}", 1, int(i % 2)) for i in range(9)])
    out = tmp_path / "o.json"
    for filt, want in (("strict-match", V[:, 0].mean()), ("flexible-extract", 1.0)):
        code, text, err = _run(capsys, ["compare", "--base", str(base), "--rl", str(f),
                                        "--lm-eval-filter", filt, "--bootstrap", "50",
                                        "--json", str(out)])
        assert code == 0, err
        res = json.loads(out.read_text())
        assert res["pass_at_k"][res["models"]["rl"]][0] == pytest.approx(want)
        assert res["options"]["lm_eval_filter"] == filt
        assert "pass@k beyond k = 1 needs repeated samples per prompt" in text
    # A choice for a format no input has is refused, naming the flag.
    code, _, err = _run(capsys, ["compare", "--base", str(base), "--rl", str(base),
                                 "--verl-step", "3"])
    assert code == 2 and "--verl-step applies to verl inputs" in err

    W = rng.random((5, 6)) < 0.5
    g = tf.write_lighteval_new(tmp_path / f"details_aime24|0_{tf.STAMP}.parquet", W,
                               metrics=("avg@n:n={n}", "extractive_match"))
    html = tmp_path / "le.html"
    bl = _counts(tmp_path / "bl.jsonl", [(f"aime24|0/{i}", 1, 1) for i in range(5)])
    code, _, err = _run(capsys, ["report", str(bl), str(g), "--label", f"{bl}=base",
                                 "--lighteval-metric", "extractive_match", "--out", str(html),
                                 "--bootstrap", "50", "--no-figures"])
    assert code == 0, err
    a = json.loads(html.with_suffix(".json").read_text())
    rl = a["checkpoints"][0]
    assert a["n_samples"][rl] == {"min": 1, "max": 1}  # one sample: the 0/1 match
    assert a["pass_at_k"][rl][0] == pytest.approx(W[:, 0].mean())

    v = tmp_path / "verl"
    v.mkdir()
    for step, p in ((10, 0.2), (20, 0.8)):
        tf.write_verl_dump(v, step, rng.random((4, 3)) < p)
    html = tmp_path / "v.html"
    code, _, err = _run(capsys, ["report", str(v), "--verl-step", "20", "--out", str(html)])
    assert code == 2 and "needs a base and at least one checkpoint" in err and "step-20" in err
    code, _, err = _run(capsys, ["report", str(v), "--verl-step", "30", "--out", str(html)])
    assert code == 2 and "no dump of step 30; the directory holds steps 10, 20" in err


def _flag_defaults(verb: str) -> dict:
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    return {a.dest: a.default for a in sub.choices[verb]._actions}


def test_cli_defaults_are_the_dataclass_defaults():
    c = CompareOptions()
    r = ReportOptions()
    for verb in ("compare", "report"):
        got = _flag_defaults(verb)
        for name in ("ks", "bootstrap", "alpha", "seed", "intersect", "format", "lm_eval_filter",
                     "lm_eval_metric", "lighteval_metric", "verl_step"):
            assert got[name] == getattr(c, name), (verb, name)
    assert _flag_defaults("compare")["K_se"] == c.K_se
    got = _flag_defaults("report")
    for name in ("base", "k", "zeta", "top", "quality_sample"):
        assert got[name] == getattr(r, name), name
    assert got["figures"] is r.figures  # --no-figures clears it
    # Every option a user can set has a flag (the rest are derived or internal).
    settable = {f for f in CompareOptions.__dataclass_fields__ if f != "grid"}
    assert settable <= set(_flag_defaults("compare"))


def test_options_validate_once_with_the_flag_in_the_message():
    from rlvr_boundary.errors import InputError

    for kw, msg in (({"bootstrap": 1}, "--bootstrap"), ({"alpha": 1.0}, "--alpha"),
                    ({"ks": "3-1"}, "--ks"), ({"ks": "0,1"}, "--ks")):
        with pytest.raises(InputError, match=msg):
            CompareOptions(**kw)
    assert CompareOptions(ks="1-4,8").grid == [1, 2, 3, 4, 8]
    with pytest.raises(InputError, match="--zeta"):
        ReportOptions(zeta=0)
    r = ReportOptions(compare={"ks": "pow2", "bootstrap": 10, "grid": "ignored"})
    assert r.compare.grid == "pow2" and r.compare.bootstrap == 10
