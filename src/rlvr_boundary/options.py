"""Options declared once: a dataclass field is its command-line flag, its help and its bounds.

Every workflow has one options dataclass (``CompareOptions``, ``ReportOptions``,
``VerifyOptions``, ...), recorded in its result file. Each field is declared
with :func:`option`: its default, a one-line help, and what a valid value is
(choices, bounds, finiteness, a parser for the text a user types). From that
one declaration

- :func:`add_flags` adds the command-line flags of a verb (``--bootstrap B``,
  help with the default, choices, ``--label`` repeatable, ...);
- :func:`from_args` builds the options from the parsed flags;
- :func:`check`, called by the dataclass's ``__post_init__``, refuses a bad
  value with a message that names the flag, whoever built the object (the
  command line, the app, a library caller), so every entry point accepts and
  refuses exactly the same values.

Like cleanrl's ``Args`` with tyro, the dataclass *is* the command line; this
module is our own small generator (standard library only, imported by
``rlvr-boundary --help``, which loads no numeric library).
"""

from __future__ import annotations

import argparse
import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rlvr_boundary.errors import InputError

__all__ = ["Opt", "option", "declared", "check", "add_flags", "from_args", "flag_of",
           "describe"]

_MISSING = dataclasses.MISSING


@dataclass(frozen=True)
class Opt:
    """How one field is given on the command line and what values it accepts."""

    help: str
    """One line for ``--help`` (the default is appended unless the text gives it)."""
    flag: str | None = None
    """The flag; default ``--`` and the field name with dashes (``K_se`` -> ``--K-se``)."""
    kind: str | None = None
    """``int``, ``float``, ``str``, ``bool``, ``list`` (repeatable) or ``text`` (parsed by
    ``parse``); default: from the annotation."""
    choices: tuple | Callable[[], tuple] | None = None
    """Accepted values, or a function returning them (a registry's names)."""
    low: float | None = None
    """Smallest accepted value (``low_open``: strictly above it)."""
    high: float | None = None
    """Largest accepted value (``high_open``: strictly below it)."""
    low_open: bool = False
    high_open: bool = False
    what: str | None = None
    """How the message names a valid value ("an integer from 0 to 2**63 - 1"); default
    from the bounds. ``{high}`` stands for the upper bound where it depends on the machine
    (messages give the number, the generated docs say "the limit")."""
    parse: Callable[[str], Any] | None = None
    """Text -> value for the command line (raises ValueError with the reason)."""
    metavar: str | None = None
    group: str | None = None
    """Title of the help group the flag is listed under."""
    cli: bool = True
    """False: a field of the options without a flag of its own."""
    show_default: bool = True


def option(default: Any = _MISSING, *, help: str, default_factory: Any = _MISSING,
           **how: Any) -> Any:
    """A dataclass field declared as an option (see :class:`Opt` for ``how``)."""
    meta = {"option": Opt(help=help, **how)}
    if default_factory is not _MISSING:
        return dataclasses.field(default_factory=default_factory, metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def declared(cls_or_obj) -> list[tuple[dataclasses.Field, Opt]]:
    """The fields of an options class declared with :func:`option`, in order."""
    return [(f, f.metadata["option"]) for f in dataclasses.fields(cls_or_obj)
            if "option" in f.metadata]


def flag_of(f: dataclasses.Field, o: Opt) -> str:
    return o.flag or "--" + f.name.replace("_", "-")


def _kind(f: dataclasses.Field, o: Opt) -> str:
    if o.kind:
        return o.kind
    ann = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))
    base = ann.replace(" ", "").split("|")[0].split("[")[0]
    return {"int": "int", "float": "float", "bool": "bool", "str": "str", "tuple": "list",
            "list": "list"}.get(base, "text")


def _nullable(f: dataclasses.Field) -> bool:
    ann = f.type if isinstance(f.type, str) else str(f.type)
    return "None" in ann or f.default is None


def _choices(o: Opt) -> tuple | None:
    if o.choices is None:
        return None
    return tuple(o.choices() if callable(o.choices) else o.choices)


def _fmt(x) -> str:
    if isinstance(x, int) and abs(x) >= 10_000:
        return f"{x:,}"
    return f"{x:g}" if isinstance(x, float) else str(x)


def _what(kind: str, o: Opt, high: str | None = None) -> str:
    if o.what:
        return o.what.replace("{high}", high if high is not None else _fmt(o.high))
    noun = "an integer" if kind == "int" else "a number"
    lo = None if o.low is None else ("> " if o.low_open else ">= ") + _fmt(o.low)
    if o.low is not None and o.high is not None and o.low_open and o.high_open:
        return f"{noun} strictly between {_fmt(o.low)} and {_fmt(o.high)}"
    hi = None if o.high is None else ("below " if o.high_open else "at most ") + _fmt(o.high)
    parts = [p for p in (lo, hi) if p]
    return noun + (" " + " and ".join(parts) if parts else "")


