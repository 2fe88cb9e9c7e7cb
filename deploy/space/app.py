"""Hugging Face Space entry point of the rlvr-boundary browser app.

A Gradio Space runs ``python app.py``. The Space sets ``GRADIO_SERVER_NAME``
(to 0.0.0.0) so the app is reachable through the Space's proxy; anywhere else
the app binds to 127.0.0.1, as ``rlvr-boundary serve`` does. The limits can be
set with environment variables (Space "Variables"): ``RLVR_BOUNDARY_MAX_UPLOAD_MB``,
``RLVR_BOUNDARY_MAX_ROWS``, ``RLVR_BOUNDARY_WORKERS``, ``RLVR_BOUNDARY_BOOTSTRAP``.

The page is built under ``if __name__ == "__main__"`` only: the analysis
workers are started with ``spawn`` and import this file, and must not build or
launch a second app.
"""

from __future__ import annotations

import os

from rlvr_boundary.app import AppOptions, build_app, launch


def options_from_env(env=None) -> AppOptions:
    """App options from the environment (loopback unless ``GRADIO_SERVER_NAME`` is set)."""
    env = os.environ if env is None else env
    kw = {"host": env.get("GRADIO_SERVER_NAME") or "127.0.0.1",
          "port": int(env.get("GRADIO_SERVER_PORT") or 7860)}
    for var, name, cast in (("RLVR_BOUNDARY_MAX_UPLOAD_MB", "max_upload_mb", float),
                            ("RLVR_BOUNDARY_UPLOAD_QUOTA_MB", "upload_quota_mb", float),
                            ("RLVR_BOUNDARY_TOTAL_UPLOAD_MB", "total_upload_mb", float),
                            ("RLVR_BOUNDARY_MAX_ROWS", "max_rows", int),
                            ("RLVR_BOUNDARY_WORKERS", "workers", int),
                            ("RLVR_BOUNDARY_BOOTSTRAP", "bootstrap", int)):
        if env.get(var):
            kw[name] = cast(env[var])
    return AppOptions(**kw)


if __name__ == "__main__":
    opts = options_from_env()
    launch(build_app(opts), opts)
