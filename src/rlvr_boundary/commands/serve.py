"""``rlvr-boundary serve``: the diagnostic as a local web app (Gradio)."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "serve",
        help="start the browser app (paste or upload results, read k*, price, band, report)",
        description="Starts a local web app: paste per-prompt rates or counts or a printed pass@k "
                    "curve, or upload count, rollout or other tools' files, and read the curves "
                    "with the band, crossings and bound, k*, price, coverage, support and the "
                    "budget advisor; download the HTML report, JSON and figures. Also the theory "
                    "lab and a shaping explorer. Listens on 127.0.0.1 unless --host says "
                    "otherwise. Needs the 'app' extra: pip install 'rlvr-boundary[app]'.")
    net = p.add_argument_group("network")
    net.add_argument("--host", default="127.0.0.1",
                     help="interface to bind (default 127.0.0.1: this machine only; 0.0.0.0 "
                          "exposes the app to the network)")
    net.add_argument("--port", type=int, default=7860, help="TCP port (7860; 0: first free)")
    lim = p.add_argument_group("limits")
    lim.add_argument("--max-upload-mb", type=float, default=20.0, metavar="MB",
                     help="largest upload per file (20)")
    lim.add_argument("--max-rows", type=int, default=200_000, metavar="N",
                     help="largest number of rows in one input (200000)")
    lim.add_argument("--workers", type=int, default=2, metavar="N",
                     help="analysis worker processes; more requests wait in line (2)")
    lim.add_argument("--bootstrap", type=int, default=2000, metavar="B",
                     help="Gaussian multipliers / bootstrap resamples per analysis (2000)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from rlvr_boundary.app import AppOptions, build_app, launch, shutdown
    from rlvr_boundary.console import console, err_console
    from rlvr_boundary.errors import InputError

    try:
        opts = AppOptions(host=args.host, port=args.port, max_upload_mb=args.max_upload_mb,
                          max_rows=args.max_rows, workers=args.workers, bootstrap=args.bootstrap)
    except ValueError as exc:
        raise InputError(str(exc), field="serve") from None
    import signal

    def _stop(signum, frame):  # SIGTERM (service managers, `timeout`) stops like Ctrl-C
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _stop)
    demo = build_app(opts)
    if not opts.is_local:
        err_console.print(f"[yellow]warning:[/] listening on {opts.host}: anyone who can reach "
                          "this machine can use the app and upload files to it", highlight=False)
    try:
        url = launch(demo, opts, block=False, quiet=True)
        console.print(f"rlvr-boundary app running on {url} (Ctrl-C to stop)")
        console.print(f"session files under {demo.rb_root} (deleted after "
                      f"{opts.session_ttl / 3600:g} h without use, and on exit)")
        demo.block_thread()  # returns on Ctrl-C or SIGTERM
    finally:
        shutdown(demo)  # stops the workers and deletes every session's files
    console.print("stopped")
    return 0
