"""``rlvr-boundary serve``: the diagnostic as a local web app (Gradio)."""

from __future__ import annotations

import argparse

from rlvr_boundary.app.options import AppOptions
from rlvr_boundary.options import add_flags


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
    add_flags(p, AppOptions)
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from rlvr_boundary.app import build_app, launch, shutdown
    from rlvr_boundary.console import console, err_console
    from rlvr_boundary.options import from_args

    opts = from_args(AppOptions, args)
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
