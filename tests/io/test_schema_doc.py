"""docs/schema.md documents every column and manifest key of io/schema.py, with its type."""

from __future__ import annotations

import re
from pathlib import Path

from rlvr_boundary.io.schema import COUNT_COLUMNS, MANIFEST_FIELDS, ROLLOUT_COLUMNS
from rlvr_boundary.io.results import SCHEMA_VERSION

DOC = (Path(__file__).parents[2] / "docs" / "schema.md").read_text(encoding="utf-8")


def _rows(section: str) -> dict[str, list[str]]:
    body = DOC.split(f"## {section}", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in body.splitlines():
        m = re.match(r"\| `([^`]+)` \|(.*)\|\s*$", line)
        if m:
            rows[m.group(1)] = [c.strip() for c in m.group(2).split("|")]
    return rows


def test_rollout_columns_documented_with_types():
    rows = _rows("Rollout table")
    assert set(rows) == {c.name for c in ROLLOUT_COLUMNS}
    for c in ROLLOUT_COLUMNS:
        assert rows[c.name][0] == str(c.type), c.name
        assert (rows[c.name][1] == "yes") == c.required, c.name


def test_count_columns_and_manifest_keys_documented():
    rows = _rows("Count table")
    assert set(rows) == {c.name for c in COUNT_COLUMNS}
    assert all(rows[c.name][0] == str(c.type) for c in COUNT_COLUMNS)
    assert set(_rows("Run manifest")) == set(MANIFEST_FIELDS)


def test_schema_version_in_title():
    assert DOC.splitlines()[0] == f"# Data model (schema_version {SCHEMA_VERSION})"
