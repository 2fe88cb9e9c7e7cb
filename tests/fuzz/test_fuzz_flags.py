"""Every numeric flag of every verb (except verify) given a hostile value: exit 0 or 2 only."""

from __future__ import annotations

import pytest

from tests.fuzz import harness as H

BAD = ["-1", "0", "1e30", "nan", "inf", "99999999999999999999", "", "\u0663", "0.5", "-0"]

FLAGS = {
    "count-jsonl": ["--ks", "--bootstrap", "--alpha", "--seed", "--K-se", "--verl-step"],
    "count-csv": ["--k", "--ks", "--zeta", "--top", "--quality-sample", "--alpha", "--seed"],
    "rft-select": ["--budget", "--neg-frac", "--max-redundancy", "--seed"],
    "price": ["--ks", "--round"],
    "theory-matrix": [],
}


def _argv(case, flag, value):
    argv = list(case.argv)
    if flag in argv:
        i = argv.index(flag)
        argv[i + 1] = value
    else:
        argv += [flag, value]
    return argv


@pytest.mark.parametrize("seed, flag", [(s, f) for s, fs in FLAGS.items() for f in fs])
def test_hostile_flag_values(tmp_path, seed, flag):
    case = H.build(tmp_path, seed)
    for value in BAD:
        code, err = H.run_cli(tmp_path, _argv(case, flag, value))
        H.check_outcome(code, err, f"{seed} {flag} {value!r}")


@pytest.mark.parametrize("flag", ["--taus", "--kmax"])
def test_hostile_theory_frontier_flags(tmp_path, flag):
    case = H.build(tmp_path, "theory-matrix")
    for value in BAD:
        code, err = H.run_cli(tmp_path, ["theory", "frontier", "m.csv", "--out", "f.svg",
                                         flag, value])
        H.check_outcome(code, err, f"frontier {flag} {value!r}")
