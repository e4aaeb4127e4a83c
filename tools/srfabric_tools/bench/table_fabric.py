"""Emulated switches that keep what they are sent, for the capacity benchmarks: each holds real flow tables
(``of_tables``: match, priority, idle timeout, flow-removed) and groups, and frames cross the fabric by them.

A packet-out's actions run at its switch (``output:TABLE`` submits the frame to the tables); a frame sent out of
a link port arrives at the far switch and is looked up there, and so on until it leaves on a host port. An entry
that sends to the controller makes a packet-in of the frame as it is then; a frame that matches nothing is
dropped (OpenFlow 1.3's table miss). A flow is set up when its frame leaves on its destination host's port:
whatever a controller installed, at the ingress alone or hop by hop, the whole path is covered, as on real
Open vSwitch (``bench capacity-ovs``). Floods go along a spanning tree, as in ``peer_following``.

The wire adds no delay: the next switch looks a frame up once the event loop has read what was already on the
channels (``call_soon``), so a flow-mod the controller wrote before its packet-out is in place.
"""

from __future__ import annotations

import asyncio
import struct
import time
from collections import deque
from collections.abc import Callable

from os_ken.ofproto import ofproto_v1_3 as ofp

from srfabric.errors import DecodingError, SrfabricError
from srfabric.model.topo import TopoSpec
from srfabric.rules.entries import Action, FlowEntry, GroupEntry
from srfabric.rules.openflow.wire import HEADER, PACKET_OUT_HEAD
from srfabric.xdp.of_messages import parse_group_mod, parse_packet_out
from srfabric_tools.bench.flow_mod_read import CACHED, FIXED, MATCH_AT, FlowModReader
from srfabric_tools.bench.of_emulator import (
    FLOW_PORT,
    EmulatedFabric,
    EmulatedSwitch,
    message,
    packet_in,
    packet_out_frame,
)
from srfabric_tools.bench.of_tables import FlowTables, Held
from srfabric_tools.bench.peer_following import spanning_tree
from srfabric_tools.bench.wire_frames import decode, encode
from srfabric_tools.simulate import FakeSwitch, Packet, SwitchResult

FLOW_REMOVED = struct.Struct("!QHBBIIHHQQ")
MAX_HOPS = 16  # a frame still moving after this many switches is dropped
SLICE = 200  # queued messages a switch handles per turn of the event loop
LLDP = b"\x88\xcc"
SPECIAL = {ofp.OFPP_TABLE, ofp.OFPP_FLOOD, ofp.OFPP_ALL, ofp.OFPP_IN_PORT, ofp.OFPP_CONTROLLER}


def is_lldp(packet_out: memoryview) -> bool:
    """Whether a packet-out carries an LLDP frame (its EtherType)."""
    return packet_out_frame(packet_out)[12:14] == LLDP


