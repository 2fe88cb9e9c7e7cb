"""`report` (CLI and app) on an ungraded rollout table says to run `verify` first."""

from __future__ import annotations

import json

import pytest

from rlvr_boundary.cli import main
from rlvr_boundary.errors import InputError

ROWS = [{"model": "m", "prompt_id": f"p{i // 2}", "sample_idx": i % 2, "text": "answer 42"}
        for i in range(4)]


@pytest.fixture
def ungraded(tmp_path):
    src = tmp_path / "rollouts.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    return src


def test_cli_report_on_ungraded_rollouts_says_run_verify(ungraded, tmp_path, capsys):
    assert main(["report", str(ungraded), "--out", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err
    assert "no `correct` column: run `rlvr-boundary verify` first" in err
    assert "cannot tell the format" not in err and "--format" not in err
    assert not (tmp_path / "r.html").exists()


def test_app_audit_on_ungraded_rollouts_says_run_verify(ungraded, tmp_path):
    from rlvr_boundary.app.compute import audit_job

    with pytest.raises(InputError) as err:
        audit_job([str(ungraded)], {}, {"bootstrap": 100}, str(tmp_path))
    assert "no `correct` column: run `rlvr-boundary verify` first" in str(err.value)
    assert "docs/formats.md" not in str(err.value)
