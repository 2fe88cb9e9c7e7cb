"""Build, run and judge the cases of :mod:`tests.fuzz.catalogue`.

A case runs in an empty folder holding only what its setups wrote. Before and after
the run every path in that folder is recorded (type, inode, permissions and, for
regular files, a hash), so a changed input, a replaced FIFO, device or link, or a
refused output that left a file behind is found whatever the command printed.

Two ways to run a case:

- :func:`run_in_process` calls ``main`` (fast; the default test suite);
- :func:`run_in_subprocess` starts ``python -m rlvr_boundary.cli`` under a time
  limit and reads the peak resident memory of the process from ``wait4`` (the
  benchmark runner). A guarded case runs inside a fresh cgroup (processes and memory
  capped) or is not run.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import signal
import socket
import stat
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tests.fuzz.catalogue import Case

# ----------------------------------------------------------------------------- setups


def _j(rows) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


def _counts(root: Path) -> None:
    rng = np.random.default_rng(1)
    for name in ("base", "rl"):
        c = rng.integers(0, 9, size=6)
        (root / f"{name}.jsonl").write_text(_j({"id": f"p{i}", "n": 8, "c": int(v)}
                                               for i, v in enumerate(c)))


def _rollout_rows(text: bool = True):
    rows = []
    for m, shift in (("base", 0), ("rl", 1)):
        for p in range(4):
            for i in range(4):
                ok = (i + p + shift) % 3 == 0
                r = {"prompt_id": f"p{p}", "model": m, "sample_idx": i, "correct": ok,
                     "prompt": f"what is {p} + 0?"}
                if text:
                    r["text"] = f"so the answer is \\boxed{{{p if ok else p + 1}}}"
                rows.append(r)
    return rows


def _rollouts(root: Path) -> None:
    (root / "roll.jsonl").write_text(_j(_rollout_rows()))


def _rollouts_notext(root: Path) -> None:
    (root / "roll.jsonl").write_text(_j(_rollout_rows(text=False)))


def _raw(root: Path) -> None:
    rows = [{"prompt_id": f"p{p}", "model": "m", "sample_idx": i,
             "text": f"we get \\boxed{{{p + (i % 2)}}}"} for p in range(3) for i in range(2)]
    (root / "raw.jsonl").write_text(_j(rows))
    (root / "gold.jsonl").write_text(_j({"prompt_id": f"p{p}", "answer": str(p)}
                                        for p in range(3)))


def _rates(root: Path) -> None:
    (root / "rates.csv").write_text("base,rl\n" + "".join(
        f"{a},{b}\n" for a, b in [(0.1, 0.3), (0.5, 0.6), (0.0, 0.0), (0.9, 1.0), (0.2, 0.0)]))


def _matrix(root: Path) -> None:
    (root / "m.csv").write_text("strategy,pi0,p1,p2,p3\nA,0.5,0.9,0.1,0.5\nB,0.3,0.2,0.8,0.5\n"
                                "C,0.2,0.5,0.5,0.6\n")


def _prompts(root: Path) -> None:
    (root / "prompts.jsonl").write_text(_j({"id": f"q{i}", "prompt": f"{i} + {i} = ?"}
                                           for i in range(2)))


def _rft(root: Path) -> None:
    rows = []
    for p in range(4):
        for i in range(4):
            ok = i % 2 == 0
            rows.append({"prompt_id": f"p{p}", "model": "m", "sample_idx": i, "correct": ok,
                         "text": f"add {p} and {i}: the answer is \\boxed{{{p + i}}} done"})
    (root / "rft.jsonl").write_text(_j(rows))


def _wide(root: Path) -> None:
    rng = np.random.default_rng(3)
    for name in ("wide_b", "wide_r"):
        (root / f"{name}.jsonl").write_text(_j(
            {"id": f"p{i}", "n": 100_000, "c": int(c)}
            for i, c in enumerate(rng.integers(0, 100_000, size=100))))


def _million(root: Path) -> None:
    rng = np.random.default_rng(4)
    for name in ("mb", "mr"):
        c = rng.integers(0, 9, size=1_000_000)
        with open(root / f"{name}.jsonl", "w") as fh:
            for i, v in enumerate(c.tolist()):
                fh.write(f'{{"id": "p{i}", "n": 8, "c": {v}}}\n')


def _huge_rft(root: Path) -> None:
    """2,000,000 rollout rows with texts of about 90 characters (Parquet, 8 shards of rows)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows, P, n = 2_000_000, 31_250, 64
    pid = np.repeat(np.array([f"p{i:06d}" for i in range(P)], dtype=object), n)
    idx = np.tile(np.arange(n), P)
    text = np.array([f"working through the sum step by step: {i % 997} plus {i % 13} is "
                     f"\\boxed{{{i % 997 + i % 13}}} done" for i in range(rows)], dtype=object)
    t = pa.table({"prompt_id": pid, "model": np.full(rows, "m", dtype=object),
                  "sample_idx": idx, "correct": (idx % 3) == 0, "text": text})
    pq.write_table(t, root / "huge.parquet", row_group_size=65_536)


