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
import os
import pkgutil
import sys

import rlvr_boundary.commands as pkg
from rlvr_boundary import __version__
from rlvr_boundary.errors import InputError, MissingExtraError

#: Verbs whose numbers are small dense products (thousands of prompts by hundreds of
#: budgets): BLAS threads cost more than they save there, and on a busy machine two
#: spinning threads make the band 5-10 times slower. These verbs run BLAS on one
#: thread unless the user sets OPENBLAS_NUM_THREADS / MKL_NUM_THREADS.
SINGLE_BLAS_THREAD = frozenset({"compare", "report"})


def _command_modules() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules(pkg.__path__) if not m.name.startswith("_"))


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser of every verb; given ``argv`` naming a verb, of that verb only.

    Each verb's module builds its flags from its workflow's options, so registering
    one verb loads one workflow module: a command line names its verb first, and
    ``--help`` (no verb) or a misspelled verb still sees them all.
    """
    parser = argparse.ArgumentParser(
        prog="rlvr-boundary",
        description="Audit what RL from verifiable rewards did to a model's reasoning boundary.",
    )
    parser.add_argument("--version", action="version", version=f"rlvr-boundary {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    names = _command_modules()
    verb = next((a for a in argv or () if not a.startswith("-")), None)
    if verb is not None and verb.replace("-", "_") in names:
        names = [verb.replace("-", "_")]
    for name in names:
        importlib.import_module(f"rlvr_boundary.commands.{name}").register(sub)
    return parser


def _error(template: str, text: str = "") -> None:
    """Print to stderr; rich is imported here, only when there is something to print."""
    from rich.markup import escape

    from rlvr_boundary.console import err_console

    # The message may quote user data: escape it so brackets print as they are.
    err_console.print(template.format(escape(text)), highlight=False)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script; returns the process exit code."""
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    if args.command in SINGLE_BLAS_THREAD and "numpy" not in sys.modules:
        # Read once, when numpy loads its BLAS: only effective before the first import.
        for var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ.setdefault(var, "1")
    from rlvr_boundary.io.outputs import forget_inputs

    forget_inputs()  # the inputs noted by the readers are this command's own
    try:
        code = args.func(args)
    except InputError as exc:
        _error("[bold red]error:[/] {}", str(exc))
        return 2
    except MissingExtraError as exc:
        _error("[bold red]error:[/] {}", str(exc))
        return 3
    except KeyboardInterrupt:
        _error("[yellow]interrupted[/]; completed work was kept and can be resumed")
        return 130
    return int(code or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
