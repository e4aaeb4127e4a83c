"""Walk a real frame through a fabric of XDP switches with BPF_PROG_TEST_RUN (root, no devices).

Each switch gets its own loaded object filled from ``xdp_tables`` of its
compiled entries; a frame is run through the program its arrival port has
(``sr_fabric`` on trusted ports, ``sr_host`` on host ports), its egress port is
read from the counters and followed along the fabric's links, through service
functions (which return the frame unchanged on their egress port) to a host.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from types import TracebackType

from srfabric.errors import SrfabricError
from srfabric.model.fabric import Fabric
from srfabric.rules.entries import FlowEntry, GroupEntry
from srfabric.xdp import layout
from srfabric.xdp.loader import LoadedObject, load
from srfabric.xdp.probe import Probe
from srfabric.xdp.tables import XdpTables, xdp_tables

LO = 1  # test runs need a real ifindex; which port it stands for is set before every run


def fill(obj: LoadedObject, tables: XdpTables) -> None:
    """Write one switch's map contents into a loaded object."""
    for index, packed in enumerate(tables.actions):
        obj.map("sr_actions").update(layout.u32(index), packed)
    for key, index in tables.routes.items():
        obj.map("sr_routes").update(key, layout.u32(index))
    for slot in range(layout.WILD_RULES):
        rule = tables.wild[slot] if slot < len(tables.wild) else bytes(40)
        obj.map("sr_wild").update(layout.u32(slot), rule)
    for key, value in tables.restore.items():
        obj.map("sr_restore").update(key, value)
    for key, value in tables.deliver.items():
        obj.map("sr_deliver").update(key, value)


@dataclass
class XdpWalk:
    functions: list[str] = field(default_factory=list)
    delivered: list[tuple[str, bytes]] = field(default_factory=list)
    switches: list[int] = field(default_factory=list)
    verdicts: list[str] = field(default_factory=list)


class XdpFabric:
    """One loaded XDP object per switch of ``fabric``; leave the context to unload them."""

    def __init__(self, fabric: Fabric, tables: dict[int, list[FlowEntry]], codec: str,
                 groups: dict[int, list[GroupEntry]] | None = None) -> None:
        self.fabric = fabric
        self.codec = codec
        self.entries = tables
        self.groups = groups or {}
        self.objects: dict[int, LoadedObject] = {}
        self.trusted: dict[int, set[int]] = {}

    def __enter__(self) -> XdpFabric:
        try:
            for dpid, entries in self.entries.items():
                translated = xdp_tables(entries, self.groups.get(dpid, ()))
                obj = load(self.codec, f"walk-{os.getpid()}-{dpid:x}")
                self.objects[dpid] = obj
                for port in range(1, 256):
                    obj.add_port(port, LO)
                fill(obj, translated)
                self.trusted[dpid] = translated.trusted_ports
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        for obj in self.objects.values():
            obj.unload()
        self.objects.clear()

    def send(self, frame: bytes, dpid: int, in_port: int, max_hops: int = 64) -> XdpWalk:
        result = XdpWalk()
        here, port = dpid, in_port
        for _ in range(max_hops):
            result.switches.append(here)
            obj = self.objects[here]
            obj.map("sr_ifports").update(layout.u32(LO), layout.u32(port))
            program = "sr_fabric" if port in self.trusted[here] else "sr_host"
            out = Probe(obj, program, ingress_ifindex=LO).run(frame)
            result.verdicts.append(out.reason or "?")
            if out.action != "redirect" or out.port is None:
                return result
            frame = out.frame
            far = self.fabric.far_end((here, out.port))
            if far is None:
                return result
            if far.host is not None:
                result.delivered.append((far.host, frame))
                return result
            if far.function is not None:
                result.functions.append(far.function)
            assert far.arrival is not None  # only a host ends a frame's way
            here, port = far.arrival
        raise SrfabricError("walk", f"frame still moving after {max_hops} switches (loop?)")