def check(obj) -> None:
    """Refuse a declared field whose value has the wrong type, choice or bound.

    Raises
    ------
    InputError
        ``"<flag> must be <what>, got <value>"``: the message names the flag.
    """
    for f, o in declared(obj):
        value = getattr(obj, f.name)
        if value is None and _nullable(f):
            continue
        kind, flag = _kind(f, o), flag_of(f, o)
        if kind in ("int", "float"):
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
            if kind == "int":
                ok = ok and (isinstance(value, int) or float(value).is_integer())
            ok = ok and math.isfinite(value)
            if ok and o.low is not None:
                ok = value > o.low if o.low_open else value >= o.low
            if ok and o.high is not None:
                ok = value < o.high if o.high_open else value <= o.high
            if not ok:
                raise InputError(f"{flag} must be {_what(kind, o)}, got {value!r}")
            if kind == "int" and not isinstance(value, int):
                object.__setattr__(obj, f.name, int(value))
        elif kind == "bool" and not isinstance(value, bool):
            raise InputError(f"{flag} must be true or false, got {value!r}")
        elif kind == "str" and not isinstance(value, str):
            raise InputError(f"{flag} must be text, got {value!r}")
        choices = _choices(o)
        if choices is not None and kind != "list" and value not in choices:
            raise InputError(f"{flag} must be one of {', '.join(map(str, choices))}, got "
                             f"{value!r}")


def _help(f: dataclasses.Field, o: Opt, kind: str) -> str:
    text = o.help
    default = f.default if f.default is not _MISSING else None
    if o.show_default and kind not in ("bool", "list") and default not in (None, "") \
            and "default" not in text:
        text += f" (default {_fmt(default)})"
    return text.replace("%", "%%")


def add_flags(target, cls, *, only: tuple[str, ...] | None = None, skip: tuple[str, ...] = (),
              groups: dict | None = None, defaults: dict | None = None) -> None:
    """Add the flags of ``cls``'s declared fields to a parser (or argument group).

    Parameters
    ----------
    target
        An ``argparse`` parser or argument group.
    cls
        The options dataclass.
    only, skip
        Field names to include (all by default) or leave out.
    groups
        ``{title: argument group}``: a field whose ``Opt.group`` names a title is
        added there (created on ``target`` when missing, if ``target`` is a parser).
    defaults
        Defaults that replace the declared ones on this command line.
    """
    groups = {} if groups is None else groups
    for f, o in declared(cls):
        if not o.cli or f.name in skip or (only is not None and f.name not in only):
            continue
        kind = _kind(f, o)
        where = target
        if o.group is not None:
            if o.group not in groups and isinstance(target, argparse.ArgumentParser):
                groups[o.group] = target.add_argument_group(o.group)
            where = groups.get(o.group, target)
        default = (defaults or {}).get(f.name, f.default if f.default is not _MISSING else
                                       None)
        kw: dict[str, Any] = {"dest": f.name, "help": _help(f, o, kind)}
        if f.default is _MISSING and f.default_factory is _MISSING:
            kw["required"] = True
        if o.metavar:
            kw["metavar"] = o.metavar
        if kind == "bool":
            negated = flag_of(f, o).startswith("--no-")
            kw.update(action="store_false" if negated else "store_true", default=bool(default))
        elif kind == "list":
            kw.update(action="append", default=[])
            if o.parse is not None:
                kw["type"] = _argtype(o.parse)
        else:
            kw["default"] = default
            if o.parse is not None:
                kw["type"] = _argtype(o.parse)
            elif kind in ("int", "float"):
                kw["type"] = int if kind == "int" else float
            choices = _choices(o)
            if choices is not None:
                kw["choices"] = list(choices)
        where.add_argument(flag_of(f, o), **kw)


def _argtype(parse: Callable[[str], Any]):
    def convert(text: str):
        try:
            return parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    convert.__name__ = getattr(parse, "__name__", "value")
    return convert


def from_args(cls, args: argparse.Namespace, **given: Any):
    """``cls`` built from parsed flags (fields without a flag on this command keep their
    defaults); ``given`` values win."""
    kw = {}
    for f, o in declared(cls):
        if f.name in given or not hasattr(args, f.name):
            continue
        value = getattr(args, f.name)
        kw[f.name] = tuple(value) if _kind(f, o) == "list" else value
    kw.update(given)
    return cls(**kw)


def describe(cls) -> list[dict]:
    """One row per declared field: flag, kind, default, accepted values and help (for docs)."""
    rows = []
    for f, o in declared(cls):
        kind = _kind(f, o)
        default = f.default if f.default is not _MISSING else None
        accepted = None
        if _choices(o) is not None:
            accepted = ", ".join(map(str, _choices(o)))
        elif kind in ("int", "float") and (o.low is not None or o.high is not None or o.what):
            accepted = _what(kind, o, high="the limit")
        rows.append({"field": f.name, "flag": flag_of(f, o) if o.cli else None, "kind": kind,
                     "default": default, "accepted": accepted, "help": o.help})
    return rows
