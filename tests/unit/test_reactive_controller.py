"""The reactive controller with scripted switches (no root, no switch): a new flow whose later switches
need entries first does not hold up its switch's read loop (two edges that each wait for the other's barrier
reply would otherwise wait forever), and an entry the switch let go after its idle timeout is forgotten."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence
from typing import Any

from srfabric.controller.controller import Controller, ControllerConfig
from srfabric.model.topo import fat_tree
from srfabric.southbound.wire import PacketIn
from srfabric.xdp.frames import udp_frame


class HeldSwitch:
    """Records what is sent; every barrier is answered only when the test says."""

    def __init__(self, dpid: int, answer: asyncio.Event) -> None:
        self.dpid = dpid
        self.sent: list[Any] = []
        self.answer = answer

    def send(self, msg: Any) -> int:
        return self.send_all((msg,))[0]

    def send_all(self, msgs: Sequence[Any]) -> list[int]:
        self.sent.extend(msgs)
        return list(range(len(self.sent) - len(msgs), len(self.sent)))

    def start_barrier(self, timeout: float = 10.0, before: Sequence[Any] = ()) -> Awaitable[None]:
        self.sent.extend(before)

        async def reply() -> None:
            await self.answer.wait()

        return reply()


def packet_in(spec: Any, source: str, destination: str, sport: int) -> PacketIn:
    a, b = spec.hosts[source], spec.hosts[destination]
    frame = udp_frame(b.mac, a.mac, a.ip, b.ip, sport, 5009)
    return PacketIn(spec.hosts[source].port, frame, 0, 0, 0, 32 + len(frame), 0)


def test_two_edges_waiting_for_each_other_both_finish() -> None:
    spec = fat_tree(4)

    async def scenario() -> tuple[int, int, int]:
        answer = asyncio.Event()
        controller = Controller(ControllerConfig(steering="hop-by-hop", reactive=True))
        controller.fabric = spec.to_fabric()
        switches = {sw.dpid: HeldSwitch(sw.dpid, answer) for sw in spec.switches.values()}
        controller.switches.update(switches)  # type: ignore[arg-type]
        a, b = spec.hosts["h1"], spec.hosts["h16"]
        ingress_a, ingress_b = switches[spec.dpid(a.switch)], switches[spec.dpid(b.switch)]
        # Each handler returns with its barriers still unanswered (it would hang here before the fix).
        await asyncio.wait_for(controller._on_message(ingress_a, packet_in(spec, "h1", "h16", 4000)), 1)  # type: ignore[arg-type]
        await asyncio.wait_for(controller._on_message(ingress_b, packet_in(spec, "h16", "h1", 4001)), 1)  # type: ignore[arg-type]
        waiting = len(controller.setups)
        answer.set()
        for _ in range(10):
            await asyncio.sleep(0)
        outs = sum(1 for sw in (ingress_a, ingress_b) for msg in sw.sent if type(msg).__name__ == "PackedMessage"
                   and msg.name == "OFPPacketOut")
        return waiting, len(controller.setups), outs

    waiting, done, packet_outs = asyncio.run(scenario())
    assert (waiting, done, packet_outs) == (0, 2, 2)


def test_an_entry_the_switch_let_go_is_forgotten_and_not_put_back() -> None:
    from os_ken.ofproto import ofproto_v1_3_parser as parser

    from srfabric.southbound.ofbind import bind_match, wire_cookie

    spec = fat_tree(4)

    async def scenario() -> tuple[int, int, int, int]:
        answer = asyncio.Event()
        answer.set()
        controller = Controller(ControllerConfig(reactive=True, flow_idle_timeout=5))
        controller.fabric = spec.to_fabric()
        switches = {sw.dpid: HeldSwitch(sw.dpid, answer) for sw in spec.switches.values()}
        controller.switches.update(switches)  # type: ignore[arg-type]
        ingress = switches[spec.dpid(spec.hosts["h1"].switch)]
        await controller._on_message(ingress, packet_in(spec, "h1", "h16", 4000))  # type: ignore[arg-type]
        (entry,) = controller.flows[ingress.dpid].values()
        mod = next(msg for msg in ingress.sent if getattr(msg, "name", "") == "OFPFlowMod")
        idle, flags = int.from_bytes(mod.buf[26:28], "big"), int.from_bytes(mod.buf[44:46], "big")
        stranger = parser.OFPFlowRemoved(None, cookie=wire_cookie(entry) ^ 1, priority=entry.priority, reason=0,
                                         table_id=entry.table, match=bind_match(entry.match))
        await controller._on_message(ingress, stranger)  # type: ignore[arg-type]
        kept = len(controller.flows[ingress.dpid])
        removed = parser.OFPFlowRemoved(None, cookie=wire_cookie(entry), priority=entry.priority, reason=0,
                                        table_id=entry.table, match=bind_match(entry.match))
        await controller._on_message(ingress, removed)  # type: ignore[arg-type]
        return idle, flags, kept, len(controller.flows[ingress.dpid]) + len(controller.installed[ingress.dpid])

    idle, flags, kept, left = asyncio.run(scenario())
    assert (idle, flags) == (5, 1)  # idle timeout and OFPFF_SEND_FLOW_REM on the wire
    assert kept == 1 and left == 0  # another entry's removal changes nothing; its own removal forgets it


def test_a_lost_link_drops_the_reactive_flows_that_crossed_it_and_only_those() -> None:
    spec = fat_tree(4)

    async def scenario() -> tuple[set[Any], set[Any], set[Any]]:
        answer = asyncio.Event()
        answer.set()
        controller = Controller(ControllerConfig(steering="hop-by-hop", reactive=True))
        controller.fabric = spec.to_fabric()
        switches = {sw.dpid: HeldSwitch(sw.dpid, answer) for sw in spec.switches.values()}
        controller.switches.update(switches)  # type: ignore[arg-type]
        for sport, (a, b) in enumerate([("h1", "h16"), ("h1", "h2"), ("h5", "h16")], start=4000):
            ingress = switches[spec.dpid(spec.hosts[a].switch)]
            await controller._on_message(ingress, packet_in(spec, a, b, sport))  # type: ignore[arg-type]
            for _ in range(5):
                await asyncio.sleep(0)
        before = set(controller._flow_links)
        lost = sorted(max(controller._flow_links.values(), key=len))[1]  # a link inside h1 -> h16's route
        ends = {lost, controller.fabric.links[lost]}
        crossing = {key for key, links in controller._flow_links.items() if links & ends}
        controller._port_status(*lost, deleted=False, down=True)
        after = {(dpid, key) for dpid, flows in controller.flows.items() for key in flows}
        assert after == set(controller._flow_links)
        return before, crossing, after

    before, crossing, after = asyncio.run(scenario())
    assert crossing and after and after == before - crossing


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
