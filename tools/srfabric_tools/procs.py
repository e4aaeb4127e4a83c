"""Ending processes that srfabric started, by the handle it kept (never by name: another user's processes of
the same name are not ours to end)."""

from __future__ import annotations

import contextlib
import signal
import subprocess
from typing import Any


def terminate(process: subprocess.Popen[Any], sig: int = signal.SIGTERM, timeout: float = 5) -> None:
    """Ask a process to end with ``sig``; kill it if it has not ended within ``timeout`` seconds."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(sig)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout)
