"""The ``rlvr-boundary`` command line.

Each verb lives in its own module under :mod:`rlvr_boundary.commands` and exposes
``register(subparsers)``, which adds its parser and sets ``func``. A verb loads
its inputs, calls the pure core, and writes a versioned result; heavy
dependencies are imported inside the verb, so ``rlvr-boundary --help`` is fast and
works without the optional extras.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

from rich.markup import escape

import rlvr_boundary.commands as pkg
from rlvr_boundary import __version__
from rlvr_boundary.console import err_console
from rlvr_boundary.errors import InputError, MissingExtraError


def _command_modules() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules(pkg.__path__) if not m.name.startswith("_"))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rlvr-boundary",
        description="Audit what RL from verifiable rewards did to a model's reasoning boundary.",
    )
    parser.add_argument("--version", action="version", version=f"rlvr-boundary {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in _command_modules():
        importlib.import_module(f"rlvr_boundary.commands.{name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code = args.func(args)
    except InputError as exc:
        # The message may quote user data: escape it so brackets print as they are.
        err_console.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False)
        return 2
    except MissingExtraError as exc:
        err_console.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False)
        return 3
    except KeyboardInterrupt:
        err_console.print("[yellow]interrupted[/]; completed work was kept and can be resumed")
        return 130
    return int(code or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
