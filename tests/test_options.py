"""Options declared once: the flags, the object built back from them, and one set of checks."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

import pytest

from rlvr_boundary.errors import InputError
from rlvr_boundary.options import add_flags, check, describe, from_args, option


def _pair(text: str) -> tuple[int, int]:
    a, b = text.split(":")
    return int(a), int(b)


@dataclass
class Demo:
    n: int = option(low=1, high=100, help="how many")
    rate: float = option(0.5, low=0, high=1, low_open=True, high_open=True, help="a rate")
    name: str = option("a", choices=lambda: ("a", "b"), help="which")
    files: tuple[str, ...] = option((), flag="--file", metavar="F", help="a file (repeatable)")
    span: tuple[int, int] | None = option(None, kind="text", parse=_pair, help="lo:hi")
    pictures: bool = option(True, flag="--no-pictures", help="skip the pictures")
    workers: int = option(2, low=1, high=8, what="an integer from 1 to {high} (here)",
                          help="workers")
    hidden: int = option(3, cli=False, low=0, help="not a flag")

    def __post_init__(self) -> None:
        self.files = tuple(self.files)
        check(self)


def _parse(argv):
    p = argparse.ArgumentParser(exit_on_error=False)
    add_flags(p, Demo)
    return p, p.parse_args(argv)


def test_flags_are_made_from_the_fields_and_build_the_object_back():
    p, args = _parse(["--n", "7", "--file", "x", "--file", "y", "--span", "2:5",
                      "--no-pictures", "--name", "b"])
    d = from_args(Demo, args)
    assert (d.n, d.files, d.span, d.pictures, d.name, d.hidden) == (7, ("x", "y"), (2, 5), False,
                                                                    "b", 3)
    help_text = p.format_help()
    assert "--hidden" not in help_text and "(default 0.5)" in help_text and "--no-pictures" in help_text
    assert from_args(Demo, args, n=9).n == 9  # given values win


def test_a_field_without_default_is_a_required_flag_and_choices_are_enforced():
    p = argparse.ArgumentParser(exit_on_error=False)
    add_flags(p, Demo)
    with pytest.raises(SystemExit):
        p.parse_args([])  # --n is required
    with pytest.raises((SystemExit, argparse.ArgumentError)):
        p.parse_args(["--n", "1", "--name", "c"])


@pytest.mark.parametrize("kw, message", [
    ({"n": 0}, "--n must be an integer >= 1 and at most 100, got 0"),
    ({"n": True}, "--n must be an integer"),
    ({"n": 2.5}, "--n must be an integer"),
    ({"n": 3, "rate": 1.0}, "--rate must be a number strictly between 0 and 1, got 1.0"),
    ({"n": 3, "rate": float("nan")}, "--rate must be a number strictly between 0 and 1"),
    ({"n": 3, "name": "c"}, "--name must be one of a, b, got 'c'"),
    ({"n": 3, "workers": 9}, "--workers must be an integer from 1 to 8 (here), got 9"),
    ({"n": 3, "hidden": -1}, "--hidden must be an integer >= 0"),
])
def test_every_builder_gets_the_same_refusal_naming_the_flag(kw, message):
    with pytest.raises(InputError) as err:
        Demo(**kw)
    assert message in str(err.value)


def test_describe_gives_the_docs_rows_without_machine_numbers():
    rows = {r["field"]: r for r in describe(Demo)}
    assert rows["workers"]["accepted"] == "an integer from 1 to the limit (here)"
    assert rows["hidden"]["flag"] is None and rows["files"]["flag"] == "--file"
    assert rows["name"]["accepted"] == "a, b" and rows["rate"]["default"] == 0.5