class TableSwitch(EmulatedSwitch):
    """An emulated switch with flow tables and groups.

    Table changes are applied a slice at a time between turns of the event loop, in order with everything sent
    after them (a barrier is answered once all before it is applied), while LLDP and echoes are answered as they
    are read: one process emulates hundreds of switches, and a k=16 first sync (145,000 entries) would otherwise
    hold every LLDP answer back for seconds, so that the controller took the links down for silence.
    """

    def __init__(self, fabric: TableFabric, name: str) -> None:
        super().__init__(fabric, name)
        self.tables = FlowTables()
        self.pipeline = IndexedSwitch(self.tables, fabric.clock)
        self.queued: deque[tuple[int, int, bytes, int]] = deque()  # (kind, xid, message, read at) not yet handled
        self._applying = False

    def _handle(self, kind: int, xid: int, msg: memoryview, now: int) -> None:
        answer_now = kind == ofp.OFPT_ECHO_REQUEST or (
            kind == ofp.OFPT_PACKET_OUT and is_lldp(msg))
        if answer_now or (not self.queued and kind not in (ofp.OFPT_FLOW_MOD, ofp.OFPT_GROUP_MOD)):
            self._apply(kind, xid, msg, now)
            return
        self.queued.append((kind, xid, bytes(msg), now))
        if not self._applying:
            self._applying = True
            asyncio.get_running_loop().call_soon(self._apply_some)

    def _apply_some(self) -> None:
        for _ in range(min(SLICE, len(self.queued))):
            kind, xid, raw, now = self.queued.popleft()
            self._apply(kind, xid, memoryview(raw), now)
        if self.queued:
            asyncio.get_running_loop().call_soon(self._apply_some)
        else:
            self._applying = False

    def settle(self) -> None:
        """Apply everything still queued (before a frame is looked up, or the tables are read)."""
        while self.queued:
            kind, xid, raw, now = self.queued.popleft()
            self._apply(kind, xid, memoryview(raw), now)

    def _apply(self, kind: int, xid: int, msg: memoryview, now: int) -> None:
        if kind == ofp.OFPT_FLOW_MOD:
            self.fabric.tally.messages_in += 1
            self.fabric.tally.flow_mods += 1
            self.flow_mod(bytes(msg))
        elif kind == ofp.OFPT_GROUP_MOD:
            self.fabric.tally.messages_in += 1
            self.group_mod(bytes(msg))
        else:
            super()._handle(kind, xid, msg, now)

    def flow_mod(self, raw: bytes) -> None:
        """Apply one flow-mod; one that cannot be read is counted and changes nothing."""
        assert isinstance(self.fabric, TableFabric)
        try:
            mod = self.fabric.reader.read(raw)
        except DecodingError:  # a switch ignores a flow-mod it cannot read (the frames it meant go unset)
            return
        cookie, cookie_mask, *_, flags = FIXED.unpack_from(raw, HEADER.size)
        match_len = struct.unpack_from("!H", raw, MATCH_AT + 2)[0]
        raw_match = raw[MATCH_AT:MATCH_AT + (match_len + 7) // 8 * 8]
        entry, now = mod.entry, self.fabric.clock()
        if mod.command == ofp.OFPFC_ADD:
            self.tables.add(entry, flags, raw_match, now, cookie)
        elif mod.command in (ofp.OFPFC_MODIFY, ofp.OFPFC_MODIFY_STRICT):
            self.tables.modify(entry, mod.command == ofp.OFPFC_MODIFY_STRICT)
        elif mod.command in (ofp.OFPFC_DELETE, ofp.OFPFC_DELETE_STRICT):
            strict = mod.command == ofp.OFPFC_DELETE_STRICT
            for held in self.tables.delete(mod.table, entry.match, entry.priority if strict else None,
                                           cookie, cookie_mask):
                self.flow_removed(held, ofp.OFPRR_DELETE, now)

    def group_mod(self, raw: bytes) -> None:
        assert isinstance(self.fabric, TableFabric)
        try:
            mod = parse_group_mod(raw)
        except DecodingError:
            return
        if mod.command == ofp.OFPGC_DELETE:
            self.pipeline.groups.pop(mod.group.group_id, None)
        else:
            self.pipeline.groups[mod.group.group_id] = mod.group

    def flow_removed(self, held: Held, reason: int, now: float) -> None:
        """Say an entry went, if it asked to be told."""
        if not held.flags & ofp.OFPFF_SEND_FLOW_REM:
            return
        alive = max(0.0, now - held.added)
        entry = held.entry
        body = FLOW_REMOVED.pack(held.sent_cookie, entry.priority, reason, entry.table, int(alive),
                                 int(alive % 1 * 1e9), entry.idle_timeout, 0, held.packets, 0) + held.raw_match
        self.write(message(ofp.OFPT_FLOW_REMOVED, 0, body))


class IndexedSwitch(FakeSwitch):
    """``simulate.FakeSwitch``'s actions over :class:`FlowTables`' lookup."""

    def __init__(self, tables: FlowTables, clock: Callable[[], float]) -> None:
        super().__init__([])
        self.held, self.clock = tables, clock
        self.groups: dict[int, GroupEntry] = {}

    def lookup(self, table: int, packet: Packet, in_port: int) -> FlowEntry | None:
        return self.held.lookup(table, packet, in_port, self.clock())

    def act(self, actions: tuple[Action | None, ...], packet: Packet, in_port: int) -> SwitchResult:
        """A packet-out's actions on ``packet``."""
        result = SwitchResult([], False, [])
        for action in actions:
            if action is not None:
                self._apply(action, packet, in_port, result)
        return result


class TableFabric(EmulatedFabric):
    """An emulated fabric of :class:`TableSwitch`; ``clock`` in seconds (monotonic unless a test steps it)."""

    def __init__(self, spec: TopoSpec, seed: int = 1, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(spec, seed)
        self.clock = clock
        self.reader = FlowModReader()
        self.out_actions: dict[bytes, tuple[Action | None, ...]] = {}
        self.tree = spanning_tree(spec)
        self.host_at = {(host.switch, host.port): host for host in spec.hosts.values()}
        self._sweeper: asyncio.Task[None] | None = None
        self.heard: set[str] = set()  # switches whose controller sent LLDP out of them: it hears them now

    def make_switch(self, name: str) -> TableSwitch:
        return TableSwitch(self, name)

    def switch(self, name: str) -> TableSwitch:
        found = self.switches[name]
        assert isinstance(found, TableSwitch)
        return found

    async def connect(self, port: int, timeout: float = 60.0, refused_for: float = 30.0) -> None:
        await super().connect(port, timeout, refused_for)
        self._sweeper = asyncio.get_running_loop().create_task(self._sweep())

    async def _sweep(self) -> None:
        """Idle timeouts, checked each second as a switch's revalidator would."""
        while True:
            await asyncio.sleep(1.0)
            now = self.clock()
            for name in self.switches:
                switch = self.switch(name)
                for held in switch.tables.expire(now):
                    switch.flow_removed(held, ofp.OFPRR_IDLE_TIMEOUT, now)

    def close(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
        super().close()

    def packet_out(self, switch: EmulatedSwitch, msg: memoryview, now: int) -> None:
        if is_lldp(msg):  # LLDP crosses its link to the controller, as before
            if switch.name not in self.heard:  # the controller took the switch: its hosts speak again (as a
                self.heard.add(switch.name)  # host's ARP would), heard now, not dropped as before it was taken
                self.announce_hosts(switch.name)
            super().packet_out(switch, msg, now)
            return
        try:
            in_port, actions, data = self._packet_out(msg)
            packet, rest = decode(data)
            result = self.switch(switch.name).pipeline.act(actions, packet, in_port)
        except (DecodingError, SrfabricError):
            return
        self._carry(switch.name, in_port, packet, result, rest, 0)

    def _packet_out(self, msg: memoryview) -> tuple[int, tuple[Action | None, ...], bytes]:
        """A packet-out's in-port, actions (os-ken reads each distinct list once) and frame."""
        *_, in_port, actions_len = PACKET_OUT_HEAD.unpack_from(msg)
        end = PACKET_OUT_HEAD.size + actions_len
        key = bytes(msg[PACKET_OUT_HEAD.size:end])
        actions = self.out_actions.get(key)
        if actions is None:
            actions = parse_packet_out(bytes(msg)).actions
            if len(self.out_actions) >= CACHED:
                self.out_actions.clear()
            self.out_actions[key] = actions
        return in_port, actions, bytes(msg[end:])

    def arrive(self, name: str, in_port: int, packet: Packet, rest: bytes, hops: int) -> None:
        """A frame on ``name``'s ``in_port``: looked up in its tables."""
        if name not in self.switches:
            return
        self.switch(name).settle()
        try:
            result = self.switch(name).pipeline.process(packet, in_port)
        except SrfabricError:  # an action the frame cannot take (a VLAN set on an untagged frame...): dropped
            return
        self._carry(name, in_port, packet, result, rest, hops)

    def _carry(self, name: str, in_port: int, arrived: Packet, result: SwitchResult, rest: bytes, hops: int
               ) -> None:
        """Where a switch's actions send a frame: the controller (the frame as it arrived), its own tables,
        other ports."""
        if result.to_controller:
            self.switches[name].write(packet_in(in_port, encode(arrived, rest)))
        for port, sent in result.outputs:
            if port == ofp.OFPP_TABLE:
                self.arrive(name, in_port, sent, rest, hops)
                continue
            for out in self._ports(name, port, in_port):
                self._leave(name, out, sent, rest, hops)

    def _ports(self, name: str, port: int, in_port: int) -> list[int]:
        if port == ofp.OFPP_IN_PORT:
            return [in_port]
        if port in (ofp.OFPP_FLOOD, ofp.OFPP_ALL):
            return [p for p in sorted(self.tree[name]) if p != in_port]
        return [] if port in SPECIAL else [port]

    def _leave(self, name: str, port: int, packet: Packet, rest: bytes, hops: int) -> None:
        host = self.host_at.get((name, port))
        if host is not None:  # a flow's frame on its destination's port: set up
            if packet.eth_dst == host.mac and packet.ip_proto == 17 and packet.tp_dst == FLOW_PORT:
                sent = self.tally.sent.pop((packet.ipv4_src.to_bytes(4, "big"), packet.tp_src), None)
                if sent is not None:
                    self.tally.setup_ns.append(time.perf_counter_ns() - sent)
            return
        far = self.peer.get((self.spec.switches[name].dpid, port))
        if far is not None and hops < MAX_HOPS:  # else it leads nowhere, or has gone round too long: dropped
            asyncio.get_running_loop().call_soon(self.arrive, far[0], far[1], packet, rest, hops + 1)
