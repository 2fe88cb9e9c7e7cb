"""Validate a result document against its kind's JSON Schema (shared by the tests)."""

from __future__ import annotations

import json
from pathlib import Path


def assert_valid(doc_or_path) -> dict:
    """The document (read from a path if given) after validating it with ``jsonschema``."""
    import jsonschema

    from rlvr_boundary.kinds import json_schema

    doc = doc_or_path
    if isinstance(doc_or_path, (str, Path)):
        doc = json.loads(Path(doc_or_path).read_text(encoding="utf-8"))
    schema = json_schema(doc["kind"])
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(doc, schema, cls=jsonschema.Draft202012Validator)
    return doc
