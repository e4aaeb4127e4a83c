"""The kernel's tick rate (``CONFIG_HZ``): BPF programs that keep time in jiffies (``bpf_jiffies64``, which the
verifier inlines, where a clock read is a helper call) have their timeouts given in ticks."""

from __future__ import annotations

import gzip
import os
import re
from pathlib import Path

from srfabric.errors import SrfabricError

CONFIG_HZ = re.compile(rb"^CONFIG_HZ=(\d+)$", re.MULTILINE)


def kernel_hz(release: str | None = None) -> int:
    """``CONFIG_HZ`` of the running kernel, from ``/proc/config.gz`` or ``/boot/config-<release>``."""
    release = release or os.uname().release
    for path in (Path("/proc/config.gz"), Path(f"/boot/config-{release}")):
        try:
            text = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
        except (OSError, gzip.BadGzipFile, EOFError):
            continue
        found = CONFIG_HZ.search(text)
        if found:
            return int(found.group(1))
    raise SrfabricError("CONFIG_HZ", "the kernel's tick rate is in neither /proc/config.gz nor "
                                     f"/boot/config-{release}")


def ms_to_ticks(ms: int, hz: int) -> int:
    """Milliseconds as whole ticks, rounded up (a timeout never fires early).

    >>> ms_to_ticks(2000, 250), ms_to_ticks(1, 250), ms_to_ticks(3, 1000)
    (500, 1, 3)
    """
    return max(1, -(-ms * hz // 1000))
