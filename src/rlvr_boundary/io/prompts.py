"""Read a prompt file: the input of ``rlvr-boundary sample`` and ``score --prompts``.

JSONL (one object per line) or CSV/TSV with a header; each record has an id and
a text, found under the usual field names or the ones given. Duplicate ids and
missing fields are errors that name the file and line.
"""

from __future__ import annotations

from pathlib import Path

from rlvr_boundary.errors import InputError

__all__ = ["read_prompts", "ID_FIELDS", "PROMPT_FIELDS"]

ID_FIELDS = ("prompt_id", "id", "unique_id", "idx", "task_id")
PROMPT_FIELDS = ("prompt", "problem", "question", "input")


def read_prompts(path: str | Path, id_field: str | None = None,
                 prompt_field: str | None = None) -> list[dict]:
    """Prompts ``[{"prompt_id", "question"}]`` from JSONL or CSV/TSV, in file order.

    The id is the first of ``prompt_id, id, unique_id, idx, task_id`` present
    (or ``id_field``); the text the first of ``prompt, problem, question,
    input`` (or ``prompt_field``). Duplicate ids and missing fields are errors.
    """
    from rlvr_boundary.io.rollouts import is_jsonl, iter_json_lines

    path = Path(path)
    if not path.exists():
        raise InputError("file not found", path=path)
    ids = (id_field,) if id_field else ID_FIELDS
    texts = (prompt_field,) if prompt_field else PROMPT_FIELDS
    out: list[dict] = []
    seen: set[str] = set()

    def take(rec: dict, line: int) -> None:
        k = next((f for f in ids if rec.get(f) not in (None, "")), None)
        if k is None:
            raise InputError(f"no prompt id field (tried {list(ids)})", path=path, line=line)
        t = next((f for f in texts if isinstance(rec.get(f), str)), None)
        if t is None:
            raise InputError(f"no prompt text field (tried {list(texts)})", path=path, line=line)
        pid = str(rec[k])
        if pid in seen:
            raise InputError(f"duplicate prompt id {pid!r}", path=path, line=line, field=k)
        seen.add(pid)
        out.append({"prompt_id": pid, "question": rec[t]})

    if is_jsonl(path):
        for line, rec in iter_json_lines(path):
            take(rec, line)
    else:  # streamed, each line bounded (a file without newlines is refused, not loaded)
        from rlvr_boundary.io.text import iter_csv_records

        for i, rec in iter_csv_records(path):
            take(rec, i)
    if not out:
        raise InputError("prompt file has no records", path=path)
    return out
