"""The read loop hands every packet-in of a read (split across reads too) to the controller's plain-call
handler: new flows are set up without a coroutine each."""

from __future__ import annotations

import asyncio
from typing import Any

from srfabric.controller.config import ControllerConfig
from srfabric.controller.controller import Controller
from srfabric.model.topo import fat_tree
from srfabric.xdp.frames import udp_frame


def test_packet_ins_read_from_a_switch_set_flows_up_without_a_coroutine_each() -> None:
    """The controller's server hands each connection the plain-call packet-in handler, and the read loop uses
    it for every packet-in of a read (split across reads too)."""
    from srfabric.southbound.channel import SwitchConnection
    from srfabric_tools.bench.of_emulator import packet_in as packet_in_bytes

    spec = fat_tree(4)

    class Writer:
        def __init__(self) -> None:
            self.written = bytearray()

        def write(self, data: bytes) -> None:
            self.written += data

        def is_closing(self) -> bool:
            return False

    async def scenario() -> tuple[int, int, int]:
        controller = Controller(ControllerConfig(reactive=True))
        controller.fabric = spec.to_fabric()
        a = spec.hosts["h1"]
        reader = asyncio.StreamReader()
        conn = SwitchConnection(reader, Writer())  # type: ignore[arg-type]
        conn.dpid = spec.dpid(a.switch)
        conn.on_packet_in = controller.server.on_packet_in
        controller.switches[conn.dpid] = conn
        controller.core.taken.update(spec.dpid(name) for name in spec.switches)  # MASTER of every switch
        raw = b"".join(packet_in_bytes(a.port, udp_frame(spec.hosts[d].mac, a.mac, a.ip, spec.hosts[d].ip, 4000, 5009))
                       for d in ("h2", "h3", "h16"))
        awaited: list[Any] = []

        async def deliver(_: Any, msg: Any) -> None:
            awaited.append(msg)

        reading = asyncio.create_task(conn.read_loop(deliver))
        reader.feed_data(raw[:50])  # a message cut across two reads
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        reader.feed_data(raw[50:])
        reader.feed_eof()
        await reading
        await asyncio.sleep(0)  # the turn's write
        return len(controller.setups), len(awaited), conn.counters.messages_sent

    setups, awaited, sent = asyncio.run(scenario())
    assert (setups, awaited, sent) == (3, 0, 6)  # a flow-mod and a packet-out each, none through ``deliver``


def test_mutated_controller_messages_from_a_switch_are_never_parsed() -> None:
    """3,000 forged flow-mods, group-mods and packet-outs with random bodies, then an echo request: the read loop
    ignores the forged ones without parsing them (os-ken's parsers of those can loop) and still answers the echo."""
    import random
    import struct

    from os_ken.ofproto import ofproto_v1_3 as ofp

    from srfabric.southbound.channel import SwitchConnection

    class Writer:
        def __init__(self) -> None:
            self.written = bytearray()

        def write(self, data: bytes) -> None:
            self.written += data

        def is_closing(self) -> bool:
            return False

    rng = random.Random(7)
    forged = bytearray()
    for index in range(3000):
        body = rng.randbytes(rng.randrange(0, 200))
        kind = (ofp.OFPT_FLOW_MOD, ofp.OFPT_GROUP_MOD, ofp.OFPT_PACKET_OUT)[index % 3]
        forged += struct.pack("!BBHI", 4, kind, 8 + len(body), index) + body
    forged += struct.pack("!BBHI", 4, ofp.OFPT_ECHO_REQUEST, 8, 99999)

    async def scenario() -> bytes:
        reader = asyncio.StreamReader()
        writer = Writer()
        conn = SwitchConnection(reader, writer)  # type: ignore[arg-type]
        reader.feed_data(bytes(forged))
        reader.feed_eof()

        async def deliver(*_: Any) -> None:
            raise AssertionError("a forged message was delivered")

        await asyncio.wait_for(conn.read_loop(deliver), 10)
        await asyncio.sleep(0)
        return bytes(writer.written)

    written = asyncio.run(scenario())
    assert written[1] == ofp.OFPT_ECHO_REPLY and struct.unpack("!I", written[4:8])[0] == 99999