def _grid(root: Path) -> None:
    """The largest grid of benchmarks/bench_memory.py: 100 prompts, n = 100,000."""
    P, n = 100, 100_000
    for name, mult in (("grid_b", 997), ("grid_r", 991)):
        (root / f"{name}.jsonl").write_text(_j({"id": f"p{i}", "n": n, "c": (i * mult) % n}
                                               for i in range(P)))


def _over(root: Path) -> None:
    """Counts of 1,000,001 prompts: one more than an input may hold."""
    with open(root / "over_b.jsonl", "w") as fh:
        for i in range(1_000_001):
            fh.write(f'{{"id": "p{i}", "n": 8, "c": {i % 9}}}\n')


def _longtext(root: Path) -> None:
    """200,000 rollout rows (2 models x 1,000 prompts x 100) with 4 KB completions."""
    rng = np.random.default_rng(5)
    words = ["we", "add", "the", "terms", "so", "then", "check", "sum", "is", "x", "=", "+"]
    body = " ".join(rng.choice(words, size=900))[:3900]
    with open(root / "long.jsonl", "w") as fh:
        for m in ("base", "rl"):
            for p in range(1000):
                for i in range(100):
                    ok = (p * 7 + i + (m == "rl")) % 3 == 0
                    fh.write(json.dumps({"prompt_id": f"p{p}", "model": m, "sample_idx": i,
                                         "correct": ok, "answer": str(p if ok else i),
                                         "text": f"{p}.{i} {body} so \\boxed{{{p}}}"}) + "\n")


def _bigmatrix(root: Path) -> None:
    rng = np.random.default_rng(0)
    S, X = 20, 2500
    F = rng.random((S, X))
    with open(root / "m2.csv", "w") as fh:
        fh.write("strategy,pi0," + ",".join(f"x{j}" for j in range(X)) + "\n")
        for s in range(S):
            fh.write(f"s{s},{1 / S!r}," + ",".join(f"{v:.4f}" for v in F[s]) + "\n")


def _raw20k(root: Path) -> None:
    rows = [{"prompt_id": f"p{p}", "model": "m", "sample_idx": i,
             "text": f"we get \\boxed{{{p + (i % 3 == 0)}}}"}
            for p in range(1000) for i in range(20)]
    (root / "raw20k.jsonl").write_text(_j(rows))
    (root / "gold20k.jsonl").write_text(_j({"prompt_id": f"p{p}", "answer": str(p)}
                                          for p in range(1000)))


SETUPS = {
    "counts": _counts, "rollouts": _rollouts, "rollouts_notext": _rollouts_notext,
    "raw": _raw, "rates": _rates, "matrix": _matrix, "prompts": _prompts, "rft": _rft,
    "wide": _wide, "million": _million, "huge_rft": _huge_rft, "grid": _grid, "over": _over,
    "longtext": _longtext, "bigmatrix": _bigmatrix, "raw20k": _raw20k,
}

#: Size of the "no newline" inputs: 2 GB, as in the review.
NO_NEWLINE_BYTES = 2_000_000_000


def _no_newline(path: Path, cache: Path | None) -> None:
    """A file of NO_NEWLINE_BYTES bytes and no newline (a hard link to a cached copy)."""
    if cache is not None:
        src = cache / f"nonewline{''.join(path.suffixes)}"
        if not src.exists():
            _write_no_newline(src)
        os.link(src, path)
    else:
        _write_no_newline(path)


