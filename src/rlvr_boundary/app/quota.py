"""Upload quotas: what one visitor, and all visitors together, may store on the server.

The per-file limit (``--max-upload-mb``) bounds one file, not how many: without a
quota a visitor can store file after file without ever running an analysis. This
ASGI middleware sits in front of Gradio's upload route and refuses an upload,
before its body is read, when

- the visitor (the client address the server sees) has uploaded more than
  ``per_visitor`` bytes within the last ``window`` seconds (HTTP 429), or
- the files the server holds (its upload folder, plus uploads in progress) would
  exceed ``total`` bytes (HTTP 507),

with a sentence that says which limit and when to retry. An upload that does not
say its size (no ``Content-Length``) is refused (HTTP 411): its size could only be
learnt by storing it. Behind a reverse proxy every visitor has the proxy's
address unless the server is told to trust the proxy's forwarded address; the
per-visitor quota then acts as a second global one.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

MB = 2**20


def folder_bytes(folder: Path) -> int:
    """Bytes of the regular files under ``folder`` (0 when it does not exist)."""
    total = 0
    for dirpath, _, names in os.walk(folder):
        for name in names:
            try:
                st = os.lstat(os.path.join(dirpath, name))
            except OSError:
                continue
            total += st.st_size
    return total


class Quota:
    """The book-keeping of :class:`UploadQuota` (no web framework needed; tested alone)."""

    def __init__(self, folder: Path, per_visitor: int, total: int, window: float):
        self.folder = Path(folder)
        self.per_visitor = per_visitor
        self.total = total
        self.window = window
        self._lock = threading.Lock()
        self._sent: dict[str, list[tuple[float, int]]] = {}
        self._in_flight = 0

    def admit(self, visitor: str, size: int) -> tuple[int, str] | None:
        """Reserve ``size`` bytes for ``visitor``; None if admitted, else (status, message)."""
        now = time.time()
        with self._lock:
            sent = [(t, n) for t, n in self._sent.get(visitor, []) if now - t < self.window]
            self._sent[visitor] = sent
            mine = sum(n for _, n in sent)
            if mine + size > self.per_visitor:
                return 429, (f"upload refused: you have uploaded {mine / MB:,.1f} MB in the last "
                             f"{self.window / 3600:g} h and this file has {size / MB:,.1f} MB; "
                             f"this server accepts at most {self.per_visitor / MB:,.0f} MB per "
                             "visitor in that time. Analyse what you uploaded, or try later.")
            held = folder_bytes(self.folder) + self._in_flight
            if held + size > self.total:
                return 507, (f"upload refused: this server holds {held / MB:,.1f} MB of "
                             f"uploaded files, and this file has {size / MB:,.1f} MB; it keeps "
                             f"at most {self.total / MB:,.0f} MB for all visitors together. "
                             "Try again later (files are deleted when their sessions end).")
            sent.append((now, size))
            self._in_flight += size
        return None

    def done(self, size: int) -> None:
        """The upload of ``size`` bytes has finished (stored or failed)."""
        with self._lock:
            self._in_flight -= size


class UploadQuota:
    """ASGI middleware: :class:`Quota` applied to ``POST .../upload`` requests."""

    def __init__(self, app, *, folder: Path, per_visitor: int, total: int, window: float):
        self.app = app
        self.quota = Quota(folder, per_visitor, total, window)

    async def __call__(self, scope, receive, send):
        if (scope.get("type") != "http" or scope.get("method") != "POST"
                or not scope.get("path", "").rstrip("/").endswith("/upload")):
            return await self.app(scope, receive, send)
        headers = dict(scope.get("headers") or [])
        try:
            size = int(headers[b"content-length"])
        except (KeyError, ValueError):
            return await _refuse(send, 411, "upload refused: the request does not say its size "
                                            "(Content-Length)")
        visitor = (scope.get("client") or ("unknown", 0))[0]
        refused = self.quota.admit(visitor, size)
        if refused is not None:
            return await _refuse(send, *refused)
        try:
            return await self.app(scope, receive, send)
        finally:
            self.quota.done(size)


async def _refuse(send, status: int, message: str) -> None:
    body = message.encode("utf-8")
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                            (b"content-length", str(len(body)).encode("ascii"))]})
    await send({"type": "http.response.body", "body": body})
