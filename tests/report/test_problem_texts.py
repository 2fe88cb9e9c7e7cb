"""Problem texts beside the ids the page lists: from the rollouts' ``prompt`` column or from
``--prompts FILE``; hostile texts are escaped; the texts are in the result, so ``--from``
redraws them without the inputs."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq

from rlvr_boundary.cli import main
from tests.report.fixtures import EVIL, synthetic_rollouts


def _listed(doc: dict) -> set:
    ids = {r["prompt_id"] for r in doc["lucky"]}
    for m in doc["checkpoints"]:
        for kind in ("regressions", "gains"):
            ids |= {r["prompt_id"] for r in doc["coverage"]["ranked"][m][kind]}
    return ids


def _text(pid: str) -> str:
    # p000 carries markup that must never reach the page as markup
    return EVIL if pid == "p000" else f"Compute {pid} & report \u2264 {len(pid)} < 9."


def test_texts_from_the_prompt_column_are_escaped_and_survive_from(tmp_path):
    t = synthetic_rollouts(evil_prompt=None)
    t = t.append_column("prompt", pa.array([_text(p) for p in t.column("prompt_id").to_pylist()]))
    pq.write_table(t, tmp_path / "r.parquet")
    out = tmp_path / "rep.html"
    assert main(["report", str(tmp_path / "r.parquet"), "--out", str(out), "--bootstrap", "200",
                 "--no-figures", "--top", "40"]) == 0
    doc = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))
    listed = _listed(doc)
    assert "p000" in listed and set(doc["problems"]) == listed
    for pid in listed:
        assert doc["problems"][pid] == {"text": _text(pid), "cut": False}
    page = out.read_text(encoding="utf-8")
    assert "<script>" not in page and "<img" not in page
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page
    assert '<div class="ptext">Compute p001 &amp; report \u2264 4 &lt; 9.</div>' in page or \
        "p001" not in listed
    # --from draws the same page from the result alone
    again = tmp_path / "again.html"
    assert main(["report", "--from", str(out.with_suffix(".json")), "--out", str(again),
                 "--no-figures"]) == 0
    assert again.read_text(encoding="utf-8") == page


def test_a_prompt_file_gives_the_texts_and_is_in_the_provenance(tmp_path, capsys):
    pq.write_table(synthetic_rollouts(evil_prompt=None), tmp_path / "r.parquet")
    long = "x" * 700
    lines = [{"id": "p001", "problem": long}, {"id": "p002", "problem": "What is 6 * 7?"}]
    (tmp_path / "prompts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    out = tmp_path / "rep.html"
    assert main(["report", str(tmp_path / "r.parquet"), "--out", str(out), "--bootstrap", "200",
                 "--no-figures", "--top", "40", "--prompts", str(tmp_path / "prompts.jsonl")]) == 0
    doc = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))
    listed = _listed(doc)
    have = {"p001", "p002"} & listed
    assert set(doc["problems"]) == have
    if "p001" in have:
        assert doc["problems"]["p001"] == {"text": "x" * 600, "cut": True}
    rows = [r for r in doc["provenance"]["inputs"] if r["format"] == "prompts"]
    assert len(rows) == 1 and rows[0]["path"].endswith("prompts.jsonl") and len(rows[0]["sha256"]) == 64
    err = capsys.readouterr().err
    assert f"{len(listed - have)} of the {len(listed)} problems the page lists have no text" in err


def test_a_bad_prompt_file_fails_before_the_audit_and_from_refuses_it(tmp_path, capsys):
    pq.write_table(synthetic_rollouts(), tmp_path / "r.parquet")
    (tmp_path / "p.jsonl").write_text('{"id": "p001"}\n')
    assert main(["report", str(tmp_path / "r.parquet"), "--out", str(tmp_path / "a.html"),
                 "--prompts", str(tmp_path / "p.jsonl")]) == 2
    assert "p.jsonl:1: no prompt text field" in capsys.readouterr().err
    assert not (tmp_path / "a.json").exists() and not (tmp_path / "a.html").exists()
    assert main(["report", "--from", str(tmp_path / "x.json"), "--prompts",
                 str(tmp_path / "p.jsonl")]) == 2
    assert "no --prompts" in capsys.readouterr().err


def test_the_lab_example_shows_its_problems(tmp_path):
    from rlvr_boundary.lab.task import problem_of_id, prompt_text

    out = tmp_path / "lab.html"
    assert main(["report", "--example", "lab", "--out", str(out), "--bootstrap", "200",
                 "--no-figures"]) == 0
    doc = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))
    assert set(doc["problems"]) == _listed(doc)
    for pid, got in doc["problems"].items():
        assert got["text"] == prompt_text(problem_of_id(pid))  # the lab's own prompt


def test_a_prompt_file_that_is_the_output_is_refused_before_any_work(tmp_path, capsys):
    pq.write_table(synthetic_rollouts(), tmp_path / "r.parquet")
    prompts = tmp_path / "rep.json"  # the JSON the report would write beside rep.html
    prompts.write_text('{"id": "p001", "prompt": "x"}\n')
    assert main(["report", str(tmp_path / "r.parquet"), "--out", str(tmp_path / "rep.html"),
                 "--prompts", str(prompts)]) == 2
    err = capsys.readouterr().err
    assert "would overwrite the input" in err and "problems the page lists" not in err
    assert prompts.read_text() == '{"id": "p001", "prompt": "x"}\n'

