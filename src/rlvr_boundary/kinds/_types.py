"""The machinery of typed result kinds: declarations, the check, the JSON Schema, the docs.

A payload is declared as a ``TypedDict`` whose fields are ``Annotated[type, "what it
means"]`` (add :data:`OPTIONAL` for a key that may be absent). The types are those of
JSON: ``int``, ``float``, ``bool``, ``str``, ``None``, unions, ``list[...]``,
``dict[str, ...]``, ``Literal[...]``, nested ``TypedDict`` and ``Any``.

A ``float`` is a JSON number *or null*: JSON has no NaN, and every result writes an
undefined or non-finite number as ``null`` (:func:`rlvr_boundary.io.results.to_jsonable`).

Only the standard library: the registry is imported by the envelope and by the tests.
"""

from __future__ import annotations

import functools
import types
import typing
from typing import Annotated, Any, Literal, Union

__all__ = ["OPTIONAL", "OPEN", "open_keys", "KindError", "fields", "check_value", "schema_of",
           "rows_of"]


class _Optional:
    def __repr__(self) -> str:
        return "OPTIONAL"


#: Marks a key that may be absent (inside ``Annotated[...]``).
OPTIONAL = _Optional()

#: Declarations whose dicts may carry keys beyond those declared (filled by :func:`open_keys`).
OPEN: set = set()


def open_keys(cls):
    """Decorator: this TypedDict's dicts may hold further keys (kept as they are)."""
    OPEN.add(cls)
    return cls


class KindError(ValueError):
    """A result payload does not match its kind's declaration (a bug, not bad input)."""


def _is_typeddict(tp) -> bool:
    return isinstance(tp, type) and issubclass(tp, dict) and hasattr(tp, "__annotations__") \
        and hasattr(tp, "__total__")


@functools.lru_cache(maxsize=None)
def fields(td) -> tuple[tuple[str, Any, str, bool], ...]:
    """``(key, type, doc, required)`` of each field of a TypedDict, in declaration order."""
    hints = typing.get_type_hints(td, include_extras=True)
    out = []
    for key, ann in hints.items():
        doc, required, tp = "", True, ann
        if typing.get_origin(ann) is Annotated:
            tp, *meta = typing.get_args(ann)
            doc = next((m for m in meta if isinstance(m, str)), "")
            required = not any(m is OPTIONAL for m in meta)
        out.append((key, tp, doc, required))
    return tuple(out)


def _union_args(tp):
    if typing.get_origin(tp) in (Union, types.UnionType):
        return typing.get_args(tp)
    return None


def check_value(value, tp, path: str, errors: list[str], limit: int = 20) -> None:
    """Append to ``errors`` where ``value`` does not match ``tp`` (at most ``limit`` entries)."""
    if len(errors) < limit:
        _checker(tp)(value, path, errors)


_SIMPLE = {bool: lambda v: isinstance(v, bool),
           int: lambda v: isinstance(v, int) and not isinstance(v, bool),
           # a JSON number, or null where the number is undefined
           float: lambda v: v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)),
           str: lambda v: isinstance(v, str),
           type(None): lambda v: v is None}


@functools.lru_cache(maxsize=None)
def _checker(tp):
    """A function ``(value, path, errors)`` that checks values of ``tp`` (built once per type)."""
    if tp is Any:
        return lambda v, path, errors: None
    if tp is None:
        tp = type(None)
    arms = _union_args(tp)
    if arms is not None:
        subs = [_checker(a) for a in arms]
        simple = [_SIMPLE[a] for a in arms if a in _SIMPLE]
        name = _name(tp)

        def union(v, path, errors):
            if any(ok(v) for ok in simple):
                return
            for sub in subs:
                trial: list[str] = []
                sub(v, path, trial)
                if not trial:
                    return
            errors.append(f"{path}: {_short(v)} is none of {name}")
        return union
    if tp in _SIMPLE:
        ok, name = _SIMPLE[tp], _name(tp)

        def simple(v, path, errors):
            if not ok(v):
                errors.append(f"{path}: expected {name}, found {_short(v)}")
        return simple
    origin = typing.get_origin(tp)
    if origin is Literal:
        allowed = typing.get_args(tp)

        def literal(v, path, errors):
            if v not in allowed:
                errors.append(f"{path}: {_short(v)} is not one of {allowed}")
        return literal
    if origin is list or tp is list:
        (item,) = typing.get_args(tp) or (Any,)
        sub, ok = _checker(item), _SIMPLE.get(item)

        def listed(v, path, errors):
            if not isinstance(v, list):
                errors.append(f"{path}: expected a list, found {_short(v)}")
                return
            if item is Any or (ok is not None and all(map(ok, v))):
                return  # the common case, a list of numbers, in one pass
            for i, x in enumerate(v):
                sub(x, f"{path}[{i}]", errors)
                if len(errors) >= 20:
                    return
        return listed
    if origin is dict or tp is dict:
        args = typing.get_args(tp)
        item = args[1] if args else Any
        sub = _checker(item)

        def mapping(v, path, errors):
            if not isinstance(v, dict):
                errors.append(f"{path}: expected an object, found {_short(v)}")
                return
            if item is not Any:
                for k, x in v.items():
                    sub(x, f"{path}.{k}", errors)
        return mapping
    if _is_typeddict(tp):
        spec = [(key, _checker(ftp), required) for key, ftp, _, required in fields(tp)]
        known = {key for key, _, _ in spec}
        closed = tp not in OPEN

        def record(v, path, errors):
            if not isinstance(v, dict):
                errors.append(f"{path}: expected an object, found {_short(v)}")
                return
            for key, sub, required in spec:
                if key in v:
                    sub(v[key], f"{path}.{key}", errors)
                elif required:
                    errors.append(f"{path}.{key}: missing")
            if closed and not known.issuperset(v):
                errors.append(f"{path}: undeclared keys {sorted(set(v) - known)}")
        return record
    raise TypeError(f"no JSON type for {tp!r}")


