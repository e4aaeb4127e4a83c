"""A process's CPU: the time it used, read where the kernel keeps it (a benchmark reports the CPU its controller
under test and its own generator used over a step, so a step limited by the generator shows), and the one CPU it
may run on."""

from __future__ import annotations

import contextlib
import os
import resource
from pathlib import Path


def process_cpu_s(pid: int) -> float:
    """User and system CPU seconds process ``pid`` has used so far (``/proc/PID/stat``, fields 14 and 15).

    >>> process_cpu_s(os.getpid()) >= 0.0
    True
    """
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def own_cpu_s() -> float:
    """User and system CPU seconds this process has used so far."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def pin(pid: int, cpu: int) -> None:
    """Keep process ``pid`` (0: this one) on CPU ``cpu``, where the machine has it."""
    if (os.cpu_count() or 1) > cpu:
        with contextlib.suppress(OSError):
            os.sched_setaffinity(pid, {cpu})
