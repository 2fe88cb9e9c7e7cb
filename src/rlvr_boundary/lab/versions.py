"""The library versions behind the lab's numbers: recorded in every run, checked by ``lab run``.

A lab run is reproducible bit for bit only with the same libraries, the same
number of torch threads and the same kind of CPU: a transformers release that
changes the order of a floating-point sum changes the trained weights a
little, and sampling amplifies the difference (a sample whose uniform draw
falls near a boundary between two tokens flips). :data:`DOCUMENTED` holds the
versions the documented numbers (docs/lab.md, the shipped ``lab`` example)
come from; every run folder records the installed ones (``lab_config.json``
beside the options, every rollout manifest, ``lab_result.json``), and ``lab
run`` warns when they differ, from the documented ones or from the ones a
resumed folder was started with.
"""

from __future__ import annotations

import platform
from importlib import metadata

#: Packages whose version can change a lab number (training numerics, sampling, the
#: tokenizer's BPE training, numpy's random streams) and the tool itself.
PACKAGES = ("torch", "transformers", "tokenizers", "numpy", "safetensors")

#: The versions the documented lab numbers were measured with.
DOCUMENTED: dict[str, str] = {
    "python": "3.11.7",
    "torch": "2.13.0",
    "transformers": "5.25.0",
    "tokenizers": "0.23.3",
    "numpy": "2.4.6",
    "safetensors": "0.8.0",
}


def _public(version: str | None) -> str | None:
    """``2.13.0+cpu`` -> ``2.13.0`` (a local build tag does not change the numbers we pin)."""
    return None if version is None else version.split("+")[0]


def installed() -> dict[str, str | None]:
    """Installed versions of :data:`PACKAGES` (None when absent), Python and the tool."""
    from rlvr_boundary._version import __version__

    out: dict[str, str | None] = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    out["rlvr-boundary"] = __version__
    out["machine"] = platform.machine()
    return out


def differences(recorded: dict | None, current: dict) -> list[str]:
    """``["transformers 5.24.0 -> 5.25.0", ...]``: packages of ``recorded`` whose public
    version differs in ``current`` (the tool's own version and the machine are not compared).

    >>> differences({"torch": "2.13.0", "transformers": "5.24.0"},
    ...             {"torch": "2.13.0+cpu", "transformers": "5.25.0"})
    ['transformers 5.24.0 -> 5.25.0']
    """
    out = []
    for name in ("python", *PACKAGES):
        if recorded is None or name not in recorded:
            continue
        a, b = _public(recorded.get(name)), _public(current.get(name))
        if a != b:
            out.append(f"{name} {a} -> {b}")
    return out
