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


def process_runtime_s(pid: int) -> float:
    """CPU seconds process ``pid``'s live threads have run, to the nanosecond the scheduler counts
    (``se.sum_exec_runtime`` of ``/proc/PID/task/*/sched``, in ms); ``process_cpu_s`` (10 ms ticks) where the
    kernel does not show it. A short window's CPU needs it: a tick is a tenth of what 100 new flows cost.

    >>> process_runtime_s(os.getpid()) > 0.0
    True
    """
    total = 0.0
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            with contextlib.suppress(FileNotFoundError):  # a thread that ended meanwhile
                for line in (task / "sched").read_text().splitlines():
                    if line.startswith("se.sum_exec_runtime"):
                        total += float(line.split(":")[1]) / 1e3
    except FileNotFoundError:
        return process_cpu_s(pid)
    return total or process_cpu_s(pid)


def own_cpu_s() -> float:
    """User and system CPU seconds this process has used so far."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def pin(pid: int, cpu: int) -> None:
    """Keep process ``pid`` (0: this one) on CPU ``cpu``, where the machine has it."""
    if (os.cpu_count() or 1) > cpu:
        with contextlib.suppress(OSError):
            os.sched_setaffinity(pid, {cpu})


def peak_rss_mib(pid: int | str = "self") -> float:
    """The most memory process ``pid`` has held resident (``VmHWM`` of ``/proc/PID/status``), in MiB.

    Not ``getrusage``'s ``ru_maxrss``: Linux keeps that across ``execve``, so a process a benchmark started
    reports at least the benchmark's own resident size when it forked (an emulated fabric of hundreds of
    switches, say), where ``VmHWM`` belongs to the process's own memory alone.

    >>> 0.0 < peak_rss_mib() < 1 << 20
    True
    """
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 1)
    raise OSError(f"/proc/{pid}/status has no VmHWM line")
