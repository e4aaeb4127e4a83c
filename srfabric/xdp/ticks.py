"""The kernel's tick rate (``CONFIG_HZ``): BPF programs that keep time in jiffies (``bpf_jiffies64``, which the
verifier inlines, where a clock read is a helper call) have their timeouts given in ticks."""

from __future__ import annotations

import functools
import gzip
import os
import re
import time
from pathlib import Path

from srfabric.errors import SrfabricError

CONFIG_HZ = re.compile(rb"^CONFIG_HZ=(\d+)$", re.MULTILINE)
JIFFIES = re.compile(r"^jiffies: (\d+)$", re.MULTILINE)


@functools.cache  # the tick rate is fixed while the kernel runs; measuring it takes 0.2 s
def kernel_hz(release: str | None = None) -> int:
    """``CONFIG_HZ`` of the running kernel, from ``/proc/config.gz`` or ``/boot/config-<release>``, else measured
    from ``/proc/timer_list`` (root), else a clear error."""
    release = release or os.uname().release
    for path in (Path("/proc/config.gz"), Path(f"/boot/config-{release}")):
        try:
            text = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
        except (OSError, gzip.BadGzipFile, EOFError):
            continue
        found = CONFIG_HZ.search(text)
        if found:
            return int(found.group(1))
    measured = measured_hz()
    if measured is None:
        raise SrfabricError("CONFIG_HZ", "the kernel's tick rate is in neither /proc/config.gz nor "
                                         f"/boot/config-{release}, and /proc/timer_list cannot be read")
    return measured


def measured_hz(seconds: float = 0.2) -> int | None:
    """The tick rate from ``/proc/timer_list``'s jiffies over ``seconds``, rounded to the rates Linux offers."""
    def jiffies() -> int | None:
        try:
            found = JIFFIES.search(Path("/proc/timer_list").read_text())
        except OSError:
            return None
        return int(found.group(1)) if found else None

    first, began = jiffies(), time.monotonic()
    time.sleep(seconds)
    second = jiffies()
    if first is None or second is None:
        return None
    rate = (second - first) / (time.monotonic() - began)
    return min((100, 250, 300, 1000), key=lambda hz: abs(hz - rate))


def ms_to_ticks(ms: int, hz: int) -> int:
    """Milliseconds as whole ticks, rounded up, and one more: two jiffies readings N apart may be only a little
    over N - 1 ticks apart, so a timeout of N + 1 never fires early.

    >>> ms_to_ticks(2000, 250), ms_to_ticks(1, 250), ms_to_ticks(3, 1000)
    (501, 2, 4)
    """
    return -(-ms * hz // 1000) + 1
