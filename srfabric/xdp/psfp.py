"""Per-stream filtering and policing on the XDP edge: each protected stream's filter, gate and meter as an entry
of the edge object's ``sr_psfp`` map (``bpf/include/sr_psfp.h``), keyed by the classifier key of the stream's
frames on the port its talker sends into, and its counters read back under ``ieee802-dot1q-psfp``'s names.

Examples
--------
>>> from srfabric.tsn.protect.psfp import FlowMeter, GateInterval, Identity, StreamGate, StreamProtection
>>> gate = StreamGate(1_000_000, 5, (GateInterval(True, 30_000), GateInterval(False, 970_000)))
>>> plan = StreamProtection(9, "cam", "s1", "h1", Identity("10.0.0.1", "10.0.0.3", udp_dst=5001), 7, 200, gate,
...                         FlowMeter(1_776_000, 444))
>>> psfp_key(plan, in_port=3).hex()  # any source port: keyed with port 0
'0a0000010a0000030000138911010300'
>>> value = psfp_entry(plan)
>>> len(value), ENTRY.unpack(value)[1:4]
(376, (9, 200, 1))
"""

from __future__ import annotations

import socket
import struct

from srfabric.errors import SrfabricError
from srfabric.tsn.protect.psfp import METERED_OVERHEAD_BYTES, StreamProtection
from srfabric.xdp import layout
from srfabric.xdp.loader import PIN_ROOT, LoadedObject

WINDOWS = 16  # SR_PSFP_WINDOWS
NS_BITS = 8 * 1_000_000_000  # SR_NS_BITS: a byte in bit-nanoseconds per second
# lock, handle, max SDU, windows; rate, bucket, fill time, base time, cycle; the windows' starts and ends; tokens,
# last check; the six counters in the order of policing.COUNTERS' C fields (matching, passing, not passing, red,
# passing SDU, not passing SDU)
ENTRY = struct.Struct(f"<IIII5Q{WINDOWS}Q{WINDOWS}QQQ6Q")
MAP = "sr_psfp"
assert METERED_OVERHEAD_BYTES == 22  # SR_METERED_OVERHEAD


def psfp_key(plan: StreamProtection, in_port: int) -> bytes:
    """The classifier key the edge computes for the stream's frames on OpenFlow port ``in_port``."""
    identity = plan.identity
    return layout.flow_key(identity.ipv4_source, identity.ipv4_destination, identity.udp_src or 0,
                           identity.udp_dst or 0, 17, layout.STAGE_HOST_IN, in_port)


