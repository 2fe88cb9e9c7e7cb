"""The report's "Where learning landed" section, from a result of the learning analysis."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rlvr_boundary.analysis.learning import learning_landed
from rlvr_boundary.cli import main
from rlvr_boundary.io.results import write_result
from rlvr_boundary.io.rollouts import write_rollouts
from rlvr_boundary.report import words as W
from tests.report.fixtures import synthetic_rollouts

HOSTILE = "<img src=x onerror=alert(1)>"


def _learning_result(seed: int, after: str) -> dict:
    """where-learning-landed on small synthetic per-token arrays (no model)."""
    rng = np.random.default_rng(seed)
    vocab = ["7", "42", "+", "=", "Wait", "so", " ", "\\boxed", "cat", "dog", "<b>"]
    texts, lb, la, hb, ha = [], [], [], [], []
    for _ in range(12):
        T = int(rng.integers(5, 30))
        texts.append([vocab[j] for j in rng.integers(0, len(vocab), T)])
        a = -rng.exponential(1.0, T)
        b = np.minimum(a + rng.normal(0.0, 0.4, T) * (rng.random(T) < 0.3), 0.0)
        lb.append(a), la.append(b)
        h = rng.exponential(1.0, T)
        hb.append(h), ha.append(np.maximum(h + rng.normal(-0.2, 0.3, T), 0.0))
    return learning_landed(texts, lb, la, hb, ha, labels=("base", after), min_count=2)


@pytest.fixture(scope="module")
def learned_report(tmp_path_factory):
    d = tmp_path_factory.mktemp("learn")
    path = d / "rollouts.parquet"
    write_rollouts(synthetic_rollouts(), path)
    results, files = [], []
    for i, after in enumerate(["rl-step-200", HOSTILE]):
        res = _learning_result(i, after)
        f = d / f"learning{i}.json"
        write_result(f, "learning_landed", {"before": "base", "after": after}, res)
        results.append(res)
        files.append(f)
    out = d / "audit.html"
    argv = ["report", str(path), "--out", str(out), "--bootstrap", "50", "--no-figures"]
    for f in files:
        argv += ["--learning", str(f)]
    assert main(argv) == 0
    return {"dir": d, "out": out, "results": results, "files": files, "path": path,
            "html": out.read_text(), "json": json.loads(out.with_suffix(".json").read_text())}


def _section(page: str) -> str:
    return page[page.index('<section id="learning">'):page.index('<section id="regressions">')]


def test_result_carried_into_the_report_json(learned_report):
    doc, results = learned_report["json"], learned_report["results"]
    assert [r["labels"]["after"] for r in doc["learning"]] == ["rl-step-200", HOSTILE]
    for got, want in zip(doc["learning"], results):
        assert got["tokens"] == want["tokens"] and got["texts"] == 12
        # Floats round-trip through JSON exactly: the report holds the analysis' numbers.
        for key in ("by_category", "by_position", "barely_moved", "overall",
                    "entropy_fell_most"):
            assert got[key] == json.loads(json.dumps(want[key])), key
        assert got["source"]["options"]["after"] == want["labels"]["after"]
    prov = {p["path"]: p for p in doc["provenance"]["inputs"]}
    for f in learned_report["files"]:
        assert prov[str(f)]["format"] == "learning_landed" and len(prov[str(f)]["sha256"]) == 64


def test_numbers_on_the_page_come_from_the_result(learned_report):
    sec = _section(learned_report["html"])
    res = learned_report["results"][0]
    # The sentence and the table are made from the analysis' numbers.
    assert W.learning_sentence(res).replace("'", "&#x27;") in sec
    for cat, d in res["by_category"].items():
        if d["tokens"]:
            row = (f'<td class="l">{cat}</td><td class="">{d["tokens"]}</td>'
                   f'<td class="">{d["mean_dlogp"]:+.4f}</td><td class="">{d["mean_abs_dp"]:.4f}</td>'
                   f'<td class="">{d["share_barely_moved"]:.1%}</td>')
            assert row in sec, cat
    # Brute force: the overall share that barely moved, from the result's own rule.
    assert f"{res['overall']['share_barely_moved']:.1%} of tokens moved" in sec
    assert sec.count("<svg") == 1  # one figure for both results
    assert "No where-learning-landed result" not in sec


def test_labels_and_tokens_are_escaped(learned_report):
    sec = _section(learned_report["html"])
    assert HOSTILE not in learned_report["html"]
    assert "&lt;img src=x onerror=alert(1)&gt;" in sec


def test_from_redraws_the_page_with_learning_byte_for_byte(learned_report, tmp_path):
    d, out = learned_report["dir"], learned_report["out"]
    first, json_before = out.read_bytes(), out.with_suffix(".json").read_bytes()
    # The learning files are not read again: move them away.
    for f in learned_report["files"]:
        f.rename(tmp_path / f.name)
    assert main(["report", "--from", str(out.with_suffix(".json")), "--out", str(out),
                 "--no-figures"]) == 0
    assert out.read_bytes() == first
    assert out.with_suffix(".json").read_bytes() == json_before


def test_without_learning_the_section_names_the_command(tmp_path):
    path = tmp_path / "r.parquet"
    write_rollouts(synthetic_rollouts(), path)
    out = tmp_path / "r.html"
    assert main(["report", str(path), "--out", str(out), "--bootstrap", "50", "--no-figures"]) == 0
    page = out.read_text()
    # nothing to show: the section is a line of the "what would fill" list
    assert '<section id="learning">' not in page
    sec = page[page.index('<li id="learning">'):]
    sec = sec[:sec.index("</li>")]
    assert "rlvr-boundary score ROLLOUTS --model AFTER --before BEFORE --learning" in sec
    assert "learning" not in json.loads(out.with_suffix(".json").read_text())


def test_wrong_kind_and_from_with_learning_are_errors(learned_report, tmp_path, capsys):
    f = tmp_path / "c.json"
    assert main(["compare", "--example", "--bootstrap", "50", "--json", str(f)]) == 0
    capsys.readouterr()
    out = tmp_path / "x.html"
    assert main(["report", str(learned_report["path"]), "--learning", str(f),
                 "--out", str(out)]) == 2
    assert "expected a 'learning_landed' result, found 'compare'" in capsys.readouterr().err
    assert not out.exists()
    assert main(["report", "--from", str(learned_report["out"].with_suffix(".json")),
                 "--learning", str(f), "--out", str(out)]) == 2
    assert "no --learning" in capsys.readouterr().err
