"""Benchmark: whole-process ``compare`` and ``report`` on the shipped examples, this tree vs another.

Each command is started as a fresh process, the way a user runs it:

- ``rlvr-boundary compare --example --json FILE`` (the DeepScaleR counts, 1,060
  prompts, n = 128, B = 4,000);
- ``rlvr-boundary report --example lab --out FILE.html`` (the lab's rollouts with
  texts, five models, figures as PNG and PDF).

The peer is the same commands run from another source tree (``--against DIR``,
a folder holding ``rlvr_boundary/``, e.g. an older release unpacked with
``git archive REV src | tar -x -C /tmp/old``): both trees run interleaved in
the same session, best of ``--repeat``, and the ratio is printed. The result
files of both trees are compared after the runs, value by value (``created``
and the recorded versions aside; keys one tree adds are listed), so a speed-up
cannot hide a change of output.

Run:  python benchmarks/bench_workflows.py --against /tmp/old/src [--repeat 5]
Without ``--against`` only this tree is timed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Keys that legitimately differ between two runs of the same command.
VOLATILE = {"created", "tool_version", "versions"}


sys.path.insert(0, str(Path(__file__).parent))
from bench_cli import run  # noqa: E402  (wall and CPU seconds of one process)


def commands(tmp: Path, tag: str) -> dict[str, list[str]]:
    cli = [sys.executable, "-m", "rlvr_boundary.cli"]
    return {"compare --example --json": cli + ["compare", "--example", "--json",
                                                str(tmp / f"{tag}-compare.json")],
            "report --example lab": cli + ["report", "--example", "lab", "--out",
                                           str(tmp / f"{tag}-report.html")]}


def flat(doc, path: str = "") -> dict:
    """``{key path: value}`` of every leaf, the keys that differ between runs left out."""
    if isinstance(doc, dict):
        out = {}
        for k, v in doc.items():
            if k not in VOLATILE:
                out.update(flat(v, f"{path}.{k}" if path else k))
        return out
    if isinstance(doc, list) and doc and any(isinstance(v, (dict, list)) for v in doc):
        out = {}
        for i, v in enumerate(doc):
            out.update(flat(v, f"{path}[{i}]"))
        return out
    return {path: doc}


def differences(a: dict, b: dict) -> str:
    """The same numbers where both documents have a key; the keys only one of them has."""
    fa, fb = flat(a), flat(b)
    common = fa.keys() & fb.keys()
    changed = sorted(k for k in common if fa[k] != fb[k])
    only_a, only_b = sorted(fa.keys() - fb.keys()), sorted(fb.keys() - fa.keys())
    text = (f"{len(common) - len(changed)} of {len(common)} common values equal"
            + (f"; different: {', '.join(changed[:8])}" if changed else ""))
    if only_a:
        text += f"; only in this tree: {', '.join(only_a[:8])}" + (" ..." if len(only_a) > 8
                                                                  else "")
    if only_b:
        text += f"; only in the peer: {', '.join(only_b[:8])}" + (" ..." if len(only_b) > 8
                                                                 else "")
    return text


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--against", type=Path, metavar="SRC",
                    help="another source tree (the folder holding rlvr_boundary/) to time alike")
    args = ap.parse_args()
    import numpy as np

    trees = {"this tree": ROOT / "src"}
    if args.against:
        if not (args.against / "rlvr_boundary").is_dir():
            raise SystemExit(f"{args.against} holds no rlvr_boundary/ package")
        trees["peer tree"] = args.against.resolve()
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}, Python "
          f"{platform.python_version()}, numpy {np.__version__}; best of {args.repeat}, "
          "interleaved")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        envs = {t: {**os.environ, "PYTHONPATH": str(src), "CI": "1"} for t, src in trees.items()}
        cmds = {t: commands(tmp, f"t{i}") for i, t in enumerate(trees)}
        for t in trees:  # warm the file cache and the byte-code caches
            for cmd in cmds[t].values():
                run(cmd, envs[t])
        best: dict = {t: {name: [float("inf"), float("inf")] for name in cmds[t]} for t in trees}
        for _ in range(args.repeat):
            for name in cmds["this tree"]:
                for t in trees:
                    w, c = run(cmds[t][name], envs[t])
                    b = best[t][name]
                    b[0], b[1] = min(b[0], w), min(b[1], c)
        print(f"{'command':28s} " + " ".join(f"{t + ' wall':>16s} {t + ' cpu':>15s}"
                                             for t in trees)
              + ("   peer/this wall   cpu" if len(trees) > 1 else ""))
        for name in cmds["this tree"]:
            cells = " ".join(f"{best[t][name][0]:15.2f}s {best[t][name][1]:14.2f}s"
                             for t in trees)
            ratio = ""
            if len(trees) > 1:
                a, b = best["this tree"][name], best["peer tree"][name]
                ratio = f"   {b[0] / a[0]:14.2f}x {b[1] / a[1]:5.2f}x"
            print(f"{name:28s} {cells}{ratio}")
        print(f"load average after: {os.getloadavg()[0]:.1f}")
        if len(trees) > 1:
            for kind in ("compare.json", "report.json"):
                # Example inputs are read from each tree: their paths are named alike here.
                a = json.loads((tmp / f"t0-{kind}").read_text()
                               .replace(str(trees["this tree"]), "SRC"))
                b = json.loads((tmp / f"t1-{kind}").read_text()
                               .replace(str(trees["peer tree"]), "SRC"))
                print(f"{kind}: {differences(a, b)}")


if __name__ == "__main__":
    main()