def _write_no_newline(path: Path) -> None:
    block = b"a" * (64 << 20)
    tmp = path.with_name(path.name + ".part")
    with open(tmp, "wb") as fh:
        left = NO_NEWLINE_BYTES
        while left > 0:
            fh.write(block[:left])
            left -= len(block)
    os.replace(tmp, path)


class Skip(Exception):
    """A case that cannot run here (no mount, no device nodes, no cgroup)."""


def _mount_read_only(d: Path) -> None:
    d.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(d)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise Skip(f"cannot mount a read-only file system ({r.stderr.strip()})")


def build(case: Case, root: Path, cache: Path | None = None) -> list:
    """Write the case's setups and files into the empty folder ``root``.

    Returns what must be released afterwards (sockets, mounts): pass it to
    :func:`release`.
    """
    held: list = []
    root.mkdir(parents=True, exist_ok=True)
    try:
        for spec in case.setup:
            kind, _, name = spec.partition(":")
            if not name:
                SETUPS[kind](root)
                continue
            path = root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            if kind == "fifo":
                os.mkfifo(path)
            elif kind == "chardev":  # like /dev/full, made here: never a real /dev node
                try:
                    os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 7))
                except OSError as exc:
                    raise Skip(f"cannot make a device node ({exc})") from None
            elif kind == "socket":
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.bind(str(path))
                held.append(s)
            elif kind == "link-stdout":
                path.symlink_to("/proc/self/fd/1")
            elif kind == "link-file":
                (root / "victim.txt").write_text("keep me")
                path.symlink_to(root / "victim.txt")
            elif kind == "link-dangling":
                path.symlink_to(root / "nowhere" / "x")
            elif kind == "dir":
                path.mkdir()
            elif kind == "readonly":
                path.write_text("keep me")
                path.chmod(0o444)
            elif kind == "regular":
                path.write_text("keep me")
            elif kind == "rofs":
                _mount_read_only(path)
                held.append(("mount", path))
            elif kind == "nonewline":
                _no_newline(path, cache)
            else:
                raise KeyError(spec)
        for name, data in case.files:
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_bytes(data)
    except BaseException:
        release(held)
        raise
    return held


def release(held: list) -> None:
    for h in held:
        if isinstance(h, tuple) and h[0] == "mount":
            subprocess.run(["umount", str(h[1])], check=False, capture_output=True)
        else:
            with contextlib.suppress(OSError):
                h.close()


# ----------------------------------------------------------------------------- snapshots


