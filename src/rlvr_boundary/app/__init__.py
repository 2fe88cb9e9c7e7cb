"""The browser app: the diagnostic without writing code (``rlvr-boundary serve``, or a Space).

Modules:

- :mod:`~rlvr_boundary.app.options`: :class:`AppOptions`, the server's limits.
- :mod:`~rlvr_boundary.app.compute`: the only module that calls into the library: the
  same workflow functions as the command line (:mod:`rlvr_boundary.pipelines`).
- :mod:`~rlvr_boundary.app.jobs`: the worker processes that run the analyses.
- :mod:`~rlvr_boundary.app.render`: result documents -> escaped HTML fragments, in the
  report's words and units.
- :mod:`~rlvr_boundary.app.ui`: the Gradio page.

Gradio is an optional dependency (``pip install 'rlvr-boundary[app]'``), imported
only when the page is built; everything but :mod:`~rlvr_boundary.app.ui` works
without it.
"""

from __future__ import annotations

from rlvr_boundary.app.options import AppOptions

__all__ = ["AppOptions", "build_app", "launch"]


def build_app(opts: AppOptions | None = None, runner=None):
    """The app's Gradio Blocks (see :func:`rlvr_boundary.app.ui.build_app`)."""
    from rlvr_boundary.app.ui import build_app as _build

    return _build(opts, runner)


def launch(demo, opts: AppOptions, *, block: bool = True, quiet: bool = False):
    """Serve ``demo`` on ``opts.host:opts.port`` with the upload limit and no telemetry.

    Parameters
    ----------
    demo
        From :func:`build_app`.
    opts
        Where to listen and the limits.
    block
        Serve until interrupted, then stop the workers and delete the sessions'
        files. With ``block=False`` return at once; call :func:`shutdown` later.

    Returns
    -------
    str
        The local URL, once the worker processes are started and warm (their imports and
        a first figure drawn while the web server starts), so no request pays for that.
    """
    import os

    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    runner = getattr(demo, "rb_runner", None)
    warming = runner.start() if runner is not None and hasattr(runner, "start") else []
    demo.queue(default_concurrency_limit=max(2, 2 * opts.workers), max_size=200)
    from rlvr_boundary.app.render import CSS

    from pathlib import Path

    from starlette.middleware import Middleware

    from rlvr_boundary.app.quota import MB, UploadQuota

    root = getattr(demo, "rb_root", None)
    uploads = Path(os.environ.get("GRADIO_TEMP_DIR") or (Path(root) / "gradio" if root else "."))
    quota = Middleware(UploadQuota, folder=uploads, per_visitor=int(opts.upload_quota_mb * MB),
                       total=int(opts.total_upload_mb * MB), window=opts.session_ttl)
    _, url, _ = demo.launch(
        server_name=opts.host, server_port=opts.port or None, share=False,
        max_file_size=opts.max_upload_bytes, prevent_thread_lock=True, quiet=quiet,
        show_error=False, ssr_mode=False, mcp_server=False, enable_monitoring=False,
        footer_links=[], css=CSS, pwa=False, app_kwargs={"middleware": [quota]})
    if warming:  # the workers warmed up while the server started; the URL is given once they are
        runner.wait_ready(warming)
    if block:
        try:
            demo.block_thread()
        finally:
            shutdown(demo)
    return url


def shutdown(demo) -> None:
    """Stop the server, the worker processes, and delete every session's files."""
    import shutil

    try:
        demo.close()
    finally:
        runner = getattr(demo, "rb_runner", None)
        if runner is not None:
            runner.close()
        root = getattr(demo, "rb_root", None)
        if root is not None:
            shutil.rmtree(root, ignore_errors=True)
