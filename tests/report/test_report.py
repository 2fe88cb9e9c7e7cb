"""``rlvr-boundary report`` end to end: numbers, sections, escaping, figures, errors."""

from __future__ import annotations

import json
import re

import numpy as np
import pyarrow.compute as pc
import pytest

from rlvr_boundary.analysis.audit import build_audit, step_of
from rlvr_boundary.pipelines.audit import ReportOptions
from rlvr_boundary.pipelines.compare import CompareOptions
from rlvr_boundary.cli import main
from rlvr_boundary.analysis.aligned import align
from rlvr_boundary.io.rollouts import reduce_counts, write_rollouts
from rlvr_boundary.report.html import SECTIONS
from tests.report.fixtures import synthetic_rollouts


@pytest.fixture(scope="module")
def rollout_report(tmp_path_factory):
    d = tmp_path_factory.mktemp("rep")
    table = synthetic_rollouts()
    path = d / "rollouts.parquet"
    write_rollouts(table, path, manifest={"sampling": {"temperature": 0.6, "n": 16}})
    out = d / "audit.html"
    assert main(["report", str(path), "--out", str(out), "--bootstrap", "300", "--k", "16"]) == 0
    return {"table": table, "path": path, "html": out.read_text(),
            "json": json.loads(out.with_suffix(".json").read_text()), "dir": d}