def snapshot(root: Path) -> dict[str, tuple]:
    """Every path under ``root``: (type, inode, mode, size, content hash or link target)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st = os.lstat(p)
            what = None
            if stat.S_ISREG(st.st_mode):
                if st.st_size <= 64 << 20:
                    what = hashlib.sha1(p.read_bytes()).hexdigest()
                else:
                    what = ("large", st.st_mtime_ns)
            elif stat.S_ISLNK(st.st_mode):
                what = os.readlink(p)
            out[str(p.relative_to(root))] = (stat.S_IFMT(st.st_mode), st.st_ino,
                                             stat.S_IMODE(st.st_mode), st.st_size, what)
        dirnames[:] = [d for d in dirnames if not os.path.ismount(Path(dirpath) / d)]
    return out


# ----------------------------------------------------------------------------- outcomes


@dataclass
class Outcome:
    """What one run of a case gave."""

    code: int | None
    stdout: str
    stderr: str
    seconds: float
    peak_mb: float | None = None
    hung: bool = False
    skipped: str = ""
    changed: list[str] = field(default_factory=list)
    created: list[str] = field(default_factory=list)

    @property
    def traceback(self) -> bool:
        return "Traceback (most recent call last)" in self.stderr or (
            self.code is not None and self.code not in (0, 2, 3) and not self.hung)


def verdict(case: Case, o: Outcome) -> list[str]:
    """What is wrong with outcome ``o`` of ``case`` (empty: as the catalogue says)."""
    if o.skipped:
        return []
    bad = []
    if o.hung:
        bad.append(f"hang (no exit in {case.timeout:g} s)")
    if o.traceback:
        bad.append(f"traceback or exit code {o.code}")
    if o.changed:
        bad.append(f"destructive: changed {o.changed[:5]}")
    if bad:
        return bad
    if case.expect == "ok":
        if o.code != 0:
            bad.append(f"expected success, got exit {o.code}: {o.stderr.strip()[-300:]}")
        elif "-" in case.argv and case.argv[case.argv.index("-") - 1] in ("--json",
                                                                             "--summary"):
            try:
                json.loads(o.stdout)
            except ValueError:
                bad.append("stdout is not one JSON document")
    else:
        if o.code != 2:
            bad.append(f"expected exit 2, got {o.code}: {o.stderr.strip()[-300:]}")
        elif case.message and case.message not in o.stderr:
            bad.append(f"message lacks {case.message!r}: {o.stderr.strip()[-300:]}")
        if case.expect == "refused" and o.created:
            bad.append(f"a refused output left {o.created[:5]}")
    return bad


def _changes(before: dict, after: dict, case: Case) -> tuple[list[str], list[str]]:
    changed = [p for p, v in before.items()
               if p not in case.unchanged_ok and after.get(p) != v]
    created = [p for p in after if p not in before]
    return changed, created


# ----------------------------------------------------------------------------- running


def run_in_process(case: Case, root: Path) -> Outcome:
    """Run ``main(argv)`` in ``root`` (built already); the folder is compared before/after."""
    from rlvr_boundary import console as con
    from rlvr_boundary.cli import main

    before = snapshot(root)
    old = os.getcwd()
    out, err = io.StringIO(), io.StringIO()
    saved = (con.console._file, con.err_console._file)
    stdin = sys.stdin
    t0 = time.perf_counter()
    try:
        os.chdir(root)
        con.console.file, con.err_console.file = out, err
        sys.stdin = io.TextIOWrapper(io.BytesIO(case.stdin or b""), encoding="utf-8")
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(list(case.argv))
            except SystemExit as exc:  # argparse
                code = exc.code if isinstance(exc.code, int) else 1
            except Exception:  # noqa: BLE001 - a crash is an outcome to report
                import traceback

                err.write(traceback.format_exc())
                code = 1
    finally:
        sys.stdin = stdin
        os.chdir(old)
        con.console._file, con.err_console._file = saved
    o = Outcome(code, out.getvalue(), err.getvalue(), time.perf_counter() - t0)
    o.changed, o.created = _changes(before, snapshot(root), case)
    return o


class Cgroup:
    """A fresh cgroup (v1 ``pids`` and ``memory`` hierarchies, or v2) capping a guarded case."""

    def __init__(self, tag: str, pids: int = 256, memory_bytes: int = 4 << 30) -> None:
        self.dirs: list[Path] = []
        name = f"rlvr-fuzz-{os.getpid()}-{tag}"
        v2 = Path("/sys/fs/cgroup/cgroup.controllers")
        try:
            if v2.exists():
                d = Path("/sys/fs/cgroup") / name
                d.mkdir()
                self.dirs.append(d)
                (d / "pids.max").write_text(str(pids))
                (d / "memory.max").write_text(str(memory_bytes))
            else:
                own = {line.split(":")[1]: line.split(":")[2].strip()
                       for line in Path("/proc/self/cgroup").read_text().splitlines()}
                for ctl in ("pids", "memory"):
                    d = Path("/sys/fs/cgroup") / ctl / own.get(ctl, "/").lstrip("/") / name
                    d.mkdir()
                    self.dirs.append(d)
                (self.dirs[0] / "pids.max").write_text(str(pids))
                (self.dirs[1] / "memory.limit_in_bytes").write_text(str(memory_bytes))
                sw = self.dirs[1] / "memory.memsw.limit_in_bytes"
                if sw.exists():
                    with contextlib.suppress(OSError):
                        sw.write_text(str(memory_bytes))
        except OSError as exc:
            self.remove()
            raise Skip(f"no cgroup to cap a guarded case ({exc})") from None

    def enter(self) -> None:
        """In the child, before exec: join every hierarchy."""
        for d in self.dirs:
            (d / "cgroup.procs").write_text(str(os.getpid()))

    def remove(self) -> None:
        for d in self.dirs:
            for _ in range(50):
                try:
                    pids = (d / "cgroup.procs").read_text().split()
                except OSError:
                    break
                for pid in pids:
                    with contextlib.suppress(OSError):
                        os.kill(int(pid), signal.SIGKILL)
                try:
                    d.rmdir()
                    break
                except OSError:
                    time.sleep(0.1)


#: The child: the command line, then its own peak resident memory (VmHWM) on stderr. Not
#: ``ru_maxrss`` from ``wait4``: it survives ``execve`` on Linux and would report the
#: runner's own peak when that was larger.
CHILD = r"""
import sys
def _hwm():
    try:
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM"):
                sys.stderr.write("\nVMHWM_KB " + line.split()[1] + "\n")
                sys.stderr.flush()
    except OSError:
        pass