def _short(value) -> str:
    r = repr(value)
    return r if len(r) <= 60 else r[:57] + "..."


def _name(tp) -> str:
    """A reader's name of a type: ``list of number``, ``integer or null``."""
    if tp is Any:
        return "any"
    arms = _union_args(tp)
    if arms is not None:
        return " or ".join(_name(a) for a in arms)
    if tp is type(None) or tp is None:
        return "null"
    origin = typing.get_origin(tp)
    if origin is Literal:
        return " or ".join(repr(a) for a in typing.get_args(tp))
    simple = {bool: "boolean", int: "integer", float: "number", str: "string"}
    if tp in simple:
        return simple[tp]
    if origin is list or tp is list:
        args = typing.get_args(tp)
        return f"list of {_name(args[0])}" if args else "list"
    if origin is dict or tp is dict:
        args = typing.get_args(tp)
        return f"object of {_name(args[1])}" if args and args[1] is not Any else "object"
    if _is_typeddict(tp):
        return "object"
    return str(tp)


def schema_of(tp) -> dict:
    """The JSON Schema (draft 2020-12 vocabulary) of a declared type."""
    if tp is Any:
        return {}
    arms = _union_args(tp)
    if arms is not None:
        subs = [schema_of(a) for a in arms]
        if all(set(s) == {"type"} for s in subs):
            names: list = []
            for s in subs:
                for t in (s["type"] if isinstance(s["type"], list) else [s["type"]]):
                    if t not in names:
                        names.append(t)
            return {"type": names if len(names) > 1 else names[0]}
        return {"anyOf": subs}
    if tp is type(None) or tp is None:
        return {"type": "null"}
    origin = typing.get_origin(tp)
    if origin is Literal:
        return {"enum": list(typing.get_args(tp))}
    if tp is bool:
        return {"type": "boolean"}
    if tp is int:
        return {"type": "integer"}
    if tp is float:
        return {"type": ["number", "null"]}
    if tp is str:
        return {"type": "string"}
    if origin is list or tp is list:
        args = typing.get_args(tp)
        out: dict = {"type": "array"}
        if args and args[0] is not Any:
            out["items"] = schema_of(args[0])
        return out
    if origin is dict or tp is dict:
        args = typing.get_args(tp)
        out = {"type": "object"}
        if args and args[1] is not Any:
            out["additionalProperties"] = schema_of(args[1])
        return out
    if _is_typeddict(tp):
        props, required = {}, []
        for key, ftp, doc, req in fields(tp):
            props[key] = {**schema_of(ftp), **({"description": doc} if doc else {})}
            if req:
                required.append(key)
        out = {"type": "object", "properties": props, "required": required}
        if tp not in OPEN:
            out["additionalProperties"] = False
        return out
    raise TypeError(f"no JSON Schema for {tp!r}")


def rows_of(td, prefix: str = "", depth: int = 3) -> list[tuple[str, str, bool, str]]:
    """``(key path, type name, required, meaning)`` of a declaration, nested objects expanded
    (``a.b``; ``a[].b`` inside lists of objects; ``a.*.b`` inside dicts of objects)."""
    rows = []
    for key, tp, doc, required in fields(td):
        path = f"{prefix}{key}"
        rows.append((path, _name(tp), required, doc))
        inner, suffix = _object_inside(tp)
        if inner is not None and depth > 1:
            rows += rows_of(inner, f"{path}{suffix}.", depth - 1)
    return rows


def _object_inside(tp):
    """The TypedDict inside ``tp`` (itself, a list's item or a dict's value, nullable) and the
    path suffix that reaches it."""
    arms = _union_args(tp)
    if arms is not None:
        inner = [a for a in arms if a is not type(None)]
        return _object_inside(inner[0]) if len(inner) == 1 else (None, "")
    if _is_typeddict(tp):
        return tp, ""
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is list and args and _is_typeddict(args[0]):
        return args[0], "[]"
    if origin is dict and args and _is_typeddict(args[1]):
        return args[1], ".*"
    return None, ""
