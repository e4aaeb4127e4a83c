"""The switches' side of the controller's shell: the OpenFlow server, one connection per switch, controller
roles when several instances share the switches, and each switch event handed to the decision core, whose
answer is written back (``do``). Asks for a sync through the events it is given.

Which switches an instance is MASTER of (``owns``): the leader, every switch that no other live instance
claims as its edge; any instance, the edges it claims itself (``srfabric serve --edges``). It holds the others
as SLAVE and, when instances share the fabric, still hears their topology frames and port changes, so every
instance knows the whole fabric and computes the same tables; each sends only to its own switches.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from os_ken.ofproto import ofproto_v1_3 as ofp
from os_ken.ofproto import ofproto_v1_3_parser as parser

from srfabric.controller.config import EntryStats
from srfabric.controller.core import ControllerCore
from srfabric.controller.flows import NewFlow
from srfabric.controller.outbox import Effects
from srfabric.controller.taking import STALE, read_back, take_master, take_slave
from srfabric.errors import SrfabricError
from srfabric.logs import security_event
from srfabric.rules.entries import GroupEntry, Kind, kind_of
from srfabric.rules.openflow.readback import group_from_ofp, match_from_ofp
from srfabric.rules.openflow.wire import PacketIn
from srfabric.southbound.channel import SwitchConnection, SwitchError, port_down
from srfabric.southbound.server import OpenFlowServer

log = logging.getLogger("srfabric.controller.controller")  # one logger for the controller's own story


class SwitchChannels:
    def __init__(self, core: ControllerCore, dirty: asyncio.Event, urgent: asyncio.Event) -> None:
        self.core = core
        self.config = core.config
        self.switches: dict[int, SwitchConnection] = {}
        # A follower (another instance leads, ``srfabric/api/leadership.py``): its switches hold it as SLAVE,
        # it reads back and sends nothing, until ``lead``. A leader with roles takes them as MASTER.
        self.following = False
        self.generation: int | None = None  # the role generation it leads with (None: roles are not used)
        self.generation_seen: Callable[[], int] = lambda: 0  # a follower's SLAVE requests carry the leader's
        self.on_deposed: Callable[[str], None] | None = None  # told when a switch shows that another instance leads
        self.edges: frozenset[str] = frozenset()  # switches this instance is MASTER of even while following
        self.elsewhere: frozenset[str] = frozenset()  # switches other live instances claim as their edges
        self._rebalancing = asyncio.Lock()
        self.hold: asyncio.Event | None = None  # set: switches are held until it is (``hold_switches``)
        self.server = OpenFlowServer(self.on_ready, self.on_message, self.on_gone, self.config.clock,
                                     self.on_packet_in)
        self.dirty = dirty  # set: the tables need a sync
        self.urgent = urgent  # set: at once (a link or function went down), cutting the settling short
        self.packet_ins = 0  # every packet-in read (for /metrics)
        self.flow_tasks: set[asyncio.Task[None]] = set()  # new flows waiting for barriers (``after_barriers``)

    def do(self, effects: Effects, origin: SwitchConnection | None = None) -> None:
        """Write what the core asked for; a reply to a switch's own frame goes back on its connection. A switch
        this instance is not MASTER of is sent nothing: its MASTER answers it."""
        taken = self.core.taken
        for send in effects.sends:
            if send.dpid not in taken:
                continue
            conn = origin if origin is not None and origin.dpid == send.dpid else self.switches.get(send.dpid)
            if conn is not None and send.messages:
                conn.send_all(send.messages)
        if effects.urgent:
            self.urgent.set()
        if effects.sync:
            self.dirty.set()

    async def lldp_loop(self) -> None:
        while True:
            await asyncio.sleep(self.config.lldp_interval)
            if not self.core.taken:
                continue  # a SLAVE may not send packets: each switch's MASTER discovers from it
            try:
                effects = self.core.tick(self.config.clock())
            except Exception:  # noqa: BLE001 - one bad tick must not end discovery and aging for good
                log.exception("LLDP tick failed")
                continue
            for send in effects.sends:
                with contextlib.suppress(Exception):
                    self.do(Effects([send]))
            self.do(Effects(sync=effects.sync, urgent=effects.urgent))

    def hold_switches(self) -> asyncio.Event:
        """Switches finish their TLS and OpenFlow handshakes at once but are taken only once the returned event is
        set: a starting controller accepts them before its kept state is loaded, so none waits for a retry."""
        self.hold = asyncio.Event()
        return self.hold

    async def on_ready(self, conn: SwitchConnection) -> None:
        if self.hold is not None:
            await self.hold.wait()
        self.core.switch_named(conn.dpid, conn.bridge_name)
        dpid = conn.dpid
        if not self.owns(dpid):
            if not await take_slave(conn, self.role_generation, lambda: not self.owns(dpid)):
                return  # gone meanwhile
            if not self.owns(dpid):  # (``lead`` or new claims may have come meanwhile: then it is taken below)
                self.held_as_slave(conn)
                return
        await self.master_of(conn)

    @property
    def sharing(self) -> bool:
        """Whether instances share the fabric's switches (some are claimed as edges, here or elsewhere)."""
        return bool(self.edges or self.elsewhere)

    def owns(self, dpid: int) -> bool:
        """Whether this instance should be MASTER of switch ``dpid`` (see the module's docstring)."""
        switch = self.core.fabric.switches.get(dpid)
        name = switch.name if switch is not None else ""
        if name in self.edges:
            return True
        return not self.following and name not in self.elsewhere

    def role_generation(self) -> int:
        """The generation a role request carries: the leader's own, a follower's as last read."""
        return self.generation_seen() if self.following or self.generation is None else self.generation

    def held_as_slave(self, conn: SwitchConnection) -> None:
        """Keep a switch held as SLAVE: known, nothing sent; when instances share the fabric, its topology
        frames and port changes are still heard."""
        if self.sharing:
            conn.hear_as_slave()
        conn.taken_at = time.time()
        self.switches[conn.dpid] = conn
        self.core.switch_held(conn.dpid, conn.ports)

    async def master_of(self, conn: SwitchConnection) -> None:
        """Take the switch (as MASTER when roles are used), learn what it holds, and start discovering. A
        switch that calls this leader's generation stale has a newer leader: this one steps down. An instance
        that takes its edges while following uses the leader's generation as last read (a stale one is read
        again at the next ``rebalance``)."""
        try:
            await take_master(conn, self.role_generation() if self.following else self.generation)
        except SwitchError as error:
            if error.refused == STALE and not self.following:
                self.following = True
                if self.on_deposed is not None:
                    self.on_deposed(f"switch {conn.dpid:#x} holds a newer generation than {self.generation}")
            raise
        held, held_groups, held_meters = await read_back(conn)
        before = self.switches.get(conn.dpid)
        if before is not None and before is not conn:
            security_event(log, "switch_replaced", f"switch {conn.dpid:#x}: a second connection replaces the first",
                           dpid=f"{conn.dpid:#x}", peer=conn.peer, replaced=before.peer)
        conn.taken_at = time.time()
        self.switches[conn.dpid] = conn
        self.do(self.core.switch_ready(conn.dpid, conn.ports, held, held_groups, held_meters), conn)

    async def lead(self, generation: int) -> None:
        """Stop following: take every connected switch it owns now as MASTER with ``generation`` (its old
        leader, if still connected, becomes SLAVE), read back what each holds, and note the ports that are down
        now (a follower ignores port reports). The caller has given the controller its chains and streams
        before (a sync then sends only what differs)."""
        self.following, self.generation = False, generation
        held = [conn for conn in self.switches.values() if self.owns(conn.dpid)]
        for conn in held:  # back once read back: no sync pushes to a switch whose table is not known yet
            del self.switches[conn.dpid]
            self.core.switch_released(conn.dpid)
        results = await asyncio.gather(*(self.master_of(conn) for conn in held), return_exceptions=True)
        for conn, result in zip(held, results, strict=True):
            if isinstance(result, Exception):  # gone meanwhile: it is taken again when it connects again
                log.warning("switch %#x: not taken over: %s", conn.dpid, result)
        for dpid, conn in list(self.switches.items()):
            if dpid not in self.core.taken:
                continue
            for port, info in conn.ports.items():
                if info.down:
                    self.do(self.core.port_status(dpid, port, False, True, False))

    async def claims(self, elsewhere: frozenset[str]) -> None:
        """The edges other live instances claim now: let go of those this one is MASTER of, and take those
        left by an instance that ended (a take-over of its edges)."""
        self.elsewhere = elsewhere
        await self.rebalance()

    async def rebalance(self) -> None:
        """Be MASTER of exactly the connected switches this instance owns (``owns``)."""
        async with self._rebalancing:
            moves = []
            for dpid, conn in list(self.switches.items()):
                owned, taken = self.owns(dpid), dpid in self.core.taken
                if owned and not taken:
                    moves.append(self.master_of(conn))
                elif taken and not owned:
                    moves.append(self.let_go(conn))
            for result in await asyncio.gather(*moves, return_exceptions=True):
                if isinstance(result, Exception):  # gone, or a stale generation: the next round tries again
                    log.warning("switch not moved between instances: %s", result)

    async def let_go(self, conn: SwitchConnection) -> None:
        """Stop being MASTER of a switch another instance claims: no more syncs to it, held as SLAVE."""
        self.core.switch_released(conn.dpid)
        if await take_slave(conn, self.role_generation, lambda: not self.owns(conn.dpid)):
            self.held_as_slave(conn)

    async def on_gone(self, conn: SwitchConnection) -> None:
        if self.switches.get(conn.dpid) is conn:
            del self.switches[conn.dpid]
            self.do(self.core.switch_gone(conn.dpid))

    def on_packet_in(self, conn: SwitchConnection, msg: PacketIn) -> None:
        """A packet-in, as its switch's read loop reads it: a new flow (reactive), or a frame for discovery."""
        self.packet_ins += 1
        if self.switches.get(conn.dpid) is not conn:
            return  # a connection not taken yet says nothing
        if conn.dpid not in self.core.taken:  # its MASTER sets its new flows up; its frames tell the topology
            if self.sharing and msg.data[12:14] != b"\x08\x00":
                self.do(self.core.packet_in(conn.dpid, msg.in_port, msg.data, answered_here(msg)), conn)
            return
        if self.config.reactive and msg.data[12:14] == b"\x08\x00":
            try:
                self.new_flow(conn, msg)
            except SrfabricError as error:
                log.info("switch %#x: no flow set up: %s", conn.dpid, error)
        else:
            self.do(self.core.packet_in(conn.dpid, msg.in_port, msg.data, answered_here(msg)), conn)

    def new_flow(self, conn: SwitchConnection, msg: PacketIn) -> None:
        """Set a new flow up: its first packet goes on at once when its ingress entry is all it needs; else the
        later switches' entries go now, and the ingress entry waits for their barrier replies in a task of its
        own: the switch's read loop goes on, and must, since a barrier reply from a switch whose own read loop
        waited here would never be read."""
        new = self.core.new_flow(conn.dpid, msg.in_port, msg.data, msg.received_ns, msg.msg_len)
        if not new.barriers:
            self.first_packet(conn, new)
            return
        switches = self.switches
        for send in new.later:
            switches[send.dpid].send_all(send.messages)
        waits = [switches[dpid].start_barrier() for dpid in new.barriers]
        task = asyncio.create_task(self.after_barriers(waits, conn, new))
        self.flow_tasks.add(task)
        task.add_done_callback(self.flow_tasks.discard)

    def first_packet(self, conn: SwitchConnection, new: NewFlow) -> None:
        messages = self.core.reactive.first_packet(new)
        if messages is not None:
            conn.send_all(messages)
            self.core.reactive.sent(new, messages, self.config.clock())

    async def after_barriers(self, waits: list[Awaitable[None]], conn: SwitchConnection, new: NewFlow) -> None:
        try:
            await asyncio.gather(*waits)
        except SrfabricError as error:
            log.info("switch %#x: no flow set up: %s", conn.dpid, error)
            return
        self.first_packet(conn, new)

    async def on_message(self, conn: SwitchConnection, msg: Any) -> None:
        if self.switches.get(conn.dpid) is not conn:
            return  # a connection not yet admitted and taken may not speak for the dpid it claims
        if conn.dpid not in self.core.taken and not (self.sharing and isinstance(msg, PacketIn | parser.OFPPortStatus)):
            return  # a lone follower leaves the reports to the leader (ports' states are read again on taking over)
        if isinstance(msg, PacketIn):
            self.on_packet_in(conn, msg)
        elif isinstance(msg, parser.OFPPortStatus):
            desc = msg.desc
            self.do(self.core.port_status(conn.dpid, desc.port_no, msg.reason == ofp.OFPPR_DELETE, port_down(desc),
                                           bool(desc.state & ofp.OFPPS_LIVE)))
        elif isinstance(msg, parser.OFPFlowRemoved):
            self.core.flow_removed(conn.dpid, msg.table_id, msg.priority, match_from_ofp(msg.match), msg.cookie)

    # -- observation -------------------------------------------------------------------
    async def group_descriptions(self, dpid: int) -> list[GroupEntry | None]:
        """Every group the switch holds, as rule objects (None for one with an action srfabric does not send)."""
        return [group_from_ofp(g) for g in await self.switches[dpid].group_desc()]

    async def entry_stats(self, dpid: int) -> list[EntryStats]:
        """Every entry the switch holds, with its counters, read over OpenFlow."""
        conn = self.switches[dpid]
        return [EntryStats(s.table_id, s.priority, s.cookie, s.packet_count, s.byte_count)
                for s in await conn.flow_stats()]


def answered_here(msg: PacketIn) -> bool:
    """Whether the switch answered this frame itself: the copy of an ARP request it answered at the edge."""
    return kind_of(msg.cookie) == Kind.ANSWER
