"""End-system elimination (IEEE 802.1CB) on a listener's interface: ``bpf/frer_eliminate.c`` loaded, configured,
attached, and its per-stream counters read under the names of the ``ieee802-dot1cb-frer`` YANG module.

The talker writes the R-TAG (``rtag``): end-system replication and elimination, as 802.1CB allows.
"""

from __future__ import annotations

import ipaddress
import re
import struct
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from srfabric.errors import SrfabricError
from srfabric.tsn.model.frer import COUNTERS, SEQ_SPACE
from srfabric.xdp.layout import sum_u64
from srfabric.xdp.loader import PIN_ROOT, LoadedObject, load
from srfabric.xdp.ticks import kernel_hz, ms_to_ticks

CONFIG = struct.Struct("<IIQ")  # history_length, pad, reset time in the kernel's ticks (``ticks``)
# lock, take_any, newest, filled, history, last pass (ticks), the six counters, the stream's key (IPv4 source and
# destination, UDP source and destination port, as on the wire), whether the slot is used
STATE = struct.Struct("<IIIIQQQQQQQQ4s4s2s2sI")
SLOTS = 4096
MAX_HISTORY = 64  # the program keeps the window in one 64-bit word
ORDER = ("passed", "discarded", "out_of_order", "lost", "rogue", "resets")


def check_settings(history_length: int, reset_ms: int) -> None:
    """The two settings 802.1CB names (frerSeqRcvyHistoryLength, frerSeqRcvyResetMSec), within what the
    program holds; ``SrfabricError`` naming the one out of range."""
    if not 2 <= history_length <= MAX_HISTORY:
        raise SrfabricError("history-length", f"must be in 2..{MAX_HISTORY} (one 64-bit window), got "
                                              f"{history_length}")
    if not 1 <= reset_ms <= 3_600_000:
        raise SrfabricError("reset-ms", f"must be in 1..3600000, got {reset_ms}")


def recovery_settings(history_length: int, reset_ms: int) -> bytes:
    """The ``frer_config`` value for these settings (checked), the reset time in the kernel's ticks: what the
    end-system eliminator and the XDP switch's egress edge both read."""
    check_settings(history_length, reset_ms)
    return CONFIG.pack(history_length, 0, ms_to_ticks(reset_ms, kernel_hz()))


@dataclass
class FrerEliminator:
    """The loaded program, pinned as ``name``; ``attach``/``detach`` an interface, ``counters()`` per stream."""

    loaded: LoadedObject
    history_length: int = 32
    reset_ms: int = 2000

    @classmethod
    def load(cls, name: str, history_length: int = 32, reset_ms: int = 2000) -> FrerEliminator:
        settings = recovery_settings(history_length, reset_ms)  # before loading: an error leaves nothing pinned
        made = cls(load("frer", name), history_length, reset_ms)
        made.loaded.map("frer_config").update(struct.pack("<I", 0), settings)
        return made

    @classmethod
    def pinned(cls, name: str) -> FrerEliminator:
        """The recovery tables of an object pinned as ``name`` already: an XDP switch's (its agent's ``--name``),
        whose egress edge eliminates; its settings read back from it."""
        folder = PIN_ROOT / name
        if not (folder / "maps" / "frer_slots").exists():
            raise SrfabricError("switch", f"nothing pinned as {name} holds FRER recovery tables ({folder})")
        loaded = LoadedObject("mac-nibble", folder)
        raw = loaded.map("frer_config").lookup(struct.pack("<I", 0))
        history, _, ticks = CONFIG.unpack(raw) if raw else (0, 0, 0)
        if not 2 <= history <= MAX_HISTORY:
            raise SrfabricError("switch", f"{name} has no FRER settings (its agent runs a codec without R-TAGs)")
        # The reset time as the switch keeps it: whole ticks, so what was asked rounded up to a tick.
        return cls(loaded, history, max(1, (ticks - 1) * 1000 // kernel_hz()))

    def program(self, queues: int = 1) -> Path:
        """The program for an interface with ``queues`` receive queues: without a lock for one (NAPI runs it one
        frame at a time), with a lock per stream for several."""
        return self.loaded.program("frer_eliminate_one_queue" if queues == 1 else "frer_eliminate")

    def attach(self, ifname: str, pid: int | None = None, off: bool = False) -> None:
        """Attach in native mode (veth has it), or detach (``off``); ``pid``: the interface is in that process's
        network namespace (a Mininet host's: entered from here, where the pinned program is in sight)."""
        where = ["nsenter", f"--net=/proc/{pid}/ns/net"] if pid else []
        if off:
            subprocess.run([*where, "ip", "link", "set", "dev", ifname, "xdpdrv", "off"], capture_output=True)
            return
        shown = subprocess.run([*where, "ip", "-d", "link", "show", "dev", ifname], capture_output=True, text=True)
        queues = re.search(r"numrxqueues (\d+)", shown.stdout)
        program = self.program(int(queues.group(1)) if queues else 2)
        done = subprocess.run([*where, "ip", "-force", "link", "set", "dev", ifname, "xdpdrv", "pinned",
                               str(program)], capture_output=True, text=True)
        if done.returncode != 0:
            raise SrfabricError("xdp", f"attaching FRER elimination to {ifname}: {done.stderr.strip()}")

    def streams(self) -> list[dict[str, Any]]:
        """Each stream the program holds: IPv4 addresses, UDP ports and counters by ``ieee802-dot1cb-frer`` leaf
        (the items of a report to the API, ``api.frer_counters.EliminatedStream``)."""
        slots = self.loaded.map("frer_slots")
        found = []
        for index in range(SLOTS):
            value = slots.lookup(struct.pack("<I", index))
            if value is None:
                continue
            fields = STATE.unpack_from(value)
            if not fields[-1]:
                continue
            src, dst, sport, dport = fields[12:16]
            found.append({"source": str(ipaddress.IPv4Address(src)), "source_port": int.from_bytes(sport, "big"),
                          "destination": str(ipaddress.IPv4Address(dst)),
                          "destination_port": int.from_bytes(dport, "big"),
                          "counters": {COUNTERS[short]: count for short, count in zip(ORDER, fields[6:12],
                                                                                      strict=True)}})
        return found

    def counters(self) -> dict[str, dict[str, int]]:
        """Each stream's recovery counters (``source:port > destination:port``), by their ``ieee802-dot1cb-frer``
        leaf names."""
        return {f"{s['source']}:{s['source_port']} > {s['destination']}:{s['destination_port']}": s["counters"]
                for s in self.streams()}

    def report(self, interface: str) -> dict[str, Any]:
        """What ``srfabric frer eliminate`` sends the API for ``interface``: the settings and every stream."""
        return {"interface": interface, "history_length": self.history_length, "reset_ms": self.reset_ms,
                "streams": self.streams()}

    def unmatched(self) -> int:
        """R-TAG frames passed untouched because another stream held their slot."""
        return sum_u64(self.loaded.map("frer_unmatched").lookup_per_cpu(struct.pack("<I", 0)))

    def unload(self) -> None:
        self.loaded.unload()


def rtag(sequence: int, inner: bytes) -> bytes:
    """``inner`` (an Ethernet frame) with an R-TAG holding ``sequence`` after its MAC addresses.

    >>> rtag(5, bytes(12) + b"\\x08\\x00" + b"ip")[12:20].hex()
    'f1c1000000050800'
    """
    if not 0 <= sequence < SEQ_SPACE:
        raise SrfabricError("sequence", f"must be in 0..{SEQ_SPACE - 1}, got {sequence}")
    return inner[:12] + struct.pack("!HHH", 0xF1C1, 0, sequence) + inner[12:]
