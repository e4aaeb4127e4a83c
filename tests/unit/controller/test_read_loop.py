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
    from srfabric.bench.of_emulator import packet_in as packet_in_bytes
    from srfabric.southbound.channel import SwitchConnection

    spec = fat_tree(4)

    class Writer:
        def __init__(self) -> None:
            self.written = bytearray()

        def write(self, data: bytes) -> None:
            self.written += data

    async def scenario() -> tuple[int, int, int]:
        controller = Controller(ControllerConfig(reactive=True))
        controller.fabric = spec.to_fabric()
        a = spec.hosts["h1"]
        reader = asyncio.StreamReader()
        conn = SwitchConnection(reader, Writer())  # type: ignore[arg-type]
        conn.dpid = spec.dpid(a.switch)
        conn.on_packet_in = controller.server.on_packet_in
        controller.switches[conn.dpid] = conn
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
