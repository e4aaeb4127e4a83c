"""Hold the kernel's CPU latency limit (PM QoS) while a latency benchmark runs.

An idle CPU sleeps in a deep idle state; waking it costs time. On a virtual
machine an idle vCPU halts and the host deschedules it, and every wake-up of
a reactive setup (switch, controller, switch again) pays for that. Writing a
limit to ``/dev/cpu_dma_latency`` keeps CPUs in idle states that wake within
it, 0 us meaning polling, for as long as the file stays open: the kernel drops
the limit when it is closed, also when the process dies. cyclictest and
tuned's latency-performance profile do the same.
"""

from __future__ import annotations

import contextlib
import os
import struct
from collections.abc import Iterator

from srfabric.errors import SrfabricError

PM_QOS_PATH = "/dev/cpu_dma_latency"
MAX_LATENCY_US = 2_000_000_000  # the request is an s32 number of microseconds


@contextlib.contextmanager
def cpu_latency_held(microseconds: int | None, path: str = PM_QOS_PATH) -> Iterator[int | None]:
    """Keep every CPU within ``microseconds`` of waking while the block runs; None changes nothing.

    Yields the limit held (None when none is).

    >>> with cpu_latency_held(None) as held:
    ...     held is None
    True
    >>> with cpu_latency_held(-1):
    ...     pass
    Traceback (most recent call last):
    srfabric.errors.SrfabricError: cpu_latency_us: -1 is outside 0..2000000000 microseconds
    """
    if microseconds is None:
        yield None
        return
    if not 0 <= microseconds <= MAX_LATENCY_US:
        raise SrfabricError("cpu_latency_us", f"{microseconds} is outside 0..{MAX_LATENCY_US} microseconds")
    try:
        fd = os.open(path, os.O_WRONLY)
    except OSError as error:
        raise SrfabricError("cpu_latency_us", f"cannot open {path}: {error.strerror} (it needs root)") from None
    try:
        os.write(fd, struct.pack("i", microseconds))
        yield microseconds
    finally:
        os.close(fd)
