"""``rlvr-boundary watch``: follow a training run's checkpoint folder, audit each new checkpoint.

Parse -> monitor (:mod:`rlvr_boundary.monitor.watch`) -> report page. Every new
checkpoint is sampled on the held-out prompts, graded and compared with the base
(a ``monitor-step`` result); then the report page of all looks so far is
redrawn from the saved samples (``report.json`` and ``report.html``, each
written atomically). A restart reads the looks already done and samples only new
checkpoints.
"""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    from rlvr_boundary.monitor.options import DEFAULT_N, MonitorOptions

    D = MonitorOptions()
    p = sub.add_parser(
        "watch",
        help="follow a checkpoint folder: audit each new checkpoint, keep a live report page",
        description="Watches CHECKPOINT_DIR for checkpoint-N (Trainer, TRL), step-N (lab) or "
                    "global_step_N (verl, with a Hugging Face model inside) folders. Each new "
                    "checkpoint is sampled on the held-out prompts, graded and compared with "
                    "the base (pass@k, D(k) with the simultaneous band, k*, price, coverage, "
                    "support); the report page of every look so far is rewritten after each. "
                    "Rerun the same command after a restart: audited checkpoints are not "
                    "sampled again.")
    p.add_argument("checkpoints", metavar="CHECKPOINT_DIR", help="the training run's folder")
    io = p.add_argument_group("inputs")
    io.add_argument("--base", required=True, metavar="PATH",
                    help="the base: a Hugging Face model folder (sampled once), or its samples "
                         "or counts (any file compare reads)")
    io.add_argument("--base-label", default="base", metavar="LABEL",
                    help="label of the base in a --base file holding several models (base)")
    io.add_argument("--prompts", required=True, metavar="FILE",
                    help="held-out prompts, JSONL or CSV: an id and a text, and the gold "
                         "answer for math grading")
    io.add_argument("--gold", metavar="FILE", help="gold answers, if not in --prompts")
    io.add_argument("--template", default=D.template, choices=["plain", "qwen-boxed", "chat"],
                    help=f"prompt template (default {D.template})")
    io.add_argument("--verifier", default="math", metavar="math|MODULE:FUNCTION",
                    help="math (the gold answers, graded in worker processes; default) or "
                         "your function verify(prompt, text) -> bool, imported by name (it "
                         "runs in this process)")
    io.add_argument("--out", default="boundary-watch", metavar="DIR",
                    help="folder of samples, results and the report page (boundary-watch)")
    sm = p.add_argument_group("sampling")
    sm.add_argument("--n", type=int, default=DEFAULT_N,
                    help=f"samples per prompt and checkpoint (default {DEFAULT_N})")
    sm.add_argument("--max-new-tokens", type=int, default=D.max_new_tokens,
                    help=f"longest completion (default {D.max_new_tokens})")
    sm.add_argument("--temperature", type=float, default=D.temperature,
                    help=f"sampling temperature (default {D.temperature})")
    sm.add_argument("--batch-size", type=int, default=D.batch_size,
                    help=f"sequences decoded together (default {D.batch_size})")
    st = p.add_argument_group("statistics and rules")
    st.add_argument("--ks", metavar="GRID", default=None,
                    help="budgets: '1-16' or 'pow2' (default: 1 to n)")
    st.add_argument("--bootstrap", type=int, default=D.bootstrap, metavar="B",
                    help=f"Gaussian multipliers of the band (default {D.bootstrap})")
    st.add_argument("--alpha", type=float, default=D.alpha,
                    help=f"level of one look's band and the run's false-alarm budget "
                         f"(default {D.alpha})")
    st.add_argument("--seed", type=int, default=D.seed, help=f"random seed (default {D.seed})")
    st.add_argument("--k", type=int, default=None, metavar="K",
                    help="budget of coverage and support (default n)")
    st.add_argument("--rule", action="append", default=[], metavar="ACTION:COND",
                    help="alarm rule, e.g. warn:loss>=8 or stop:kstar<4 (repeatable); watch "
                         "cannot stop the trainer: a 'stop' rule that fires ends watch with "
                         "exit code 4 (and --exit-on-alarm does so for any rule)")
    st.add_argument("--correction", default="open",
                    choices=["open", "bonferroni", "spending", "none"],
                    help="correction for repeated looks (default open: alpha/(j(j+1)) at "
                         "look j, for a run of unknown length; bonferroni and spending need "
                         "--looks)")
    st.add_argument("--looks", type=int, default=None,
                    help="number of checkpoints that will be looked at (bonferroni, spending)")
    lp = p.add_argument_group("following")
    lp.add_argument("--interval", type=float, default=60.0, metavar="S",
                    help="seconds between looks at the folder (60)")
    lp.add_argument("--settle", type=float, default=30.0, metavar="S",
                    help="a checkpoint without a completion marker is taken as written when "
                         "no file of it changed for S seconds (30)")
    lp.add_argument("--once", action="store_true",
                    help="audit the checkpoints there now, then exit")
    lp.add_argument("--until-step", type=int, default=None, metavar="N",
                    help="exit after auditing a checkpoint of step >= N")
    lp.add_argument("--exit-on-alarm", action="store_true",
                    help="exit with code 4 when any rule fires")
    lp.add_argument("--figures", action="store_true",
                    help="also write the report's figures as PNG and PDF at each update")
    p.set_defaults(func=run)