def psfp_entry(plan: StreamProtection) -> bytes:
    """The map value: filter, gate and a full bucket; ``SrfabricError`` naming the stream when its gate has more
    windows than the program holds."""
    windows = plan.gate.open_windows()
    if len(windows) > WINDOWS:
        raise SrfabricError(f"stream {plan.stream}", f"a gate open {len(windows)} times per cycle, over the "
                                                     f"{WINDOWS} the XDP edge holds")
    meter = plan.meter
    bucket = meter.cbs_bytes * NS_BITS
    fill_ns = -(-bucket // meter.cir_bps) if meter.cir_bps else 2**63
    starts = [start for start, _ in windows] + [0] * (WINDOWS - len(windows))
    ends = [end for _, end in windows] + [0] * (WINDOWS - len(windows))
    return ENTRY.pack(0, plan.handle, plan.max_sdu_bytes, len(windows), meter.cir_bps, bucket, fill_ns,
                      plan.gate.base_time_ns, plan.gate.cycle_ns, *starts, *ends, bucket, 0, *([0] * 6))


SETTINGS = slice(4, ENTRY.size - 8 * 8)  # the handle to the windows' ends (not tokens, last check, counters)
COUNTED = slice(ENTRY.size - 6 * 8, ENTRY.size)  # the six counters


def install(obj: LoadedObject, plans: list[tuple[StreamProtection, int]]) -> int:
    """Write each (plan, talker's port) into ``obj``'s map, where the entry held differs in its settings: a stream
    whose filter, gate or meter changed starts with a full bucket and keeps its counters (frames the edge counts
    between the read and the write are lost to them). Returns the entries written."""
    table = obj.map(MAP)
    written = 0
    for plan, in_port in plans:
        key, value = psfp_key(plan, in_port), psfp_entry(plan)
        held = table.lookup(key)
        if held is not None and held[SETTINGS] == value[SETTINGS]:
            continue
        if held is not None:
            value = value[:COUNTED.start] + held[COUNTED]
        table.update(key, value)
        written += 1
    return written


def converge(obj: LoadedObject, placed: list[tuple[StreamProtection, int]]) -> tuple[int, int]:
    """Hold exactly the (plan, talker's port) ``placed`` in ``obj``'s map; the entries written and removed."""
    written = install(obj, placed)
    return written, keep_only(obj, {psfp_key(plan, in_port) for plan, in_port in placed})


def keep_only(obj: LoadedObject, keys: set[bytes]) -> int:
    """Remove every entry whose key is not in ``keys``; returns how many went."""
    table = obj.map(MAP)
    gone = [key for key in table.all_keys() if key not in keys]
    for key in gone:
        table.delete(key)
    return len(gone)


def remove(obj: LoadedObject, plan: StreamProtection, in_port: int) -> bool:
    return obj.map(MAP).delete(psfp_key(plan, in_port))


def counters(obj: LoadedObject) -> dict[int, dict[str, int]]:
    """Each protected stream's counters by handle, under ``ieee802-dot1q-psfp``'s names."""
    table = obj.map(MAP)
    out = {}
    for key in table.all_keys():
        raw = table.lookup(key)
        if raw is None:  # removed since the keys were read
            continue
        fields = ENTRY.unpack(raw[:ENTRY.size])
        matching, _, not_passing, red, _, oversize = fields[-6:]  # the program counts no passing frame itself
        out[fields[1]] = {"matching-frames-count": matching, "passing-frames-count": matching - oversize - not_passing,
                          "not-passing-frames-count": not_passing, "red-frames-count": red,
                          "passing-sdu-count": matching - oversize, "not-passing-sdu-count": oversize}
    return out


class PinnedEdge:
    """The policing table of an XDP switch already running (pinned as its agent's ``--name``)."""

    def __init__(self, name: str) -> None:
        folder = PIN_ROOT / name
        if not (folder / "maps" / MAP).exists():
            raise SrfabricError("switch", f"nothing pinned as {name} holds a policing table ({folder}): is its "
                                          f"agent running a current build?")
        self.name = name
        self.obj = LoadedObject("mac-nibble", folder)  # only its maps are used: the codec does not matter

    def in_port(self, interface: str) -> int:
        """The OpenFlow port the switch numbers ``interface`` with; ``SrfabricError`` naming it otherwise."""
        try:
            index = socket.if_nametoindex(interface)
        except OSError:
            raise SrfabricError("input-port", f"{interface} is not an interface here") from None
        raw = self.obj.map("sr_ifports").lookup(layout.u32(index))
        if raw is None:
            raise SrfabricError("input-port", f"{interface} is not a port of switch {self.name}")
        return int(struct.unpack("<I", raw[:4])[0])

    def converge(self, plans: list[StreamProtection]) -> tuple[int, int]:
        """Hold exactly ``plans`` (each plan's ``talker`` is the interface its frames come in by); returns the
        entries written and removed."""
        return converge(self.obj, [(plan, self.in_port(plan.talker)) for plan in plans])

    def report(self) -> dict[str, object]:
        """The counters as the API takes them (``psfp_book.PsfpReport``, without the bridge)."""
        return {"streams": [{"handle": handle, "counters": counts}
                            for handle, counts in sorted(counters(self.obj).items())]}
