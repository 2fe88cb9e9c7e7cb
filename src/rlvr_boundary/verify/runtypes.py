"""Options and results of one sandboxed run, shared by the local sandbox and the
SandboxFusion client.

A leaf of :mod:`rlvr_boundary.verify`: :mod:`.sandbox` (the local boundary) and
:mod:`.fusion` (a remote server) both import it, and neither imports the other at
module level, so there is no import circle between them.
"""

from __future__ import annotations

from dataclasses import dataclass

from rlvr_boundary.errors import InputError


class SandboxUnavailable(InputError):
    """No isolation that holds is available here (the message says what to install)."""


@dataclass
class SandboxOptions:
    """Limits of one sandboxed run."""

    timeout: float = 10.0
    """Wall-clock seconds before the whole run (its cgroup) is killed."""
    cpu_seconds: int = 10
    """RLIMIT_CPU per process (the kernel sends SIGXCPU then SIGKILL)."""
    memory_mb: int = 1024
    """Memory of the whole run (cgroup, all processes together, no swap) and
    address space of each process (RLIMIT_AS). A record checked outside the
    program runs two sandboxes at once, each with this limit."""
    max_file_mb: int = 16
    """RLIMIT_FSIZE: largest file the code may write."""
    work_mb: int = 64
    """Size of the work directory: with bubblewrap a tmpfs of this size (its pages
    count against the run's memory too), so a program cannot fill the host's disk."""
    max_processes: int = 32
    """Processes and threads of the whole run (cgroup ``pids.max``)."""
    max_output: int = 64 * 1024
    """Bytes of stderr kept, and of stdout except a stdio case's (a file kept up to
    twice the expected output plus 1 MB)."""
    allow_processes: bool = False
    """Let the program start processes (fork, subprocess). Off by default: the
    audit hook refuses them with a clear message. The cgroup caps them either way."""
    unsafe_no_isolation: bool = False
    """Run without bubblewrap when it is missing (rlimits, cgroup if any, audit
    hook, harness token). Generated code can then read and write what this user can."""
    bwrap: str | None = None
    """Path of bubblewrap; None: ``bwrap`` on PATH; "": do not use it."""
    fusion_url: str | None = None
    """Base URL of a SandboxFusion server to run the code on instead (its
    isolation then applies; see :mod:`rlvr_boundary.verify.fusion`)."""

    def __post_init__(self) -> None:
        if self.fusion_url is not None and not str(self.fusion_url).startswith(
                ("http://", "https://")):
            raise InputError(f"the SandboxFusion URL must start with http:// or https://, got "
                             f"{self.fusion_url!r}", field="sandbox_fusion_url")
        if not self.timeout > 0:
            raise InputError(f"sandbox timeout must be > 0, got {self.timeout}", field="timeout")
        for name in ("cpu_seconds", "memory_mb", "max_file_mb", "work_mb", "max_output"):
            if int(getattr(self, name)) < 1:
                raise InputError(f"sandbox {name} must be >= 1", field=name)
        if not 2 <= self.max_processes <= 4096:
            raise InputError("sandbox max_processes must be in [2, 4096]", field="max_processes")


@dataclass
class RunResult:
    """Outcome of one sandboxed run."""

    status: str
    """'ok' (the harness reported the end of the tests and the exit status is 0),
    'failed', 'timeout', 'memory', or 'error' (the sandbox could not start)."""
    returncode: int | None
    stdout: str
    stderr: str
    seconds: float
    isolation: str
    """'bwrap', 'none' (explicitly unsafe) or 'sandbox-fusion' (a remote server)."""
    cgroup: str | None = None
    """'v2', 'v1' or None: the cgroup that limited and killed the run."""
    completed: bool = False
    """True when the harness wrote the run's token after the last test."""
    run_id: str = ""
    marker: str = ""
    """What the harness reported instead of its token (a checker: ``timeout``, or
    ``unsplittable: ...`` when the tests pass the program something that is not data)."""
    output_cut: bool = False
    """True when stdout went to a file and was longer than the run's limit."""


def public_url(url: str | None) -> str | None:
    """``url`` without a ``user:password@`` part (what manifests may record)."""
    if not url:
        return url
    from urllib.parse import urlsplit

    u = urlsplit(url)
    host = (u.hostname or "") + (f":{u.port}" if u.port else "")
    return u._replace(netloc=host).geturl()