def test_example_report(tmp_path, capsys):
    # Its speed is measured in benchmarks/, not here: a shared machine makes timed tests flaky.
    out = tmp_path / "r.html"
    assert main(["report", "--example", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    # The loss start moves with the Monte Carlo draw at B = 4,000 (60-63 over seeds, 61 at
    # large B); see tests/cli/test_compare_cli.py.
    assert re.search(r"RL helps up to k = 10 and hurts from k = 6[0-3]\.", text)
    assert "is 1.98 points at k = 128" in text
    page = out.read_text()
    for sid, _ in SECTIONS:  # a section, or a line of the "what would fill" list
        assert f'<section id="{sid}">' in page or f'<li id="{sid}">' in page
    data = json.loads(out.with_suffix(".json").read_text())
    assert data["kind"] == "report" and data["options"]["compare"]["bootstrap"] == 4000
    # Coverage and support agree: P + S = base solved, P + E = RL solved (SPEC section 2).
    base, rl = data["base"], data["checkpoints"][0]
    s = data["support"]["problem"][rl]
    assert (s["P"], s["E"], s["S"], s["O"]) == (911, 12, 33, 104)
    assert s["P"] + s["S"] == data["coverage"]["solved"][base] == 944
    assert s["P"] + s["E"] == data["coverage"]["solved"][rl] == 923
    # Sections without data say what would fill them.
    assert "Quality flags need the completion text" in page
    assert "passk-inference" in page  # attribution of the example data
    assert sorted(p.name for p in (tmp_path / "r_figures").iterdir()) == sorted(
        f"{n}.{e}" for n in ("passk", "difference", "upset", "histogram", "cover")
        for e in ("png", "pdf"))


def test_numbers_match_a_recomputation_from_rows(rollout_report):
    t, r = rollout_report["table"], rollout_report["json"]
    assert r["models"] == ["base", "step-100", "step-200"] and r["base"] == "base"
    for m in r["models"]:
        sub = t.filter(pc.equal(t["model"], m))
        assert r["pass_at_k"][m][0] == pytest.approx(np.mean(sub["correct"].to_numpy(
            zero_copy_only=False)))
        ent = sub["entropy_mean"].to_numpy()
        ok = sub["correct"].to_numpy(zero_copy_only=False)
        got = r["tokens"]["entropy_mean"][m]
        assert got["all"]["mean"] == pytest.approx(ent.mean())
        assert got["correct"]["mean"] == pytest.approx(ent[ok].mean())
        assert got["incorrect"]["std"] == pytest.approx(ent[~ok].std(ddof=1))
        bins = np.array(sub["entropy_bins"].to_pylist())
        np.testing.assert_allclose(r["tokens"]["entropy_by_position"][m]["correct"],
                                   bins[ok].mean(axis=0))
        noboxed = np.array(sub["q_no_boxed"].to_pylist(), dtype=float)
        assert r["quality"]["q_no_boxed"][m]["all"]["mean"] == pytest.approx(noboxed.mean())
    # Evolution ordered by step, base first.
    assert [row["step"] for row in r["evolution"]["rows"]] == [0, 100, 200]
    # Diversity at k = n: the expected number of distinct answers is the actual number of
    # distinct answer classes per prompt (a missing answer is the class "NA").
    assert r["diversity"]["k"] == 16
    for m in r["models"]:
        sub = t.filter(pc.equal(t["model"], m))
        classes: dict = {}
        for pid, ans in zip(sub["prompt_id"].to_pylist(), sub["answer"].to_pylist()):
            classes.setdefault(pid, set()).add("NA" if ans is None else ans)
        want = np.mean([len(v) for v in classes.values()])
        assert r["diversity"]["models"][m]["distinct"] == pytest.approx(want)
    # Per-answer support present because answers are.
    assert set(r["support"]["answer"]) == {"step-100", "step-200"}


def test_untrusted_text_is_escaped(rollout_report):
    page = rollout_report["html"]
    assert "<script" not in page.lower()
    assert "<img" not in page.lower()
    assert "&lt;script&gt;" in page and "onerror=alert(1)&gt;" in page
    assert re.search(r"\son\w+\s*=", page.replace("onerror=alert(1)&gt;", "")) is None


def test_lucky_guess_and_sample_texts(rollout_report):
    r, page = rollout_report["json"], rollout_report["html"]
    counts = reduce_counts(rollout_report["path"])
    expect = sorted((m, pid) for m, ct in counts.items()
                    for pid, n, c in zip(ct.prompt_ids, ct.n, ct.c) if 0 < c / n < 0.05)
    assert sorted((x["model"], x["prompt_id"]) for x in r["lucky"]) == expect
    shown = {(s["model"], s["prompt_id"]) for s in r["samples_shown"]}
    for m, pid in expect:
        assert (m, pid) in shown
    assert "Reasoning for" in page


def test_budget_advisor_picks_the_best_mean(rollout_report):
    r = rollout_report["json"]
    for row in r["advisor"]:
        j = r["ks"].index(row["k"])
        best = max(r["models"], key=lambda m: r["pass_at_k"][m][j])
        assert row["best"] == best
        lo, hi = row["band"]
        assert lo <= row["lead"] <= hi and row["supported"] == (lo > 0)


def test_step_labels():
    assert step_of("step-100") == 100 and step_of("global_step_40") == 40
    assert step_of("qwen-ckpt_7") == 7 and step_of("base") is None


def test_single_model_and_label_clash_are_errors(tmp_path, capsys):
    f = tmp_path / "a.jsonl"
    f.write_text('{"id":"p1","n":4,"c":1}\n')
    assert main(["report", str(f), "--out", str(tmp_path / "x.html")]) == 2
    assert "needs a base and at least one checkpoint" in capsys.readouterr().err
    assert main(["report", str(f), str(f), "--out", str(tmp_path / "x.html")]) == 2
    assert "appears in both" in capsys.readouterr().err
    assert not (tmp_path / "x.html").exists() and not (tmp_path / "x.json").exists()


def test_unknown_base_is_an_error(rollout_report, capsys, tmp_path):
    assert main(["report", str(rollout_report["path"]), "--base", "nope",
                 "--out", str(tmp_path / "y.html")]) == 2
    assert "--base 'nope' is not among the models read" in capsys.readouterr().err


def test_build_audit_two_models_by_hand():
    from rlvr_boundary.io.counts import Counts

    ids = ["a", "b", "c", "d"]
    base = Counts("base", ids, [4, 4, 4, 4], [4, 0, 2, 1])
    rl = Counts("rl", ids, [4, 4, 4, 4], [4, 1, 0, 4])
    a = build_audit(align([base, rl]), ReportOptions(compare=CompareOptions(bootstrap=200)), base="base")
    # solved at K = 4 means c >= 1: base {a, c, d}, rl {a, b, d}
    assert a["coverage"]["table_2x2"]["rl"] == {"both": 2, "base_only": 1, "rl_only": 1,
                                                "neither": 0}
    reg = a["coverage"]["ranked"]["rl"]["regressions"]
    assert [x["prompt_id"] for x in reg] == ["c"] and reg[0]["delta"] == -0.5
    gains = a["coverage"]["ranked"]["rl"]["gains"]
    assert [x["prompt_id"] for x in gains] == ["d", "b"]
    assert a["lucky"] == []  # 1/4 is not below 5%


def test_quality_flags_derived_from_text_when_absent(tmp_path):
    table = synthetic_rollouts(prompts=6, n=4)
    table = table.drop_columns([c for c in table.column_names if c.startswith("q_")])
    path = tmp_path / "r.parquet"
    write_rollouts(table, path)
    out = tmp_path / "q.html"
    assert main(["report", str(path), "--out", str(out), "--bootstrap", "100", "--no-figures"]) == 0
    r = json.loads(out.with_suffix(".json").read_text())
    texts = table.filter(pc.equal(table["model"], "base"))["text"].to_pylist()
    no_box = np.mean(["\\boxed{" not in t for t in texts])
    assert r["quality"]["q_no_boxed"]["base"]["all"]["mean"] == pytest.approx(no_box)


def test_hostile_model_label_is_escaped_in_text_and_figures(tmp_path):
    b, r = tmp_path / "b.jsonl", tmp_path / "r.jsonl"
    b.write_text("".join(json.dumps({"id": f"p{i}", "n": 8, "c": i % 9}) + "\n" for i in range(20)))
    r.write_text("".join(json.dumps({"id": f"p{i}", "n": 8, "c": (3 * i) % 9}) + "\n"
                         for i in range(20)))
    evil = '--><script>alert(1)</script><!--"'
    out = tmp_path / "h.html"
    assert main(["report", str(b), str(r), "--label", f"{b}=base", "--label", f"{r}={evil}",
                 "--out", str(out), "--bootstrap", "100", "--no-figures"]) == 0
    page = out.read_text()
    assert "<script" not in page.lower()
    assert "&lt;script&gt;alert(1)" in page  # shown, as text
    # Every SVG comment matplotlib writes stays a comment (no early "-->").
    assert page.count("<!--") == page.count("-->")


def test_from_result_redraws_the_page_byte_for_byte(rollout_report, tmp_path, capsys):
    """The page is drawn from the result file alone: redrawn from it, it is identical."""
    d = rollout_report["dir"]
    first = (d / "audit.html").read_bytes()
    json_before = (d / "audit.json").read_bytes()
    # Move the inputs away: --from must not read them.
    moved = tmp_path / "elsewhere.parquet"
    rollout_report["path"].rename(moved)
    try:
        assert main(["report", "--from", str(d / "audit.json"), "--out", str(d / "audit.html"),
                     "--bootstrap", "7"]) == 0
    finally:
        moved.rename(rollout_report["path"])
    assert (d / "audit.html").read_bytes() == first
    assert (d / "audit.json").read_bytes() == json_before  # nothing added to the result
    out = capsys.readouterr().out
    assert "step-200: RL" in out and "support retention rate SRR" in out


def test_from_needs_a_report_result(tmp_path, capsys):
    f = tmp_path / "c.json"
    assert main(["compare", "--example", "--bootstrap", "50", "--json", str(f)]) == 0
    capsys.readouterr()
    assert main(["report", "--from", str(f), "--out", str(tmp_path / "x.html")]) == 2
    assert "expected a 'report' result, found 'compare'" in capsys.readouterr().err


def test_empty_sections_name_commands_that_exist(tmp_path):
    from rlvr_boundary.cli import build_parser

    sub = next(a for a in build_parser()._actions if a.dest == "command")
    out = tmp_path / "e.html"
    assert main(["report", "--example", "--out", str(out), "--bootstrap", "50",
                 "--no-figures"]) == 0
    page = out.read_text()
    named = set(re.findall(r"rlvr-boundary ([a-z][a-z-]*)", page))
    assert named and named <= set(sub.choices), named - set(sub.choices)


def test_summary_words_on_the_page(rollout_report):
    page, r = rollout_report["html"], rollout_report["json"]
    assert "summary" not in r  # sentences are made from the numbers, not stored
    summary = page[page.index('<section id="summary">'):page.index('<section id="passk">')]
    for m in r["checkpoints"]:
        assert f"<b>{m}</b>: RL " in summary
    assert "support retention rate SRR = " in summary and "net discovery rate NDR = " in summary
    assert "net support change rate NSCR = " in summary


def test_quality_flags_from_text_say_they_are_sampled(tmp_path):
    table = synthetic_rollouts(prompts=10, n=8)
    table = table.drop_columns([c for c in table.column_names if c.startswith("q_")])
    path = tmp_path / "r.parquet"
    write_rollouts(table, path)
    out = tmp_path / "q.html"
    assert main(["report", str(path), "--out", str(out), "--bootstrap", "50", "--no-figures",
                 "--quality-sample", "30"]) == 0
    r = json.loads(out.with_suffix(".json").read_text())
    assert r["quality_sampling"]["base"] == {"sampled": 30, "completions": 80}
    assert r["quality"]["q_no_boxed"]["base"]["all"]["count"] == 30
    assert "a uniform random sample of 30 of 80 completions" in out.read_text()


def test_inputs_are_read_once(tmp_path, monkeypatch):
    """Each rollout file is parsed by one pass of batches (counts, facts and texts together)."""
    import rlvr_boundary.io.inputs as inputs_mod

    table = synthetic_rollouts(prompts=8, n=4)
    path = tmp_path / "r.jsonl"
    write_rollouts(table, path)
    calls = []
    real = inputs_mod.iter_rollout_batches

    def counting(*a, **k):
        calls.append(a[0])
        yield from real(*a, **k)

    monkeypatch.setattr(inputs_mod, "iter_rollout_batches", counting)
    import rlvr_boundary.io.samples as samples_mod

    monkeypatch.setattr(samples_mod, "iter_rollout_batches",
                        lambda *a, **k: pytest.fail("a second pass over the inputs"))
    out = tmp_path / "once.html"
    assert main(["report", str(path), "--out", str(out), "--bootstrap", "50",
                 "--no-figures"]) == 0
    assert calls == [path]
    r = json.loads(out.with_suffix(".json").read_text())
    assert r["samples_shown"] and r["quality"] and r["diversity"]


def test_docs_python_pipeline_runs(tmp_path, monkeypatch):
    """The Python example of docs/report.md runs as written (docs that are run do not drift)."""
    from pathlib import Path

    doc = (Path(__file__).parents[2] / "docs" / "report.md").read_text()
    code = doc.split("```python\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(1)
    for name in ("base", "rl"):
        Path(f"{name}.jsonl").write_text("".join(
            json.dumps({"id": f"p{i}", "n": 8, "c": int(rng.integers(0, 9))}) + "\n"
            for i in range(25)))
    code = code.replace("ReportOptions()", "ReportOptions(compare=CompareOptions(bootstrap=50), "
                                           "figures=False)")
    exec(compile(code, "docs/report.md", "exec"), {"CompareOptions": CompareOptions})
    assert "RL " in Path("audit.html").read_text()
    assert json.loads(Path("audit.json").read_text())["kind"] == "report"


def test_base_curves_are_computed_once_per_audit(monkeypatch):
    """Three checkpoints against one base: each model's per-prompt curves are computed once."""
    import rlvr_boundary.analysis.audit as audit_mod
    import rlvr_boundary.analysis.structure as structure_mod
    from rlvr_boundary.io.counts import Counts

    calls = []
    real = audit_mod.pass_at_k

    def counting(n, c, ks):
        calls.append(int(np.asarray(c).sum()))
        return real(n, c, ks)

    monkeypatch.setattr(audit_mod, "pass_at_k", counting)
    monkeypatch.setattr(structure_mod, "pass_at_k", counting)
    rng = np.random.default_rng(3)
    ids = [f"p{i}" for i in range(15)]
    counts = [Counts(m, ids, [8] * 15, rng.integers(0, 9, 15)) for m in
              ("base", "ck-1", "ck-2", "ck-3")]
    build_audit(align(counts), ReportOptions(compare=CompareOptions(bootstrap=50)), base="base")
    assert len(calls) == 4  # one per model, none per comparison
