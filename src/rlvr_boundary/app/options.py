"""The app's options: where it listens and how much one request may ask of it."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

LOOPBACK = "127.0.0.1"


@dataclass
class AppOptions:
    """Options of ``rlvr-boundary serve`` and of the Space entry (validated once)."""

    host: str = LOOPBACK
    """Interface to bind. Loopback by default: only this machine can connect."""
    port: int = 7860
    """TCP port (0: the first free port from 7860 on)."""
    max_upload_mb: float = 20.0
    """Largest accepted upload, in MB of 2**20 bytes (enforced by the server and again
    before reading)."""
    max_rows: int = 200_000
    """Largest number of rows (lines of a text file, rows of a Parquet table) in one input."""
    max_paste_chars: int = 2_000_000
    """Largest pasted table, in characters."""
    max_cells: int = 10_000_000
    """Largest analysis in prompts x budgets (bounds the memory and time of one request)."""
    workers: int = 2
    """Analysis worker processes; jobs beyond this wait in line (bounds CPU and memory)."""
    bootstrap: int = 2000
    """Gaussian multipliers of the simultaneous band and bootstrap resamples per analysis."""
    job_timeout: float = 600.0
    """Seconds a request waits for its analysis before it is reported as failed."""
    session_ttl: float = 3600.0
    """Seconds after which an idle session's files are deleted."""

    def __post_init__(self) -> None:
        if not isinstance(self.host, str) or not self.host:
            raise ValueError("host must be a host name or IP address")
        if not (isinstance(self.port, int) and 0 <= self.port <= 65535):
            raise ValueError(f"port must be an integer in 0..65535, got {self.port!r}")
        for name in ("max_upload_mb", "job_timeout", "session_ttl"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0):
                raise ValueError(f"{name} must be a number > 0, got {v!r}")
        for name, low in (("max_rows", 1), ("max_paste_chars", 1), ("max_cells", 1),
                          ("workers", 1),
                          ("bootstrap", 2)):
            v = getattr(self, name)
            if not (isinstance(v, int) and not isinstance(v, bool) and v >= low):
                raise ValueError(f"{name} must be an integer >= {low}, got {v!r}")

    @property
    def max_upload_bytes(self) -> int:
        return int(self.max_upload_mb * 2**20)

    @property
    def is_local(self) -> bool:
        """Whether the app is reachable from this machine only."""
        if self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False
