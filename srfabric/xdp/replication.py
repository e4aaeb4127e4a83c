"""The XDP switch's part in IEEE 802.1CB: the tc replicator on its ports (``bpf/frer_replicate.c``) with its
copies, and the settings of the elimination at its egress edge (``bpf/include/frer_recovery.h`` in the codec's
object).

XDP cannot clone a frame: ``sr_host`` hands a redundant stream's frames to the kernel, and the tc program on
the same port's ingress sends one copy per path, each with its own header. The copies are written from the
stream's group of type all (``tables.XdpTables.replicas``).
"""

from __future__ import annotations

import contextlib
import struct
import subprocess
from collections.abc import Sequence

from srfabric.errors import SrfabricError
from srfabric.xdp.frer import recovery_settings
from srfabric.xdp.layout import sum_u64, u32
from srfabric.xdp.loader import LoadedObject, load
from srfabric.xdp.tables import MAX_COPIES

KEY = struct.Struct("=I6s2x")  # the port's interface index, the destination MAC
COPY = struct.Struct("=I6s2x")  # the path's first port's interface index, its header (the source MAC)
OUTCOMES = ("sent", "no_entry", "failed")  # bpf/frer_replicate.c


def replica_key(ifindex: int, mac: int) -> bytes:
    """
    >>> replica_key(7, 0x0a0000000003).hex()
    '070000000a00000000030000'
    """
    return KEY.pack(ifindex, mac.to_bytes(6, "big"))


def replicas_value(copies: Sequence[tuple[int, int]]) -> bytes:
    """``copies``: (interface index, header) of each path, at most ``MAX_COPIES``.

    >>> len(replicas_value([(3, 0x210000000001), (4, 0x310000000012)]))
    56
    """
    if not 1 <= len(copies) <= MAX_COPIES:
        raise SrfabricError("copies", f"must be 1..{MAX_COPIES}, got {len(copies)}")
    packed = b"".join(COPY.pack(ifindex, header.to_bytes(6, "big")) for ifindex, header in copies)
    return struct.pack("=II", len(copies), 0) + packed + bytes(COPY.size * (MAX_COPIES - len(copies)))


def set_recovery(obj: LoadedObject, history_length: int, reset_ms: int) -> None:
    """The egress edge's sequence recovery settings (frerSeqRcvyHistoryLength, frerSeqRcvyResetMSec)."""
    obj.map("frer_config").update(u32(0), recovery_settings(history_length, reset_ms))


class Replicator:
    """The tc program loaded and pinned as ``name``, on the ingress of the interfaces given to ``attach``."""

    def __init__(self, name: str) -> None:
        self.obj = load("frer-replicate", name)
        self.interfaces: list[str] = []
        self.written: dict[bytes, bytes] = {}

    def attach(self, ifname: str) -> None:
        """A clsact qdisc on ``ifname`` (made if missing) and the program on its ingress."""
        subprocess.run(["tc", "qdisc", "add", "dev", ifname, "clsact"], capture_output=True)
        done = subprocess.run(["tc", "filter", "replace", "dev", ifname, "ingress", "prio", "1", "handle", "1", "bpf",
                               "direct-action", "object-pinned", str(self.obj.program("frer_replicate"))],
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise SrfabricError("tc", f"attaching the FRER replicator to {ifname}: {done.stderr.strip()}")
        self.interfaces.append(ifname)

    def write(self, replicas: dict[bytes, bytes]) -> None:
        """Make the copies exactly ``replicas`` (packed keys and values): new ones first, then stale ones out."""
        table = self.obj.map("frer_replicas")
        for key, value in replicas.items():
            if self.written.get(key) != value:
                table.update(key, value)
        for key in set(self.written) - set(replicas):
            with contextlib.suppress(SrfabricError):
                table.delete(key)
        self.written = dict(replicas)

    def counts(self) -> dict[str, int]:
        """Copies sent, frames of no redundant stream dropped, failures; summed over CPUs."""
        table = self.obj.map("frer_replicate_counts")
        return {name: sum_u64(table.lookup_per_cpu(u32(index))) for index, name in enumerate(OUTCOMES)}

    def close(self) -> None:
        for ifname in self.interfaces:  # the qdisc takes its filter with it
            subprocess.run(["tc", "qdisc", "del", "dev", ifname, "clsact"], capture_output=True)
        self.obj.unload()
