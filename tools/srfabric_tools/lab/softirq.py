"""The kernel's softirq threads at a real-time priority for the length of a lab run.

In the kernel lab every switch and every host shares one emulated CPU. When the network's softirq work outgrows
its budget (a babbling talker's frames, each dropped by an edge's policing, are such work), Linux hands the rest
to ``ksoftirqd``, an ordinary thread, and every switch's forwarding then waits for the CPU behind the hosts'
processes: D-ITG, the listeners, Open vSwitch's daemon. A switch's data plane does not wait for its hosts' CPU,
so a run that measures the switches raises ``ksoftirqd`` over every ordinary process, and under the talkers that
keep their slots (``chrt -f 50``), and puts back what it found afterwards.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from srfabric.errors import ModelError

PRIORITY = 40  # SCHED_FIFO: over every ordinary process, under the slot-keeping talkers' 50


def softirq_threads(proc: Path = Path("/proc")) -> list[int]:
    """The process ids of the kernel's ``ksoftirqd/N`` threads, one per CPU."""
    found = []
    for entry in proc.iterdir():
        if entry.name.isdigit():
            try:
                name = (entry / "comm").read_text().strip()
            except OSError:
                continue  # a process that ended while we looked
            if name.startswith("ksoftirqd/"):
                found.append(int(entry.name))
    return sorted(found)


@contextmanager
def realtime_softirqs(priority: int = PRIORITY) -> Iterator[list[int]]:
    """``ksoftirqd`` under SCHED_FIFO at ``priority`` inside the block (root only); each thread's policy and
    priority as found are put back after it. Yields the threads' ids.

    >>> with realtime_softirqs(0):
    ...     pass
    Traceback (most recent call last):
    srfabric.errors.ModelError: softirq priority: must be in 1..99, got 0
    """
    if not 1 <= priority <= 99:
        raise ModelError("softirq priority", f"must be in 1..99, got {priority}")
    threads = softirq_threads()
    if not threads:
        raise ModelError("ksoftirqd", "no ksoftirqd thread found under /proc")
    found = {pid: (os.sched_getscheduler(pid), os.sched_getparam(pid).sched_priority) for pid in threads}
    try:
        for pid in threads:
            os.sched_setscheduler(pid, os.SCHED_FIFO, os.sched_param(priority))
        yield threads
    finally:
        for pid, (policy, held) in found.items():
            os.sched_setscheduler(pid, policy, os.sched_param(held))
