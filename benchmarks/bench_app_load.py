"""Load test of the browser app: concurrent sessions, each uploading and analysing its own file.

What is measured: ``rlvr-boundary serve`` is started on 127.0.0.1 (a free port,
``--workers 2``); N sessions (default 20; each its own ``gradio_client.Client``,
i.e. its own browser session) start together behind a barrier and each uploads
two count files and runs the analysis through the app's ``/upload`` endpoint,
the same handler as the page's Upload tab. The whole wave runs twice.

Each session's input is a random subset of the real DeepScaleR counts (by default
all 1,060 prompts x 128 samples, each session in its own order: DeepScaleR-sized, so
the numbers are the same and the label tells the sessions apart; fewer prompts give
every session different numbers; ``--prompts 10600`` repeats the prompts under new ids
for a 10x input) with its own RL model label (``rl-session-<i>``). A session is
answered correctly when its page shows the k*, price and budget of the price that
``rlvr_boundary.analysis.pairwise.compare_aligned`` computes in this process for
its own subset, and it is isolated when its page and downloaded JSON name its
own label and no other session's.

Memory: the resident set of the server and all its worker processes (psutil),
sampled every 0.1 s; reported as the baseline after start-up, the peak of each
wave and after both. Bounded means the second wave's peak does not grow past
the first's by more than 20%.

No peer: no other tool serves this diagnostic; the figures are absolute
(latency per session, wall time of the wave, memory) on the machine printed.

Run::

    python benchmarks/bench_app_load.py              # 20 sessions, two waves
    python benchmarks/bench_app_load.py --sessions 5
    python benchmarks/bench_app_load.py --sessions 8 --prompts 10600
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))


def make_inputs(folder: Path, sessions: int, prompts: int = 1060) -> list[dict]:
    """One (base file, RL file, expected numbers) per session, from the DeepScaleR counts.

    Up to 1,060 prompts: a random subset of the real prompts (all of them at 1,060, in a
    session's own order). More: the real prompts repeated under new ids (``<id>#r<j>``)
    until there are ``prompts`` of them, then a random subset, so 10,600 is the
    DeepScaleR set ten times over.
    """
    import numpy as np

    from rlvr_boundary.analysis.pairwise import compare_aligned
    from rlvr_boundary.pipelines.compare import CompareOptions
    from rlvr_boundary.examples import example_files
    from rlvr_boundary.analysis.aligned import align
    from rlvr_boundary.io.formats import load_model_counts

    ex = example_files("deepscaler32k")
    base = load_model_counts(ex["base"], label="base")
    rl = load_model_counts(ex["rl"], label="rl")
    a = align([base, rl])
    if prompts > a.n.shape[1]:
        reps = -(-prompts // a.n.shape[1])
        ids = np.array([f"{p}#r{j}" for j in range(reps) for p in a.prompt_ids])
        a = type(a)(list(a.models), ids, np.tile(a.n, reps), np.tile(a.c, reps))
    out = []
    for i in range(sessions):
        rng = np.random.default_rng(1000 + i)
        idx = np.sort(rng.choice(a.n.shape[1], size=prompts, replace=False))
        label = f"rl-session-{i:02d}"
        d = folder / f"s{i:02d}"
        d.mkdir(parents=True, exist_ok=True)
        files = []
        for m, name in ((0, "base"), (1, label)):
            p = d / f"{name}.jsonl"
            p.write_text("".join(json.dumps({"id": str(a.prompt_ids[j]), "c": int(a.c[m, j]),
                                             "n": int(a.n[m, j])}) + "\n" for j in idx))
            files.append(p)
        sub = type(a)(["base", label], a.prompt_ids[idx], a.n[:, idx], a.c[:, idx])
        res = compare_aligned(sub, "base", label, CompareOptions(bootstrap=2))
        out.append({"label": label, "files": files, "k_star": res["k_star"],
                    "price": res["price"], "price_k": res["price_k"]})
    return out


def _rss_tree(pid: int) -> int:
    import psutil

    try:
        proc = psutil.Process(pid)
        procs = [proc, *proc.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0
    total = 0
    for p in procs:
        try:
            total += p.memory_info().rss
        except psutil.NoSuchProcess:
            pass
    return total


def _field(html: str, name: str) -> str | None:
    import re

    m = re.search(rf'data-field="{name}">([^<]*)<', html)
    return m.group(1) if m else None


def one_wave(url: str, inputs: list[dict], timeout: float) -> list[dict]:
    """All sessions at once; returns one record per session."""
    from gradio_client import Client, handle_file

    barrier = threading.Barrier(len(inputs))
    records: list[dict | None] = [None] * len(inputs)
    labels = [x["label"] for x in inputs]

    def session(i: int) -> None:
        x = inputs[i]
        rec = {"label": x["label"], "ok": False, "isolated": False, "error": None}
        try:
            client = Client(url, verbose=False, download_files=tempfile.mkdtemp())
            barrier.wait(timeout)
            t0 = time.perf_counter()
            html, files = client.predict([handle_file(str(f)) for f in x["files"]], "auto", "",
                                         "", None, 0.05, 0, api_name="/upload")
            rec["seconds"] = time.perf_counter() - t0
            k_star, price, price_k = (_field(html, "k_star"), _field(html, "price"),
                                      _field(html, "price_k"))
            want = (str(x["k_star"]) if x["k_star"] is not None else "–",
                    f"{x['price'] * 100:.2f}",  # the page prints points
                    str(x["price_k"]) if x["price_k"] is not None else "–")
            rec["got"], rec["want"] = (k_star, price, price_k), want
            rec["ok"] = rec["got"] == want
            paths = [f if isinstance(f, str) else f.get("path") for f in (files or [])]
            doc = json.loads(Path(next(p for p in paths if p.endswith("report.json")))
                             .read_text(encoding="utf-8"))
            others = [lab for lab in labels if lab != x["label"]]
            rec["isolated"] = (x["label"] in html and x["label"] in doc["models"]
                               and not any(o in html or o in doc["models"] for o in others))
        except Exception as exc:  # recorded, reported, counted as a failure
            rec["error"] = f"{type(exc).__name__}: {exc}"
        records[i] = rec

    threads = [threading.Thread(target=session, args=(i,)) for i in range(len(inputs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
    return [r or {"label": "?", "ok": False, "isolated": False, "error": "no answer"}
            for r in records]


def run_load(sessions: int = 20, waves: int = 2, workers: int = 2, bootstrap: int | None = None,
             timeout: float = 900.0, quiet: bool = False, prompts: int = 1060) -> dict:
    """Start a server, run ``waves`` waves of ``sessions`` sessions, stop it; return figures."""
    from tests.app.server import running_server

    say = (lambda *a: None) if quiet else print
    with tempfile.TemporaryDirectory() as tmp:
        inputs = make_inputs(Path(tmp), sessions, prompts)
        extra = ["--workers", str(workers)]
        if bootstrap is not None:  # else the server's own default
            extra += ["--bootstrap", str(bootstrap)]
        with running_server(*extra) as (url, proc, _):
            # The first request, timed apart (the server warms its workers before it gives
            # its URL; older servers started them on this request).
            t0 = time.perf_counter()
            warm = one_wave(url, inputs[:1], timeout)[0]
            first = time.perf_counter() - t0
            say(f"first request: {warm.get('seconds', float('nan')):.1f} s ({first:.1f} s with "
                f"its client's connection), correct: {warm['ok']}")
            base_rss = _rss_tree(proc.pid)
            out = {"sessions": sessions, "prompts": prompts, "workers": workers,
                   "bootstrap": bootstrap or "server default",
                   "first_request_s": warm.get("seconds"), "first_with_client_s": first,
                   "baseline_mb": base_rss / 1e6, "waves": [],
                   "loadavg_before": os.getloadavg()}
            for w in range(waves):
                peak = [0]
                stop = threading.Event()

                def sample():
                    while not stop.is_set():
                        peak[0] = max(peak[0], _rss_tree(proc.pid))
                        stop.wait(0.1)

                sampler = threading.Thread(target=sample, daemon=True)
                sampler.start()
                t0 = time.perf_counter()
                recs = one_wave(url, inputs, timeout)
                wall = time.perf_counter() - t0
                stop.set()
                sampler.join()
                secs = sorted(r["seconds"] for r in recs if "seconds" in r)
                wave = {"wall_s": wall, "correct": sum(r["ok"] for r in recs),
                        "isolated": sum(r["isolated"] for r in recs),
                        "errors": [r["error"] for r in recs if r["error"]],
                        "wrong": [r for r in recs if not r["ok"] and not r["error"]][:3],
                        "p50_s": statistics.median(secs) if secs else None,
                        "max_s": secs[-1] if secs else None, "peak_mb": peak[0] / 1e6}
                out["waves"].append(wave)
                say(f"wave {w + 1}: {wave['correct']}/{sessions} correct, {wave['isolated']}/"
                    f"{sessions} isolated, wall {wall:.1f} s, latency median "
                    f"{wave['p50_s'] or 0:.1f} s max {wave['max_s'] or 0:.1f} s, peak RSS "
                    f"{wave['peak_mb']:.0f} MB" + (f", errors: {wave['errors'][:3]}"
                                                   if wave["errors"] else ""))
            out["after_mb"] = _rss_tree(proc.pid) / 1e6
            out["loadavg_after"] = os.getloadavg()
        out["server_stopped"] = proc.poll() is not None
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sessions", type=int, default=20)
    ap.add_argument("--waves", type=int, default=2)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--bootstrap", type=int, default=None,
                    help="the server's --bootstrap (default: the server's own default)")
    ap.add_argument("--prompts", type=int, default=1060,
                    help="prompts per session's input (1,060: DeepScaleR-sized; 10,600: 10x)")
    args = ap.parse_args()
    import numpy

    import gradio

    print(f"machine: {os.cpu_count()} CPUs, Python {platform.python_version()}, numpy "
          f"{numpy.__version__}, gradio {gradio.__version__}, load average "
          f"{os.getloadavg()[0]:.1f}")
    res = run_load(args.sessions, args.waves, args.workers, args.bootstrap,
                   prompts=args.prompts)
    print(f"baseline RSS (server + workers) {res['baseline_mb']:.0f} MB, after "
          f"{res['after_mb']:.0f} MB; server stopped: {res['server_stopped']}")
    w = res["waves"]
    bounded = len(w) < 2 or w[1]["peak_mb"] <= 1.2 * w[0]["peak_mb"]
    ok = all(x["correct"] == args.sessions and x["isolated"] == args.sessions for x in w)
    print(f"all correct and isolated: {ok}; memory bounded (wave 2 peak <= 1.2 x wave 1): "
          f"{bounded}")
    print(json.dumps(res, indent=1, default=str))
    return 0 if ok and bounded else 1


if __name__ == "__main__":
    sys.exit(main())
