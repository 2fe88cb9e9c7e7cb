"""The app's options: where it listens and how much one request may ask of it."""

from __future__ import annotations

from dataclasses import dataclass

from rlvr_boundary.errors import InputError
from rlvr_boundary.options import check, option

LOOPBACK = "127.0.0.1"


@dataclass
class AppOptions:
    """Options of ``rlvr-boundary serve`` and of the Space entry (validated once; the flags of
    ``serve`` are made from them)."""

    host: str = option(LOOPBACK, group="network",
                       help="interface to bind (127.0.0.1: this machine only; 0.0.0.0 exposes "
                            "the app to the network)")
    port: int = option(7860, low=0, high=65535, group="network",
                       help="TCP port (0: the first free port from 7860 on)")
    max_upload_mb: float = option(20.0, metavar="MB", low=0, low_open=True, group="limits",
                                  help="largest upload per file, in MB of 2**20 bytes (enforced "
                                       "by the server and again before reading)")
    upload_quota_mb: float = option(200.0, metavar="MB", low=0, low_open=True, group="limits",
                                    help="most a visitor (one client address) may upload per "
                                         "session lifetime, in MB")
    total_upload_mb: float = option(2000.0, metavar="MB", low=0, low_open=True, group="limits",
                                    help="most the server keeps of all visitors' uploads "
                                         "together, in MB; further uploads are refused until "
                                         "sessions end")
    max_rows: int = option(200_000, metavar="N", low=1, group="limits",
                           help="largest number of rows (lines of a text file, rows of a "
                                "Parquet table) in one input")
    max_paste_chars: int = option(2_000_000, cli=False, low=1,
                                  help="largest pasted table, in characters")
    max_cells: int = option(10_000_000, cli=False, low=1,
                            help="largest analysis in prompts x budgets (bounds the memory and "
                                 "time of one request)")
    workers: int = option(2, metavar="N", low=1, group="limits",
                          help="analysis worker processes; more requests wait in line (bounds "
                               "CPU and memory)")
    bootstrap: int = option(4000, metavar="B", low=2, group="limits",
                            help="Gaussian multipliers of the simultaneous band and bootstrap "
                                 "resamples per analysis (4000: the band edges' Monte Carlo "
                                 "error is below the 0.1 points the page prints on "
                                 "DeepScaleR-sized inputs; the page states it for each result)")
    job_timeout: float = option(600.0, cli=False, low=0, low_open=True,
                                help="seconds a request waits for its analysis before it is "
                                     "reported as failed")
    session_ttl: float = option(3600.0, cli=False, low=0, low_open=True,
                                help="seconds after which an idle session's files are deleted")

    def __post_init__(self) -> None:
        if not isinstance(self.host, str) or not self.host:
            raise InputError("--host must be a host name or IP address")
        check(self)

    @property
    def max_upload_bytes(self) -> int:
        return int(self.max_upload_mb * 2**20)

    @property
    def is_local(self) -> bool:
        """Whether the app is reachable from this machine only."""
        if self.host == "localhost":
            return True
        import ipaddress

        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False