def _verifier(spec: str):
    if spec == "math":
        return "math"
    import importlib

    from rlvr_boundary.errors import InputError

    if ":" not in spec:
        raise InputError(f"--verifier must be math or MODULE:FUNCTION, got {spec!r}")
    mod, name = spec.split(":", 1)
    try:
        fn = getattr(importlib.import_module(mod), name)
    except (ImportError, AttributeError) as exc:
        raise InputError(f"--verifier {spec}: cannot import it ({exc})") from None
    if not callable(fn):
        raise InputError(f"--verifier {spec} is not a function")
    return fn


def run(args: argparse.Namespace) -> int:
    import time
    from pathlib import Path

    from rlvr_boundary.console import console
    from rlvr_boundary.errors import InputError
    from rlvr_boundary.monitor import BoundaryMonitor, MonitorOptions
    from rlvr_boundary.monitor.watch import Watcher, find_checkpoints, read_heldout

    from rlvr_boundary.io.outputs import check_outputs

    out = Path(args.out)
    # The folder is checked before anything is read or sampled; the checkpoint folder is
    # not an input here (only its checkpoint-N folders are read), so --out may sit in it.
    check_outputs({}, [args.prompts, args.gold, args.base], folders={"--out": out})
    verifier = _verifier(args.verifier)
    prompts = read_heldout(args.prompts, gold=args.gold, need_gold=verifier == "math",
                           template=args.template)
    opts = MonitorOptions(n=args.n, ks=args.ks, bootstrap=args.bootstrap, alpha=args.alpha,
                          seed=args.seed, correction=args.correction, looks=args.looks,
                          rules=tuple(args.rule), K=args.k, temperature=args.temperature,
                          max_new_tokens=args.max_new_tokens, batch_size=args.batch_size,
                          template=args.template, every=1)
    root = Path(args.checkpoints)
    find_checkpoints(root)  # a missing folder is an error before anything is sampled
    base = Path(args.base)
    base_is_model = base.is_dir() and (base / "config.json").is_file()
    monitor = BoundaryMonitor(prompts, verifier, out, opts,
                              base=None if base_is_model else base, base_label=args.base_label)
    code = 0
    try:
        if not monitor.has_base:
            console.print(f"sampling the base {base} on {len(prompts)} prompts x {args.n}")
            monitor.sample_base(base)
        if monitor.history:
            console.print(f"resumed: {len(monitor.history)} checkpoint(s) already audited "
                          f"(steps {', '.join(map(str, sorted(monitor.history)))})")
            _update_page(args, out, base, base_is_model)
        watcher = Watcher(root, monitor, settle=args.settle)
        warned: set[int] = set()
        while True:
            for c in watcher.unloadable():
                if c.step not in warned:
                    warned.add(c.step)
                    console.print(f"[yellow]note:[/] {c.folder.name} holds no Hugging Face "
                                  "model folder (verl: save hf_model, or merge the shards)",
                                  highlight=False)
            docs = watcher.poll(on_look=lambda c, d: _report_look(console, c, d))
            if docs:
                _update_page(args, out, base, base_is_model)
                console.print(f"updated {out / 'report.html'}")
            fired = [r for d in docs for r in d["fired"]]
            if any(r["action"] == "stop" for r in fired) or (fired and args.exit_on_alarm):
                code = 4
                break
            last = max(monitor.history, default=None)
            if args.once or (args.until_step is not None and last is not None
                             and last >= args.until_step):
                break
            time.sleep(args.interval)
    except KeyboardInterrupt:
        console.print("stopped; rerun the same command to go on where it left off")
    finally:
        monitor.close()
    if not monitor.history and args.once:
        raise InputError("no checkpoint to audit yet (checkpoint-N, step-N or global_step_N "
                         "folders with a Hugging Face model)", path=root)
    return code


def _report_look(console, ckpt, doc: dict) -> None:
    m = doc["metrics"]
    words = (f"step {doc['step']}: pass@1 {100 * m['boundary/pass@k/1']:.1f}% "
             f"(base {100 * m['boundary/base_pass@k/1']:.1f}%), price "
             f"{100 * m['boundary/price']:.2f} points")
    if "boundary/k_star" in m:
        words += f", k* = {int(m['boundary/k_star'])}"
    loss = doc["comparison"].get("loss_budgets") or []
    words += f"; supported loss at k = {loss[0]}-{loss[-1]}" if loss else \
        "; no supported loss"
    console.print(words, highlight=False)
    for r in doc["fired"]:
        console.print(f"[bold red]alarm:[/] rule {r['rule']} fired at step {doc['step']} "
                      f"(look {doc['look']}, level {doc['alpha_look']:.2g})", highlight=False)


def _update_page(args, out, base, base_is_model: bool) -> None:
    """Redraw the report page of every look so far from the saved samples."""
    from rlvr_boundary.pipelines import audit
    from rlvr_boundary.pipelines.compare import CompareOptions

    paths = [out / "rollouts"] + ([] if base_is_model else [base])
    labels = {} if base_is_model else {str(base): args.base_label}
    opts = audit.ReportOptions(compare=CompareOptions(ks=args.ks, bootstrap=args.bootstrap,
                                                      alpha=args.alpha, seed=args.seed,
                                                      labels=labels),
                               base=args.base_label, k=args.k or args.n, figures=args.figures)
    audit.run(paths, opts, out / "report.html",
              notes=[f"Live page of rlvr-boundary watch on {args.checkpoints}."])
