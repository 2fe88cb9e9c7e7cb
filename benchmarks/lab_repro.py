"""Compare two lab run folders: what is identical, and by how much the rest differs.

    python benchmarks/lab_repro.py A B [--json out.json]

Reads two finished narrowing runs (``rlvr-boundary lab run --preset full``) and
prints, in the order a run makes them:

- the library versions and torch threads of each run;
- checkpoint weights: sha256 equal, or the largest absolute difference of any
  weight;
- rollout shards: per model, the share of samples whose text is identical
  (the same (prompt, sample index) in both), and the pass@1 of each;
- the audit: pass@k of every model at every budget (largest difference), and
  the headline (pass@1, pass@K, k*, price, the supported gain and loss budgets)
  of each run.

docs/lab.md quotes its output for two fresh runs on one machine and for a run
with another number of torch threads (another floating-point summation order,
the closest this machine comes to another CPU or library build).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def weights(a: Path, b: Path) -> dict:
    """Per checkpoint: equal hashes, or the largest absolute weight difference."""
    from safetensors.numpy import load_file

    out = {}
    for fa in sorted([a / "base" / "model.safetensors", *(a / "rl").glob("step-*/model.safetensors")]):
        rel = fa.relative_to(a)
        fb = b / rel
        if not fb.exists():
            out[str(rel.parent)] = {"missing": True}
            continue
        if _sha(fa) == _sha(fb):
            out[str(rel.parent)] = {"identical": True, "max_abs_diff": 0.0}
            continue
        ta, tb = load_file(str(fa)), load_file(str(fb))
        diff = max(float(abs(ta[k].astype("float64") - tb[k].astype("float64")).max())
                   for k in ta)
        out[str(rel.parent)] = {"identical": False, "max_abs_diff": diff}
    return out


def rollouts(a: Path, b: Path) -> dict:
    """Per model: share of identical texts and the pass@1 of each run."""
    import pyarrow.parquet as pq

    out = {}
    for fa in sorted((a / "rollouts").glob("part-*.parquet")):
        fb = b / "rollouts" / fa.name
        ta = pq.read_table(fa, columns=["prompt_id", "sample_idx", "text", "correct"]).to_pydict()
        tb = pq.read_table(fb, columns=["prompt_id", "sample_idx", "text", "correct"]).to_pydict()
        ka = {(p, i): (t, c) for p, i, t, c in zip(*ta.values())}
        kb = {(p, i): (t, c) for p, i, t, c in zip(*tb.values())}
        same = sum(ka[k][0] == kb.get(k, (None,))[0] for k in ka)
        model = fa.name[len("part-"):-len(".parquet")]
        out[model] = {"file_identical": _sha(fa) == _sha(fb),
                      "texts_identical": same / len(ka),
                      "pass_at_1": [sum(c for _, c in ka.values()) / len(ka),
                                    sum(c for _, c in kb.values()) / len(kb)]}
    return out


def audit(a: Path, b: Path) -> dict:
    """The largest pass@k difference of any model and budget, and each run's headline."""
    ra = json.loads((a / "report.json").read_text(encoding="utf-8"))
    rb = json.loads((b / "report.json").read_text(encoding="utf-8"))
    diff = max(abs(x - y) for m in ra["pass_at_k"]
               for x, y in zip(ra["pass_at_k"][m], rb["pass_at_k"][m]))
    heads = []
    for f in (a, b):
        d = json.loads((f / "lab_result.json").read_text(encoding="utf-8"))
        heads.append({k: d.get(k) for k in ("pass_at_1", "pass_at_K", "k_star", "price",
                                            "gain_budgets", "loss_budgets")})
    return {"pass_at_k_max_abs_diff": diff, "headline": heads}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--json", help="write the comparison here")
    ns = ap.parse_args(argv)
    a, b = Path(ns.a), Path(ns.b)
    res = {"runs": [str(a), str(b)],
           "versions": [json.loads((f / "versions.json").read_text()) for f in (a, b)],
           "threads": [json.loads((f / "lab_config.json").read_text())["threads"] for f in (a, b)],
           "weights": weights(a, b), "rollouts": rollouts(a, b), "audit": audit(a, b)}
    print(f"threads: {res['threads'][0]} / {res['threads'][1]}")
    for k, v in res["weights"].items():
        print(f"weights {k}: " + ("identical" if v.get("identical") else
                                 f"max |diff| {v.get('max_abs_diff', float('nan')):.3g}"))
    for m, v in res["rollouts"].items():
        print(f"rollouts {m}: file identical {v['file_identical']}, texts identical "
              f"{v['texts_identical']:.1%}, pass@1 {v['pass_at_1'][0]:.4f} / "
              f"{v['pass_at_1'][1]:.4f}")
    print(f"audit: largest pass@k difference {res['audit']['pass_at_k_max_abs_diff']:.4f}")
    for f, h in zip((a, b), res["audit"]["headline"]):
        print(f"  {f}: {json.dumps(h)}")
    if ns.json:
        Path(ns.json).write_text(json.dumps(res, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
