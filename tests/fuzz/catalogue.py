"""The catalogue of hostile command lines: every verb, its inputs, its outputs and its flags.

Each :class:`Case` is data: a command line, the files it needs (named setups, built
fresh in an empty folder), and the outcome a user must get:

``ok``
    exit 0.
``error``
    exit 2 with the tool's own one-line message (``message`` is a part of it).
``refused``
    an output the command must not write: exit 2, and nothing in the folder changed.

Whatever the outcome, a case must never end in a traceback, hang, or change an input
(or a device, FIFO, socket or link placed where an output goes). The harness
(:mod:`tests.fuzz.catalogue_run`) checks all of that; ``tests/fuzz/test_catalogue.py``
runs the light cases in-process and ``benchmarks/fuzz_catalogue.py`` runs every
case in a fresh process under a time limit and reports, per verb, tracebacks, hangs,
destructive writes and peak memory.

Cases whose fix belongs to a bound declared elsewhere (numeric flag bounds of the
options classes, the sizes of ``plan``, the app) carry ``waits_for``, naming it: they
are expected failures until that fix is merged, and then pass. Cases that would
harm the machine until then (forking until the out-of-memory killer) run only inside
a cgroup that caps processes and memory.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

#: The unreachable server of the sample cases (nothing listens on port 1).
DEAD_URL = "http://127.0.0.1:1/v1"
SAMPLE = ("sample", "--model", "m", "--backend", "openai", "--base-url", DEAD_URL,
          "--request-timeout", "2", "--prompts", "prompts.jsonl", "--n", "1")


@dataclass(frozen=True)
class Case:
    """One hostile command line and what it must give."""

    verb: str
    """The verb (``theory frontier`` counts as ``theory``)."""
    name: str
    """What is hostile about it, unique within the verb."""
    argv: tuple[str, ...]
    """The command line after ``rlvr-boundary``; paths relative to the case folder."""
    setup: tuple[str, ...] = ()
    """Named setups (:data:`tests.fuzz.catalogue_run.SETUPS`), ``kind:path`` for things at a path."""
    files: tuple[tuple[str, bytes], ...] = ()
    """Extra input files: ``(path, content)``."""
    expect: str = "error"
    """``ok``, ``error`` or ``refused``."""
    message: str = ""
    """A part of the message an ``error`` or ``refused`` case must print."""
    waits_for: str = ""
    """The fix elsewhere this case waits for (an expected failure until it is merged)."""
    heavy: bool = False
    """Big inputs, long runs or subprocess-only cases: the benchmark runner only."""
    guarded: bool = False
    """Run only inside a cgroup capping processes and memory (harmful until fixed)."""
    stdin: bytes | None = None
    """Standard input."""
    timeout: float = 120.0
    """Seconds before the case counts as a hang."""
    unchanged_ok: tuple[str, ...] = field(default=())
    """Existing paths an ``ok`` case may rewrite (its own outputs)."""

    @property
    def id(self) -> str:
        return f"{self.verb}/{self.name}"


def _j(*rows) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


# ----------------------------------------------------------------------------- outputs

#: (verb, flag, argv with @OUT, what the flag writes, setups) for every output flag.
#: What: "json" (one JSON document: '-' is stdout), "file" (a file of another format),
#: "folder" (a folder of outputs).
OUTPUT_FLAGS = [
    ("compare", "--json", ("compare", "--base", "base.jsonl", "--rl", "rl.jsonl", "--ks", "1-4",
                           "--bootstrap", "20", "--json", "@OUT"), "json", ("counts",)),
    ("compare", "--out", ("compare", "--base", "base.jsonl", "--rl", "rl.jsonl", "--ks", "1-4",
                          "--bootstrap", "20", "--out", "@OUT"), "folder", ("counts",)),
    ("report", "--out", ("report", "base.jsonl", "rl.jsonl", "--no-figures", "--bootstrap", "20",
                         "--out", "@OUT.html"), "file", ("counts",)),
    ("price", "--json", ("price", "rates.csv", "--ks", "1-8", "--json", "@OUT"), "json",
     ("rates",)),
    ("plan", "--json", ("plan", "--base", "base.jsonl", "--rl", "rl.jsonl", "--gain-at", "1",
                        "--sims", "10", "--budgets", "8", "--json", "@OUT"), "json", ("counts",)),
    ("verify", "--out file", ("verify", "raw.jsonl", "--gold", "gold.jsonl", "--backend",
                              "canonical", "--workers", "1", "--out", "@OUT.parquet"), "file",
     ("raw",)),
    ("verify", "--out folder", ("verify", "raw.jsonl", "--gold", "gold.jsonl", "--backend",
                                "canonical", "--workers", "1", "--out", "@OUT"), "folder",
     ("raw",)),
    ("verify", "--json", ("verify", "raw.jsonl", "--gold", "gold.jsonl", "--backend", "canonical",
                          "--workers", "1", "--out", "v.parquet", "--json", "@OUT"), "json",
     ("raw",)),
    ("rft-select", "--out", ("rft-select", "rft.jsonl", "--by", "random", "--budget", "4",
                             "--out", "@OUT.jsonl"), "file", ("rft",)),
    ("rft-select", "--summary", ("rft-select", "rft.jsonl", "--by", "random", "--budget", "4",
                                 "--out", "sel.jsonl", "--summary", "@OUT"), "json", ("rft",)),
    ("sample", "--out", (*SAMPLE, "--out", "@OUT"), "folder", ("prompts",)),
    ("sample", "--json", (*SAMPLE, "--out", "s", "--json", "@OUT"), "json", ("prompts",)),
    ("score", "--out", ("score", "roll.jsonl", "--model", "m", "--out", "@OUT"), "folder",
     ("rollouts",)),
    ("score", "--learning", ("score", "roll.jsonl", "--model", "m", "--before", "m0", "--out",
                             "sc", "--learning", "@OUT"), "json", ("rollouts",)),
    ("theory", "verify --json", ("theory", "verify", "--quick", "--json", "@OUT"), "json", ()),
    ("theory", "frontier --out", ("theory", "frontier", "m.csv", "--taus", "3", "--kmax", "8",
                                  "--out", "@OUT.png"), "file", ("matrix",)),
    ("theory", "frontier --json", ("theory", "frontier", "m.csv", "--taus", "3", "--kmax", "8",
                                   "--out", "f.svg", "--json", "@OUT"), "json", ("matrix",)),
    ("theory", "diagnose --json", ("theory", "diagnose", "m.csv", "--json", "@OUT"), "json",
     ("matrix",)),
    ("lab", "run --out", ("lab", "run", "--out", "@OUT"), "folder", ()),
]

#: Things placed where an output goes: (kind, setup kind, message). For files and folders.
FILE_KINDS = [
    ("fifo", "fifo", "a FIFO"),
    ("character device", "chardev", "a character device"),
    ("socket", "socket", "a socket"),
    ("link to stdout", "link-stdout", "symbolic link"),
    ("link to a file", "link-file", "symbolic link"),
    ("dangling link", "link-dangling", "symbolic link"),
    ("directory", "dir", "is a directory"),
    ("read-only file", "readonly", "read-only"),
    ("read-only file system", "rofs", "not writable"),
    ("below a file", "file-parent", "is not a directory"),
    ("the input", "input", "input"),
    ("standard output", "stdout", "standard output"),
]
FOLDER_KINDS = [
    ("fifo", "fifo", "not a directory"),
    ("character device", "chardev", "not a directory"),
    ("socket", "socket", "not a directory"),
    ("link to a file", "link-file", "not a directory"),
    ("regular file", "regular", "not a directory"),
    ("read-only file system", "rofs", "not writable"),
    ("below a file", "file-parent", "is not a directory"),
    ("the input", "input", "input"),
    ("standard output", "stdout", "standard output"),
]
#: The input file each command line reads first (what "the input" kind points the output at).
FIRST_INPUT = {"compare": "rl.jsonl", "report": "rl.jsonl", "price": "rates.csv",
               "plan": "rl.jsonl", "verify": "raw.jsonl", "rft-select": "rft.jsonl",
               "sample": "prompts.jsonl", "score": "roll.jsonl", "theory": "m.csv",
               "lab": None}


def _output_cases() -> list[Case]:
    out = []
    for verb, flag, argv, what, setups in OUTPUT_FLAGS:
        suffix = next(a[len("@OUT"):] for a in argv if a.startswith("@OUT"))
        for kind, setup_kind, message in FOLDER_KINDS if what == "folder" else FILE_KINDS:
            extra: tuple[str, ...] = ()
            if setup_kind == "input":
                src = None if flag.startswith("verify --json") and verb == "theory" else \
                    FIRST_INPUT[verb]
                if src is None:
                    continue
                path, message = src, ""
            elif setup_kind == "stdout":
                path = "-"
                if what == "file":  # refused, by the check of that format's ending or of '-'
                    message = ""
            elif setup_kind == "rofs":
                path, extra = "ro/out" + suffix, ("rofs:ro",)
            elif setup_kind == "file-parent":
                path, extra = "afile/out" + suffix, ("regular:afile",)
            else:
                path = "out" + suffix
                extra = (f"{setup_kind}:{path}",)
            args = tuple(path if a.startswith("@OUT") else a for a in argv)
            expect, heavy = "refused", False
            if setup_kind == "stdout" and what == "json":
                expect, message = "ok", ""
                if verb in ("sample", "score"):  # accepted; then the run fails (no server, model)
                    expect, heavy = "error", True
                heavy = heavy or (verb == "theory" and flag.startswith("verify"))
            out.append(Case(verb, f"{flag} is {kind}", args, (*setups, *extra), expect=expect,
                            message=message, heavy=heavy))
    return out


# ----------------------------------------------------------------------------- inputs and flags

COMPARE = ("compare", "--base", "base.jsonl", "--rl", "rl.jsonl", "--ks", "1-4", "--bootstrap",
           "20")
REPORT = ("report", "base.jsonl", "rl.jsonl", "--no-figures", "--bootstrap", "20", "--out",
          "r.html")
VERIFY = ("verify", "raw.jsonl", "--gold", "gold.jsonl", "--backend", "canonical", "--workers",
          "1", "--out", "v.parquet")
WATCH = ("watch", "run", "--base", "b.jsonl", "--prompts", "p.jsonl", "--once")
WATCH_FILES = (("p.jsonl", b'{"prompt_id": "a", "prompt": "1+1", "answer": "2"}\n'),
               ("b.jsonl", b'{"id": "a", "n": 4, "c": 1}\n'), ("run/.keep", b""))
RFT = ("rft-select", "rft.jsonl", "--by", "random", "--budget", "4", "--out", "sel.jsonl")
PLAN = ("plan", "--base", "base.jsonl", "--rl", "rl.jsonl", "--gain-at", "1", "--sims", "10",
        "--budgets", "8")
FRONTIER = ("theory", "frontier", "m.csv", "--taus", "3", "--kmax", "8", "--out", "f.png")
DUP_IDX = _j(*[{"prompt_id": "p", "model": "m", "sample_idx": i, "correct": True}
               for i in (0, 1, 1, 4, 5, 5, 6, 6, 8, 9)],
             *[{"prompt_id": "p", "model": "r", "sample_idx": i, "correct": False}
               for i in range(10)])
ANSWER_42 = _j(*[{"prompt_id": "p", "model": "m", "sample_idx": i, "correct": True,
                  "text": "answer 42", "verify_status": "ok"} for i in range(4)])


def _input_cases() -> list[Case]:
    C = Case
    cases = [
        # ---------------------------------------------------------------- compare
        C("compare", "valid counts", COMPARE, ("counts",), expect="ok"),
        C("compare", "valid rollouts (two models in one file)",
          ("compare", "--base", "roll.jsonl", "--base-model", "base", "--rl", "roll.jsonl",
           "--rl-model", "rl", "--ks", "1-4", "--bootstrap", "20"), ("rollouts",), expect="ok"),
        C("compare", "missing file", ("compare", "--base", "nope.jsonl", "--rl", "rl.jsonl"),
          ("counts",), message="file not found"),
        C("compare", "input is an empty file", ("compare", "--base", "e.jsonl", "--rl",
                                                "rl.jsonl"), ("counts",),
          files=(("e.jsonl", b""),), message="empty"),
        C("compare", "input is a folder without shards", ("compare", "--base", "d", "--rl",
                                                          "rl.jsonl"), ("counts", "dir:d"),
          message="directory"),
        C("compare", "input is a FIFO", ("compare", "--base", "f", "--rl", "rl.jsonl"),
          ("counts", "fifo:f"), message="FIFO"),
        C("compare", "input is a character device", ("compare", "--base", "z", "--rl",
                                                     "rl.jsonl"), ("counts", "chardev:z"),
          message="character device"),
        C("compare", "malformed JSON", ("compare", "--base", "b.jsonl", "--rl", "rl.jsonl"),
          ("counts",), files=(("b.jsonl", b'{"id": "a", "n": 4, "c": 1\n'),),
          message="malformed JSON"),
        C("compare", "c > n", ("compare", "--base", "b.jsonl", "--rl", "rl.jsonl"),
          ("counts",), files=(("b.jsonl", _j({"id": "a", "n": 2, "c": 3})),),
          message="exceeds n"),
        C("compare", "duplicate prompt id", ("compare", "--base", "b.jsonl", "--rl", "rl.jsonl"),
          ("counts",), files=(("b.jsonl", _j({"id": "a", "n": 2, "c": 1},
                                             {"id": "a", "n": 2, "c": 1})),),
          message="duplicate prompt id"),
        C("compare", "ids differing only in invalid UTF-8", ("compare", "--base", "b5.jsonl",
                                                              "--rl", "r5.jsonl"),
          files=(("b5.jsonl", b'{"id": "p5\xff\xfe", "n": 4, "c": 1}\n'),
                 ("r5.jsonl", b'{"id": "p5\xff\xfd", "n": 4, "c": 3}\n')),
          message="not valid UTF-8"),
        C("compare", "sample_idx {0,1,1,4,5,5,6,6,8,9}",
          ("compare", "--base", "dup.jsonl", "--base-model", "m", "--rl", "dup.jsonl",
           "--rl-model", "r"), files=(("dup.jsonl", DUP_IDX),), message="more than once"),
        C("compare", "different prompt sets", ("compare", "--base", "b.jsonl", "--rl",
                                               "rl.jsonl"), ("counts",),
          files=(("b.jsonl", _j({"id": "zz", "n": 4, "c": 1})),), message="zz"),
        C("compare", "count 1e30", ("compare", "--base", "b.jsonl", "--rl", "rl.jsonl"),
          ("counts",), files=(("b.jsonl", b'{"id": "a", "n": 1e30, "c": 1}\n'),),
          message="larger than the largest accepted"),
        C("compare", "unknown --format", (*COMPARE, "--format", "nope"), ("counts",),
          message="invalid choice: 'nope'"),
        C("compare", "--label of a file that is not an input", (*COMPARE, "--label", "x=y"),
          ("counts",), message="not one of the inputs"),
        C("compare", "--ks 1-10^12", (*COMPARE, "--ks", "1-1000000000000"), ("counts",),
          message="at most"),
        C("compare", "--bootstrap 10^9", (*COMPARE, "--bootstrap", "1000000000"), ("counts",),
          message="--bootstrap"),
        C("compare", "--seed -1", (*COMPARE, "--seed", "-1"), ("counts",), message="--seed"),
        C("compare", "--alpha 2", (*COMPARE, "--alpha", "2"), ("counts",), message="alpha"),
        C("compare", "--alpha nan", (*COMPARE, "--alpha", "nan"), ("counts",), message="alpha"),
        C("compare", "--K-se off the grid", (*COMPARE, "--K-se", "7"), ("counts",),
          message="--K-se 7"),
        C("compare", "--rl-run missing", (*COMPARE, "--rl-run", "nope.jsonl"), ("counts",),
          message="not found"),
        C("compare", "--verifier-error 2,0", (*COMPARE, "--verifier-error", "2,0"), ("counts",),
          message="verifier"),
        C("compare", "--cluster-by a field the inputs lack", (*COMPARE, "--cluster-by", "zz"),
          ("counts",), message="zz"),
        C("compare", "--extrapolate 0", (*COMPARE, "--extrapolate", "0"), ("counts",),
          message="extrapolate"),
        C("compare", "2 GB counts without a newline", ("compare", "--base", "big.jsonl", "--rl",
                                                       "rl.jsonl"),
          ("counts", "nonewline:big.jsonl"), message="line is longer than", heavy=True),
        C("compare", "largest grid: 100 prompts x 100,000 budgets",
          ("compare", "--base", "grid_b.jsonl", "--rl", "grid_r.jsonl", "--ks", "1-100000",
           "--bootstrap", "20"), ("grid",), expect="ok", heavy=True, timeout=900),
        C("compare", "largest grid, random counts: 100 prompts x 100,000 budgets",
          ("compare", "--base", "wide_b.jsonl", "--rl", "wide_r.jsonl", "--ks", "1-100000",
           "--bootstrap", "20"), ("wide",), expect="ok", heavy=True, timeout=600,
          waits_for="the band on many live budgets (statistics): core/compare.simultaneous_band "
                    "builds a budgets x budgets Gram matrix for eigh (36 s at 3,000 budgets; "
                    "> 600 s and 3.7 GB at 100,000); an M x M form would be 100 x 100 here"),
        C("compare", "more than a million prompts", ("compare", "--base", "over_b.jsonl",
                                                     "--rl", "rl.jsonl"), ("counts", "over"),
          message="pairs in one input", heavy=True, timeout=300),
        # ---------------------------------------------------------------- report
        C("report", "valid counts", REPORT, ("counts",), expect="ok"),
        C("report", "no inputs", ("report", "--out", "r.html"), message="missing"),
        C("report", "--from a missing file", ("report", "--from", "nope.json", "--out",
                                              "r.html"), message="not found"),
        C("report", "--from a file that is not JSON", ("report", "--from", "x.json", "--out",
                                                       "r.html"),
          files=(("x.json", b"not json"),), message="not valid JSON"),
        C("report", "--from a result of another kind", ("report", "--from", "x.json", "--out",
                                                        "r.html"),
          files=(("x.json", json.dumps({"schema_version": "1.0", "kind": "price"}).encode()),),
          message="expected a 'report' result"),
        C("report", "two inputs with the same model label", ("report", "base.jsonl", "b2/base.jsonl",
                                                             "--no-figures", "--out", "r.html"),
          ("counts",), files=(("b2/base.jsonl", _j({"id": "a", "n": 4, "c": 1})),),
          message="labels must be unique"),
        C("report", "--k 0", (*REPORT, "--k", "0"), ("counts",), message="k"),
        C("report", "--zeta 2", (*REPORT, "--zeta", "2"), ("counts",), message="zeta"),
        C("report", "--top -1", (*REPORT, "--top", "-1"), ("counts",), message="top"),
        C("report", "--out without .html", ("report", "base.jsonl", "rl.jsonl", "--no-figures",
                                            "--out", "r.txt"), ("counts",), expect="refused",
          message="html"),
        C("report", "--learning missing", (*REPORT, "--learning", "nope.json"), ("counts",),
          message="not found"),
        C("report", "count-table CSV not UTF-8", ("report", "t.csv", "--no-figures", "--out",
                                                  "r.html"),
          files=(("t.csv", b"prompt_id,model,n,c\np\xff,m,4,1\n"),), message="not valid UTF-8"),
        C("report", "2 GB CSV without a newline", ("report", "big.csv", "--no-figures", "--out",
                                                   "r.html"), ("nonewline:big.csv",),
          message="line is longer than", heavy=True),
        C("report", "--from a 2 GB file", ("report", "--from", "big.json", "--out", "r.html"),
          ("nonewline:big.json",), message="larger than", heavy=True),
        C("report", "200,000 completions of 4 KB (JSONL, 800 MB)",
          ("report", "long.jsonl", "--no-figures", "--bootstrap", "200", "--out", "r.html"),
          ("longtext",), expect="ok", heavy=True, timeout=1800),
        # ---------------------------------------------------------------- price
        C("price", "valid rates", ("price", "rates.csv", "--ks", "1-8"), ("rates",), expect="ok"),
        C("price", "the published anchor curve", ("price",), stdin=(
            b"k,base,rl\n1,.102,.251\n4,.224,.368\n16,.392,.496\n64,.578,.608\n256,.691,.683\n"),
          expect="ok"),
        C("price", "decreasing curve 0.5, 0.3, 0.1", ("price", "dec.csv"),
          files=(("dec.csv", b"k,base,rl\n1,0.5,0.6\n2,0.3,0.4\n4,0.1,0.05\n"),),
          message="never decreases"),
        C("price", "curve in percent", ("price", "p.csv"),
          files=(("p.csv", b"k,base,rl\n1,10,20\n4,30,40\n"),), message="not percent"),
        C("price", "budgets out of order", ("price", "p.csv"),
          files=(("p.csv", b"k,base,rl\n4,0.1,0.2\n1,0.2,0.3\n"),), message="increase"),
        C("price", "four columns", ("price", "p.csv"), files=(("p.csv", b"1,2,3,4\n"),),
          message="expected 2 columns"),
        C("price", "rate above 1", ("price", "p.csv"), files=(("p.csv", b"0.5,1.5\n"),),
          message="[0, 1]"),
        C("price", "empty stdin", ("price",), stdin=b"", message="no data rows"),
        C("price", "not UTF-8", ("price", "p.csv"), files=(("p.csv", b"0.5,0.2\n\xff,0.1\n"),),
          message="not valid UTF-8"),
        C("price", "--ks on a curve", ("price", "dec.csv", "--ks", "1-4"),
          files=(("dec.csv", b"k,base,rl\n1,0.1,0.2\n2,0.3,0.4\n"),),
          message="--ks does not apply"),
        C("price", "--round 99", ("price", "rates.csv", "--round", "99"), ("rates",),
          message="round"),
        C("price", "2 GB CSV without a newline", ("price", "big.csv"), ("nonewline:big.csv",),
          message="line is longer than", heavy=True),
        # ---------------------------------------------------------------- plan
        C("plan", "valid pilot", PLAN, ("counts",), expect="ok"),
        C("plan", "no claim", ("plan", "--base", "base.jsonl", "--rl", "rl.jsonl"), ("counts",),
          message="gain"),
        C("plan", "--power 2", (*PLAN, "--power", "2"), ("counts",), message="power"),
        C("plan", "--budgets x", (*PLAN[:-2], "--budgets", "x"), ("counts",),
          message="--budgets"),
        C("plan", "--budgets 0", (*PLAN[:-2], "--budgets", "0"), ("counts",), message="budget"),
        C("plan", "--alpha 0", (*PLAN, "--alpha", "0"), ("counts",), message="alpha"),
        C("plan", "--loss-at 10^9", ("plan", "--base", "base.jsonl", "--rl", "rl.jsonl",
                                     "--loss-at", "1000000000"), ("counts",),
          message="loss", heavy=True, guarded=True),  # before plan's bounds: 16.3 GB
        C("plan", "--prompts 10^9", (*PLAN, "--prompts", "1000000000"), ("counts",),
          message="prompts", heavy=True, guarded=True),  # before plan's bounds: 7.7 GB
        C("plan", "--sims 10^9", (*PLAN[:-4], "--sims", "1000000000"), ("counts",),
          message="sims", heavy=True, guarded=True, timeout=60),  # before: > 120 s
        C("plan", "a pilot of 10^6 prompts", ("plan", "--base", "mb.jsonl", "--rl", "mr.jsonl",
                                              "--gain-at", "1"), ("million",),
          expect="error", message="prompts",
          waits_for="plan's size bounds (statistics helper): 10^6 prompts ran > 600 s, "
                    ">= 6.8 GB", heavy=True, guarded=True, timeout=120),
        C("plan", "2 GB pilot without a newline", ("plan", "--base", "big.jsonl", "--rl",
                                                   "rl.jsonl", "--gain-at", "1"),
          ("counts", "nonewline:big.jsonl"), message="line is longer than", heavy=True),
        # ---------------------------------------------------------------- verify
        C("verify", "valid math", VERIFY, ("raw",), expect="ok"),
        C("verify", "gold missing", ("verify", "raw.jsonl", "--gold", "nope.jsonl"), ("raw",),
          message="not found"),
        C("verify", "gold is a folder", ("verify", "raw.jsonl", "--gold", "d", "--out",
                                         "v.parquet"), ("raw", "dir:d"),
          message="is a directory"),
        C("verify", "gold with a duplicate id", ("verify", "raw.jsonl", "--gold", "g2.jsonl",
                                                 "--out", "v.parquet"), ("raw",),
          files=(("g2.jsonl", _j({"prompt_id": "a", "answer": "4"},
                                 {"prompt_id": "a", "answer": "5"})),),
          message="duplicate prompt id"),
        C("verify", "prompt without gold", ("verify", "raw.jsonl", "--gold", "g2.jsonl", "--out",
                                            "v.parquet", "--backend", "canonical"), ("raw",),
          files=(("g2.jsonl", _j({"prompt_id": "zz", "answer": "4"})),),
          message="no gold entry"),
        C("verify", "table without text", ("verify", "base.jsonl", "--gold", "gold.jsonl",
                                           "--out", "v.parquet"), ("raw", "counts"),
          message="completion text"),
        C("verify", "--extract bogus", (*VERIFY, "--extract", "bogus"), ("raw",),
          message="--extract"),
        C("verify", "--backend bogus", (*VERIFY[:4], "--backend", "bogus", "--out", "v.parquet"),
          ("raw",), message="--backend"),
        C("verify", "--timeout 0", (*VERIFY, "--timeout", "0"), ("raw",), message="timeout"),
        C("verify", "--timeout inf", (*VERIFY, "--timeout", "inf"), ("raw",), message="timeout"),
        C("verify", "--workers 0", (*VERIFY[:-4], "--workers", "0"), ("raw",),
          message="workers"),
        C("verify", "--memory-mb 0", (*VERIFY, "--memory-mb", "0"), ("raw",), message="memory"),
        C("verify", "--memory-mb -5", (*VERIFY, "--memory-mb", "-5"), ("raw",),
          message="memory"),
        C("verify", "--workers 100000", (*VERIFY[:-4], "--workers", "100000", "--out",
                                         "v.parquet"), ("raw",), message="workers",
          heavy=True, guarded=True, timeout=60),  # before the bound: forked until the OOM killer
        C("verify", "20,000 completions into one Parquet file",
          ("verify", "raw20k.jsonl", "--gold", "gold20k.jsonl", "--backend", "canonical",
           "--out", "v.parquet"), ("raw20k",), expect="ok", heavy=True, timeout=1800),
        C("verify", "gold CSV of 2 GB without a newline", ("verify", "raw.jsonl", "--gold",
                                                          "big.csv", "--out", "v.parquet"),
          ("raw", "nonewline:big.csv"), message="line is longer than", heavy=True),
        C("verify", "rollouts of 2 GB without a newline", ("verify", "big.jsonl", "--gold",
                                                          "gold.jsonl", "--out", "v.parquet"),
          ("raw", "nonewline:big.jsonl"), message="line is longer than", heavy=True),
        # ---------------------------------------------------------------- rft-select
        C("rft-select", "valid table", RFT, ("rft",), expect="ok"),
        C("rft-select", "no row survives the filters (answer 42)",
          ("rft-select", "r4.jsonl", "--by", "random", "--out", "sel.jsonl"),
          files=(("r4.jsonl", ANSWER_42),), expect="ok"),
        C("rft-select", "--out o.csv", ("rft-select", "rft.jsonl", "--by", "random", "--out",
                                        "o.csv"), ("rft",), expect="refused",
          message=".parquet, .jsonl"),
        C("rft-select", "--budget 0", (*RFT, "--budget", "0"), ("rft",), message="budget"),
        C("rft-select", "--neg-frac 2", (*RFT, "--neg-frac", "2"), ("rft",), message="neg"),
        C("rft-select", "--by rbf without rbf_mean", ("rft-select", "rft.jsonl", "--by", "rbf",
                                                      "--out", "sel.jsonl"), ("rft",),
          message="rbf_mean"),
        C("rft-select", "table without text", ("rft-select", "roll.jsonl", "--by", "random"),
          ("rollouts_notext",), message="text"),
        C("rft-select", "2 GB table without a newline", ("rft-select", "big.jsonl", "--by",
                                                         "random", "--out", "sel.jsonl"),
          ("nonewline:big.jsonl",), message="line is longer than", heavy=True),
        C("rft-select", "200,000 completions of 4 KB (JSONL, 800 MB)",
          ("rft-select", "long.jsonl", "--by", "random", "--budget", "100", "--out",
           "sel.parquet"), ("longtext",), expect="ok", heavy=True, timeout=1800),
        C("rft-select", "largest table: 2,000,000 rows", ("rft-select", "huge.parquet", "--by",
                                                          "random", "--budget", "100", "--out",
                                                          "sel.parquet"),
          ("huge_rft",), expect="ok", heavy=True, timeout=900),
        # ---------------------------------------------------------------- sample
        C("sample", "unreachable --base-url", (*SAMPLE, "--out", "s"), ("prompts",),
          message="127.0.0.1:1/v1", timeout=120, heavy=True),
        C("sample", "--out is the prompt file", (*SAMPLE, "--out", "prompts.jsonl"),
          ("prompts",), expect="refused", message="input"),
        C("sample", "prompts missing", ("sample", "--model", "m", "--prompts", "nope.jsonl",
                                        "--n", "1", "--out", "s"), message="not found"),
        C("sample", "prompts without an id", (*SAMPLE[:-4], "--prompts", "p2.jsonl", "--n", "1",
                                              "--out", "s"),
          files=(("p2.jsonl", _j({"text": "1+1?"})),), message="no prompt id"),
        C("sample", "duplicate prompt ids", (*SAMPLE[:-4], "--prompts", "p2.jsonl", "--n", "1",
                                             "--out", "s"),
          files=(("p2.jsonl", _j({"id": "a", "prompt": "x"}, {"id": "a", "prompt": "y"})),),
          message="duplicate prompt id"),
        C("sample", "--n 0", (*SAMPLE[:-1], "0", "--out", "s"), ("prompts",), message="n"),
        C("sample", "--n 10^12", (*SAMPLE[:-1], "1000000000000", "--out", "s"), ("prompts",),
          message="n", heavy=True, guarded=True, timeout=60),  # before the cap: > 4.2 GB in 30 s
        C("sample", "--max-new-tokens 10^9", (*SAMPLE, "--max-new-tokens", "1000000000",
                                              "--out", "s"), ("prompts",), message="tokens",
          heavy=True, guarded=True, timeout=60),  # before the cap: > 4.2 GB in 30 s
        C("sample", "--shard-size 0", (*SAMPLE, "--shard-size", "0", "--out", "s"),
          ("prompts",), message="shard"),
        C("sample", "model folder missing", ("sample", "--model", "nope", "--prompts",
                                             "prompts.jsonl", "--n", "1", "--out", "s"),
          ("prompts",), message="nope", heavy=True),
        C("sample", "prompts CSV of 2 GB without a newline", (*SAMPLE[:-4], "--prompts",
                                                             "big.csv", "--n", "1", "--out",
                                                             "s"),
          ("nonewline:big.csv",), message="line is longer than", heavy=True),
        # ---------------------------------------------------------------- score
        C("score", "rollouts missing", ("score", "nope.jsonl", "--model", "m"),
          message="not found"),
        C("score", "--backend openai", ("score", "roll.jsonl", "--model", "m", "--backend",
                                        "openai"), ("rollouts",), message="transformers"),
        C("score", "model folder missing", ("score", "roll.jsonl", "--model", "nope", "--out",
                                            "sc"), ("rollouts",), message="nope", heavy=True),
        # ---------------------------------------------------------------- theory
        C("theory", "diagnose a valid matrix", ("theory", "diagnose", "m.csv"), ("matrix",),
          expect="ok"),
        C("theory", "frontier of a valid matrix", FRONTIER, ("matrix",), expect="ok"),
        C("theory", "frontier --out f.txt", ("theory", "frontier", "m.csv", "--out", "f.txt"),
          ("matrix",), expect="refused", message=".png, .pdf, .svg"),
        C("theory", "frontier --taus 1", (*FRONTIER, "--taus", "1"), ("matrix",),
          message="--taus"),
        C("theory", "frontier --kmax 0", (*FRONTIER, "--kmax", "0"), ("matrix",),
          message="--kmax"),
        C("theory", "diagnose duplicate prompt columns", ("theory", "diagnose", "d.csv"),
          files=(("d.csv", b"strategy,pi0,p1,p1\nA,0.5,0.9,0.1\nB,0.5,0.2,0.8\n"),),
          message="names columns 3 and 4"),
        C("theory", "diagnose duplicate strategy names", ("theory", "diagnose", "d.csv"),
          files=(("d.csv", b"strategy,pi0,p1,p2\nA,0.5,0.9,0.1\nA,0.5,0.2,0.8\n"),),
          message="appears twice"),
        C("theory", "pi0 not summing to 1", ("theory", "diagnose", "d.csv"),
          files=(("d.csv", b"strategy,pi0,p1\nA,0.5,0.9\nB,0.2,0.1\n"),),
          message="sum to 1"),
        C("theory", "fitness out of [0, 1]", ("theory", "diagnose", "d.csv"),
          files=(("d.csv", b"strategy,pi0,p1\nA,1,1.5\n"),), message="[0, 1]"),
        C("theory", "matrix not UTF-8", ("theory", "diagnose", "d.csv"),
          files=(("d.csv", b"strategy,pi0,p\xff\nA,1,0.5\n"),), message="not valid UTF-8"),
        C("theory", "2 GB matrix without a newline", ("theory", "diagnose", "big.csv"),
          ("nonewline:big.csv",), message="line is longer than", heavy=True),
        C("theory", "matrix of 5,001 prompts", ("theory", "diagnose", "wide.csv"),
          files=(("wide.csv", ("strategy,pi0," + ",".join(f"x{j}" for j in range(5001))
                               + "\nA,1," + ",".join("0.5" for _ in range(5001))
                               + "\n").encode()),), message="at most 5,000 prompts"),
        C("theory", "diagnose 20 strategies x 2,500 prompts", ("theory", "diagnose", "m2.csv"),
          ("bigmatrix",), expect="ok", heavy=True, timeout=900),
        C("theory", "verify --quick", ("theory", "verify", "--quick", "--json", "tv.json"),
          expect="ok", heavy=True, timeout=600),
        # ---------------------------------------------------------------- lab
        C("lab", "--out is a file", ("lab", "run", "--out", "afile"), ("regular:afile",),
          expect="refused", message="not a directory"),
        C("lab", "--experiment bogus", ("lab", "run", "--out", "L", "--experiment", "bogus"),
          message="invalid choice"),
        C("lab", "--group-size 0", ("lab", "run", "--out", "L", "--group-size", "0"),
          message="group", heavy=True),
        C("lab", "--base-from a missing folder", ("lab", "run", "--out", "L", "--base-from",
                                                  "nope"), message="nope", heavy=True),
        # ---------------------------------------------------------------- watch
        C("watch", "a checkpoint folder that is not there",
          ("watch", "nope", "--base", "b.jsonl", "--prompts", "p.jsonl", "--once"),
          files=WATCH_FILES, message="not a folder of checkpoints"),
        C("watch", "--n 0", (*WATCH, "--n", "0"), files=WATCH_FILES, message="n must be"),
        C("watch", "--rule bogus", (*WATCH, "--rule", "bogus"), files=WATCH_FILES,
          message="cannot read the rule"),
        C("watch", "--alpha 2", (*WATCH, "--alpha", "2"), files=WATCH_FILES, message="alpha"),
        C("watch", "--out is the prompts file", (*WATCH, "--out", "p.jsonl"),
          files=WATCH_FILES, expect="refused", message="p.jsonl"),
        C("watch", "--out is a FIFO", (*WATCH, "--out", "f"), ("fifo:f",), files=WATCH_FILES,
          expect="refused", message="not a directory"),
        C("watch", "prompts missing", ("watch", "run", "--base", "b.jsonl", "--prompts",
                                       "nothere.jsonl", "--once"),
          files=WATCH_FILES, message="file not found"),
        # ---------------------------------------------------------------- serve
        C("serve", "--port -1", ("serve", "--port", "-1"), message="port"),
        C("serve", "--port 70000", ("serve", "--port", "70000"), message="port"),
        C("serve", "--max-upload-mb 0", ("serve", "--max-upload-mb", "0"), message="upload"),
        C("serve", "--workers 0", ("serve", "--workers", "0"), message="workers"),
        C("serve", "--max-rows 0", ("serve", "--max-rows", "0"), message="--max-rows"),
        C("serve", "--bootstrap 1", ("serve", "--bootstrap", "1"), message="bootstrap"),
        C("serve", "--host that cannot be bound", ("serve", "--host", "::::", "--port", "0"),
          message="::::", heavy=True, timeout=60,
          waits_for="a bind failure of serve as an input error (serve/app): gradio's OSError "
                    "'Cannot find empty port'"),
    ]
    return cases


def build_cases() -> list[Case]:
    """Every case of the catalogue (ids unique)."""
    cases = _output_cases() + _input_cases()
    ids = [c.id for c in cases]
    dup = {i for i in ids if ids.count(i) > 1}
    assert not dup, dup
    return cases


CASES = build_cases()
VERBS = sorted({c.verb for c in CASES})