from rlvr_boundary.cli import main
try:
    code = main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
finally:
    _hwm()
sys.exit(code)
"""


def _vmhwm_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmHWM"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def run_in_subprocess(case: Case, root: Path, *, guard: bool = True) -> Outcome:
    """Run the case in a fresh interpreter with its time limit; peak RSS from its VmHWM.

    The child reports its own VmHWM as it exits; a child killed at the time limit is
    measured by the parent, which reads it every 50 ms while waiting.
    """
    cg = None
    if case.guarded and guard:
        cg = Cgroup(f"{abs(hash(case.id)) % 10**8}")
    before = snapshot(root)
    outf, errf = root.parent / f".{root.name}.out", root.parent / f".{root.name}.err"
    import rlvr_boundary

    src = str(Path(rlvr_boundary.__file__).parents[1])  # this tree, whatever is installed
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [src, *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]),
        COLUMNS="200")
    t0 = time.perf_counter()
    hung = False
    with open(outf, "wb") as fo, open(errf, "wb") as fe:
        proc = subprocess.Popen(
            [sys.executable, "-c", CHILD, *case.argv], cwd=root,
            stdin=subprocess.PIPE, stdout=fo, stderr=fe, env=env, start_new_session=True,
            preexec_fn=cg.enter if cg is not None else None)
        with contextlib.suppress(BrokenPipeError):
            proc.stdin.write(case.stdin or b"")
            proc.stdin.close()
        deadline = t0 + case.timeout
        status, polled = None, 0
        while True:
            polled = max(polled, _vmhwm_kb(proc.pid))
            pid, st, _ = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                status = st
                break
            if time.perf_counter() > deadline:
                hung = True
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                _, status, _ = os.wait4(proc.pid, 0)
                break
            time.sleep(0.05)
        proc.returncode = os.waitstatus_to_exitcode(status)
    if cg is not None:
        cg.remove()
    with contextlib.suppress(ProcessLookupError):  # what the command left running
        os.killpg(proc.pid, signal.SIGKILL)
    err = errf.read_text(errors="replace")
    reported = [int(x.split()[1]) for x in err.splitlines() if x.startswith("VMHWM_KB ")]
    err = "\n".join(x for x in err.splitlines() if not x.startswith("VMHWM_KB "))
    o = Outcome(None if hung else proc.returncode, outf.read_text(errors="replace"), err,
                time.perf_counter() - t0, peak_mb=max([polled, *reported]) / 1024, hung=hung)
    outf.unlink()
    errf.unlink()
    o.changed, o.created = _changes(before, snapshot(root), case)
    return o


def run_case(case: Case, base: Path, *, subprocess_mode: bool, cache: Path | None = None,
             guard: bool = True) -> Outcome:
    """Build ``case`` in a fresh folder under ``base``, run it, release and remove the folder."""
    import shutil

    root = base / f"case-{abs(hash(case.id)) % 10**10}"
    if root.exists():
        shutil.rmtree(root)
    held = []
    try:
        try:
            held = build(case, root, cache)
            run = run_in_subprocess if subprocess_mode else run_in_process
            return run(case, root) if not subprocess_mode else run(case, root, guard=guard)
        except Skip as exc:
            return Outcome(None, "", "", 0.0, skipped=str(exc))
    finally:
        release(held)
        shutil.rmtree(root, ignore_errors=True)
