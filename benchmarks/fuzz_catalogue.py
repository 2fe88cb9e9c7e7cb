"""Rerun the catalogue of hostile command lines; report per verb what broke and peak memory.

Every case of ``tests/fuzz/catalogue.py`` (a command line, the files it needs and the
outcome a user must get: success, a clear error, or a refused output) runs in a
fresh interpreter, in an empty folder, under its time limit. For each verb the
table counts

* tracebacks (an exception escaping the tool, or an exit code other than 0, 2, 3),
* hangs (no exit within the case's time limit; the process group is killed),
* destructive writes (anything that existed in the folder before the run (inputs,
  a FIFO, a device node, a link, a read-only file) changed, replaced or removed),
* other departures from the catalogue (wrong exit code, a message that does not say
  what is wrong, a refused output that left a file),
* cases that wait for a fix elsewhere (expected to fail until it is merged; shown
  with how many already pass),

and the peak resident memory of the command's process (``ru_maxrss`` from
``wait4``; worker processes have their own caps) with the case that reached it.
The peer is the interpreter with the command line imported (``--version``).

Cases marked guarded (they forked until the out-of-memory killer, or allocated many
GB, before their bound existed) run only inside a fresh cgroup capping processes
(256) and memory (4 GB); without one (not root, no cgroup) they are skipped.
Inputs of 2 GB are made once in a cache folder and hard-linked into each case.

Usage::

    python benchmarks/fuzz_catalogue.py                 # every case, about 30 minutes
    python benchmarks/fuzz_catalogue.py --light         # the cases of the default tests
    python benchmarks/fuzz_catalogue.py --verb price --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

from tests.fuzz.catalogue import CASES, Case  # noqa: E402
from tests.fuzz.catalogue_run import run_case, verdict  # noqa: E402

LIMIT_MB = 1024


def _peer_mb(base: Path) -> float:
    c = Case("peer", "interpreter + imports", ("--version",), expect="ok")
    return run_case(c, base, subprocess_mode=True).peak_mb or float("nan")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--verb", action="append", help="only these verbs (repeatable)")
    ap.add_argument("--light", action="store_true", help="only the cases of the default tests")
    ap.add_argument("--heavy", action="store_true", help="only the heavy cases")
    ap.add_argument("-k", dest="match", help="only cases whose id contains this text")
    ap.add_argument("--json", help="write every outcome to this file")
    ap.add_argument("--tmp", help="folder for the cases (default: a temporary folder)")
    ap.add_argument("--markdown", metavar="JSON",
                    help="print the per-verb table of an earlier --json run as Markdown")
    args = ap.parse_args(argv)
    if args.markdown:
        doc = json.loads(Path(args.markdown).read_text())
        print(markdown(doc["cases"], doc["peer_mb"]))
        return 0
    cases = [c for c in CASES if (not args.verb or c.verb in args.verb)
             and (not args.light or not c.heavy) and (not args.heavy or c.heavy)
             and (not args.match or args.match in c.id)]
    base = Path(tempfile.mkdtemp(prefix="rlvr-catalogue-", dir=args.tmp))
    cache = base / "cache"
    cache.mkdir()
    print(f"{len(cases)} cases; {os.cpu_count()} CPUs, Python {platform.python_version()}, "
          f"folder {base}", flush=True)
    rows, t0 = [], time.time()
    try:
        peer = _peer_mb(base)
        for i, c in enumerate(cases, 1):
            o = run_case(c, base, subprocess_mode=True, cache=cache)
            problems = verdict(c, o)
            row = {"id": c.id, "verb": c.verb, "argv": list(c.argv), "expect": c.expect,
                   "waits_for": c.waits_for, "code": o.code, "seconds": round(o.seconds, 2),
                   "peak_mb": None if o.peak_mb is None else round(o.peak_mb, 1),
                   "hang": o.hung, "traceback": o.traceback and not o.skipped,
                   "destructive": o.changed, "skipped": o.skipped, "problems": problems,
                   "stderr": o.stderr.strip()[-400:]}
            rows.append(row)
            flag = "skip" if o.skipped else ("ok" if not problems else
                                             "WAIT" if c.waits_for else "FAIL")
            print(f"[{i:3d}/{len(cases)}] {flag:4s} {o.seconds:6.1f}s "
                  f"{row['peak_mb'] or 0:7.0f} MB  {c.id}"
                  + (f"\n      {problems[0][:200]}" if problems and flag != "ok" else ""),
                  flush=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    _table(rows, peer)
    print(f"total {time.time() - t0:.0f} s")
    if args.json:
        Path(args.json).write_text(json.dumps({"peer_mb": peer, "cases": rows}, indent=1))
    bad = [r for r in rows if r["problems"] and not r["waits_for"]]
    return 1 if bad else 0


def _per_verb(rows: list[dict]) -> list[dict]:
    """One summary per verb (and one for all): counts, and the peak with its case."""
    per = defaultdict(list)
    for r in rows:
        per[r["verb"]].append(r)
    out = []
    for verb in [*sorted(per), None]:
        rs = rows if verb is None else per[verb]
        run = [r for r in rs if not r["skipped"]]
        mine = [r for r in run if not r["waits_for"]]
        wait = [r for r in run if r["waits_for"]]
        top = max(run, key=lambda r: r["peak_mb"] or 0, default=None)
        out.append({
            "verb": verb or "all", "cases": len(rs),
            "as_said": sum(not r["problems"] for r in mine),
            "tracebacks": sum(bool(r["traceback"]) for r in mine),
            "hangs": sum(bool(r["hang"]) for r in mine),
            "destructive": sum(bool(r["destructive"]) for r in mine),
            "other": sum(bool(r["problems"]) and not (r["traceback"] or r["hang"]
                                                      or r["destructive"]) for r in mine),
            "waiting": len(wait), "waiting_pass": sum(not r["problems"] for r in wait),
            "skipped": len(rs) - len(run),
            "peak_mb": (top["peak_mb"] or 0) if top else 0,
            "peak_case": top["id"] if top else ""})
    return out


def markdown(rows: list[dict], peer: float) -> str:
    """The per-verb table as Markdown (for docs/reliability.md)."""
    lines = ["| verb | cases | as stated | tracebacks | hangs | destructive writes | other | "
             "waiting for a fix elsewhere (passing) | peak MB | case at the peak |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for v in _per_verb(rows):
        if v["verb"] == "all":
            lines.append(f"| all | {v['cases']} | {v['as_said']} | {v['tracebacks']} | "
                         f"{v['hangs']} | {v['destructive']} | {v['other']} | "
                         f"{v['waiting']} ({v['waiting_pass']}) | | |")
            continue
        case = v["peak_case"].split("/", 1)[-1]
        lines.append(f"| `{v['verb']}` | {v['cases']} | {v['as_said']} | {v['tracebacks']} | "
                     f"{v['hangs']} | {v['destructive']} | {v['other']} | "
                     f"{v['waiting']} ({v['waiting_pass']}) | {v['peak_mb']:.0f} | {case} |")
    lines.append(f"\nPeer: the interpreter starting the command line, {peer:.0f} MB.")
    return "\n".join(lines)


def _table(rows: list[dict], peer: float) -> None:
    head = (f"{'verb':12s} {'cases':>5s} {'as said':>7s} {'tracebacks':>10s} {'hangs':>5s} "
            f"{'destructive':>11s} {'other':>5s} {'waiting (pass)':>14s} {'skipped':>7s} "
            f"{'peak MB':>7s}  case at the peak")
    print("\n" + head + "\n" + "-" * len(head))
    for v in _per_verb(rows):
        if v["verb"] == "all":
            print("-" * len(head))
        waiting = f"{v['waiting']} ({v['waiting_pass']})"
        where = v["peak_case"].split("/", 1)[-1][:48] if v["verb"] != "all" else ""
        peak = f"{v['peak_mb']:7.0f}" if v["verb"] != "all" else ""
        print(f"{v['verb']:12s} {v['cases']:5d} {v['as_said']:7d} {v['tracebacks']:10d} "
              f"{v['hangs']:5d} {v['destructive']:11d} {v['other']:5d} {waiting:>14s} "
              f"{v['skipped']:7d} {peak:>7s}  {where}")
    print(f"peer (the interpreter starting the command line): {peer:.0f} MB; target: every "
          f"verb below {LIMIT_MB} MB")


if __name__ == "__main__":
    sys.exit(main())
