"""Property-based fuzzing of every reader, adapter and CLI verb (except ``verify``).

Each example takes a small valid input of one format (``harness.SEEDS``), changes
one thing in it (one JSON field, one CSV cell, one Parquet column's type, or one
byte: flipped, inserted, deleted, or the file cut there) and runs the command
that reads it. The only accepted outcomes are success (exit 0) or the tool's own
input error (exit 2, a located message, no traceback); any other exception or exit
code fails the test with the mutation that caused it.

The default run draws a few examples per format and mutation kind; the ``slow``
run draws many more (the figures in docs/reliability.md come from it).
"""

from __future__ import annotations

import collections
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz import harness as H

FAST = settings(max_examples=3, deadline=None, derandomize=True,
                suppress_health_check=list(HealthCheck))
SLOW = settings(max_examples=100, deadline=None, derandomize=True,
                suppress_health_check=list(HealthCheck))


#: Examples run and outcomes, by (seed, mode, outcome); RLVR_FUZZ_COUNTS=FILE appends them.
COUNTS: collections.Counter = collections.Counter()


def _log_counts(seed: str, mode: str) -> None:
    ok, err = COUNTS[(seed, mode, 0)], COUNTS[(seed, mode, 2)]
    assert ok + err > 0
    if os.environ.get("RLVR_FUZZ_COUNTS"):
        with open(os.environ["RLVR_FUZZ_COUNTS"], "a") as fh:
            fh.write(f"{seed}\t{mode}\t{ok}\t{err}\n")


def _one(seed: str, data, mode: str) -> None:
    root = Path(tempfile.mkdtemp(prefix="rlvr-fuzz-"))
    try:
        case = H.build(root, seed)
        f = data.draw(st.sampled_from(case.files), label="file")
        path, kind = root / f, case.kind[f]
        if mode == "field":
            if kind == "jsonl":
                what = H.mutate_jsonl_field(path, data.draw(st.integers(0, 99), label="line"),
                                            data.draw(st.integers(0, 999), label="field"),
                                            data.draw(st.sampled_from(H.BAD_VALUES),
                                                      label="value"))
            elif kind == "csv":
                what = H.mutate_csv_cell(path, data.draw(st.integers(0, 99), label="row"),
                                         data.draw(st.integers(0, 9), label="col"),
                                         data.draw(st.sampled_from(H.BAD_CELLS), label="cell"))
            else:
                what = H.mutate_parquet_column(path, data.draw(st.integers(0, 99), label="col"),
                                               data.draw(st.integers(0, 99), label="type"))
        else:
            what = H.mutate_byte(path, data.draw(st.integers(0, 1 << 20), label="pos"),
                                 data.draw(st.sampled_from(["flip", "insert", "delete",
                                                            "truncate"]), label="op"),
                                 data.draw(st.integers(0, 255), label="byte"))
        code, err = H.run_cli(root, case.argv)
        H.check_outcome(code, err, f"{seed}: {what}: {' '.join(case.argv)}")
        COUNTS[(seed, mode, code)] += 1
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.mark.parametrize("mode", ["field", "byte"])
@pytest.mark.parametrize("seed", H.SEEDS)
def test_one_mutation_gives_success_or_input_error(seed, mode):
    @FAST
    @given(st.data())
    def run(data):
        _one(seed, data, mode)

    run()
    _log_counts(seed, mode)


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["field", "byte"])
@pytest.mark.parametrize("seed", H.SEEDS)
def test_one_mutation_gives_success_or_input_error_many(seed, mode):
    @SLOW
    @given(st.data())
    def run(data):
        _one(seed, data, mode)

    run()
    _log_counts(seed, mode)


@pytest.mark.parametrize("seed", H.SEEDS)
def test_every_seed_succeeds_unmutated(seed, tmp_path):
    """The seeds are valid: a failure of a mutation is the mutation's, not the seed's."""
    case = H.build(tmp_path, seed)
    code, err = H.run_cli(tmp_path, case.argv)
    assert code == 0, err
