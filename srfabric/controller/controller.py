"""The srfabric controller's shell: it owns the OpenFlow server, the switch connections, the loops and the
waits for barriers, and hands every event to the decision core (``core.ControllerCore``), writing what it
returns. The core keeps every switch's tables equal to what the compile engine says they should hold.

Reconciliation: the core remembers what each switch holds, compiles the
desired entries after every change, and plans only the difference (deletes,
then adds); the shell sends it with a barrier per switch and reports success
once every switch confirmed. When a switch connects, what it holds is read back (flow table and groups), so
a restarted controller changes only what differs: no flush, no duplicates. Each
entry's cookie carries a digest of the entry (``wire_cookie``), which is how an
entry read back is known to be exactly the one that would be sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

from os_ken.ofproto import ofproto_v1_3 as ofp
from os_ken.ofproto import ofproto_v1_3_parser as parser

from srfabric.controller.config import ControllerConfig, EntryStats, FlowSetup
from srfabric.controller.core import ControllerCore
from srfabric.controller.flows import NewFlow
from srfabric.controller.outbox import Effects
from srfabric.controller.reconcile import Push
from srfabric.controller.taking import STALE, read_back, take_master, take_slave
from srfabric.errors import ModelError, SrfabricError
from srfabric.model.chain import Chain
from srfabric.model.fabric import Fabric, ServiceFunction
from srfabric.model.stream import SteeredStream
from srfabric.rules.entries import FlowEntry, GroupEntry
from srfabric.southbound.channel import OpenFlowServer, SwitchConnection, SwitchError, port_down
from srfabric.southbound.readback import group_from_ofp, match_from_ofp
from srfabric.southbound.wire import PacketIn

log = logging.getLogger(__name__)


class Controller:
    def __init__(self, config: ControllerConfig | None = None) -> None:
        self.core = ControllerCore(config or ControllerConfig())
        self.switches: dict[int, SwitchConnection] = {}
        # A follower (another instance leads, ``srfabric/api/leadership.py``): its switches hold it as SLAVE,
        # it reads back and sends nothing, until ``lead``. A leader with roles takes them as MASTER.
        self.following = False
        self.generation: int | None = None  # the role generation it leads with (None: roles are not used)
        self.generation_seen: Callable[[], int] = lambda: 0  # a follower's SLAVE requests carry the leader's
        self.on_deposed: Callable[[str], None] | None = None  # told when a switch shows that another instance leads
        self.server = OpenFlowServer(self._on_ready, self._on_message, self._on_gone, self.config.clock,
                                     self._on_packet_in)
        self._lock = asyncio.Lock()
        self._dirty = asyncio.Event()
        self._urgent = asyncio.Event()  # a link or function went down: sync at once, cutting the settling short
        self._tasks: list[asyncio.Task[None]] = []
        self._flow_tasks: set[asyncio.Task[None]] = set()  # new flows waiting for barriers (``_after_barriers``)

    # -- the core's state, read through --------------------------------------------------
    @property
    def config(self) -> ControllerConfig:
        return self.core.config

    @property
    def fabric(self) -> Fabric:
        return self.core.fabric

    @fabric.setter
    def fabric(self, fabric: Fabric) -> None:
        self.core.fabric = fabric

    @property
    def chains(self) -> dict[str, Chain]:
        return self.core.chains

    @property
    def streams(self) -> dict[str, SteeredStream]:
        return self.core.streams

    @property
    def problems(self) -> list[SrfabricError]:
        return self.core.problems

    @property
    def setups(self) -> deque[FlowSetup]:
        return self.core.reactive.setups

    @property
    def flows(self) -> dict[int, dict[Any, FlowEntry]]:
        return self.core.reactive.flows

    @property
    def installed(self) -> dict[int, dict[Any, int]]:
        return self.core.reconciler.installed

    @property
    def flow_mods(self) -> dict[int, int]:
        return self.core.reconciler.flow_mods

    @property
    def flow_mod_kinds(self) -> dict[tuple[int, str], int]:
        return self.core.reconciler.flow_mod_kinds

    # -- lifecycle ---------------------------------------------------------------------
    async def start(self, host: str = "127.0.0.1", port: int = 6653) -> int:
        bound = await self.server.start(host, port)
        self._tasks.append(asyncio.create_task(self._sync_loop()))
        self._tasks.append(asyncio.create_task(self._lldp_loop()))
        return bound

    async def stop(self) -> None:
        tasks = [*self._tasks, *self._flow_tasks]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self.server.stop()

    def _do(self, effects: Effects, origin: SwitchConnection | None = None) -> None:
        """Write what the core asked for; a reply to a switch's own frame goes back on its connection."""
        for send in effects.sends:
            conn = origin if origin is not None and origin.dpid == send.dpid else self.switches.get(send.dpid)
            if conn is not None and send.messages:
                conn.send_all(send.messages)
        if effects.urgent:
            self._urgent.set()
        if effects.sync:
            self._dirty.set()

    # -- northbound --------------------------------------------------------------------
    def add_function(self, function: ServiceFunction) -> None:
        """Declare a service function's ports (they are trusted and never fabric links)."""
        self._do(self.core.add_function(function))

    def remove_function(self, name: str) -> None:
        self._do(self.core.remove_function(name))

    async def add_chain(self, chain: Chain) -> None:
        """Install a chain; returns once every switch confirmed its entries with a barrier.

        A chain that cannot be routed or conflicts raises and changes nothing.
        """
        if chain.name in self.chains:
            raise ModelError("name", f"chain {chain.name!r} exists already")
        await self.replace_chains({**self.chains, chain.name: chain}, check=[chain.name])

    async def remove_chain(self, name: str) -> None:
        if self.core.chains.pop(name, None) is None:
            raise ModelError("name", f"chain {name!r} is unknown")
        await self.sync()

    async def replace_chains(self, chains: dict[str, Chain], check: list[str] | None = None,
                             meanwhile: Callable[[], None] | None = None) -> None:
        """Make ``chains`` the installed set in one sync (an update of several chains at once).

        The chains named in ``check`` are checked against the others first; on any
        error nothing changes. Returns once every switch confirmed with a barrier;
        ``meanwhile`` runs while the switches work (see ``sync``).
        """
        self.core.check_chains(chains, set(check or []))
        old, self.core.chains = self.core.chains, dict(chains)
        await self._sync_or_undo(lambda: setattr(self.core, "chains", old), meanwhile)

    async def replace_streams(self, streams: dict[str, SteeredStream], check: list[str] | None = None,
                              meanwhile: Callable[[], None] | None = None) -> dict[int, int]:
        """Make ``streams`` the installed set in one sync, as ``replace_chains`` does for chains.

        Returns the flow-mods each switch received (only the talkers' edges, as transit holds no stream state).
        """
        self.core.check_streams(streams, set(check or []))
        old, self.core.streams = self.core.streams, dict(streams)
        self.core.reconciler.sent = {}
        await self._sync_or_undo(lambda: setattr(self.core, "streams", old), meanwhile)
        return dict(self.core.reconciler.sent)

    async def _sync_or_undo(self, undo: Callable[[], None], meanwhile: Callable[[], None] | None) -> None:
        """Sync; when a switch refuses, ``undo`` the change and sync again to take back what did get installed."""
        try:
            await self.sync(meanwhile)
        except SrfabricError:
            undo()
            with contextlib.suppress(SrfabricError):
                await self.sync()
            raise

    def port_name(self, dpid: int, port: int) -> str | None:
        """The name a connected switch gave its port (``s1-eth3``), or None."""
        conn = self.switches.get(dpid)
        info = conn.ports.get(port) if conn is not None else None
        return info.name if info is not None else None

    def request_sync(self) -> None:
        """Sync soon (after the usual settling), as after any change the controller sees itself."""
        self._dirty.set()

    def forget_routes(self) -> None:
        """Empty the route cache, so that each pair's next new flow searches its path again."""
        self.core.forget_routes()

    # -- reconciliation ----------------------------------------------------------------
    async def sync(self, meanwhile: Callable[[], None] | None = None) -> None:
        """Bring every connected switch to the compiled state and wait for its barrier.

        ``meanwhile`` runs once everything (barriers included) is sent and before the
        replies are awaited, so that other work overlaps the switches'; what it raises is
        raised once the switches have answered.
        """
        if self.following:
            return  # the leader keeps the switches
        async with self._lock:
            self._dirty.clear()  # this sync covers every change made so far
            self._urgent.clear()
            confirms = [self._confirm(push, self.switches[push.dpid].start_barrier(before=push.messages))
                        for push in self.core.plan_sync()]
            failure: BaseException | None = None
            if meanwhile is not None:
                try:
                    meanwhile()
                except Exception as error:  # noqa: BLE001 - raised below, once the switches answered
                    failure = error
            results = await asyncio.gather(*confirms, return_exceptions=True)
            for result in [*results, failure]:  # every push has finished before any failure is reported
                if isinstance(result, BaseException):
                    raise result
            if self.config.on_synced is not None:
                self.config.on_synced(self.fabric)

    async def _confirm(self, push: Push, barrier: Awaitable[None]) -> None:
        """Await a push's barrier, then record what the switch holds."""
        try:
            await barrier
        except SrfabricError:
            self.core.reconciler.failed(push)
            raise
        self.core.reconciler.confirmed(push)

    async def _sync_loop(self) -> None:
        while True:
            await self._dirty.wait()
            if self.following:
                self._dirty.clear()
                continue
            with contextlib.suppress(TimeoutError):  # let a burst of discoveries settle into one sync
                await asyncio.wait_for(self._urgent.wait(), 0.05)
            self._urgent.clear()
            if not self._dirty.is_set():
                continue  # a sync meanwhile (an API change) covered it
            try:
                await self.sync()
            except SrfabricError as error:
                log.warning("sync failed: %s", error)

    async def _lldp_loop(self) -> None:
        while True:
            await asyncio.sleep(self.config.lldp_interval)
            if self.following:
                continue  # a SLAVE may not send packets; the leader discovers
            effects = self.core.tick(self.config.clock())
            for send in effects.sends:
                with contextlib.suppress(Exception):
                    self._do(Effects([send]))
            self._do(Effects(sync=effects.sync, urgent=effects.urgent))

    # -- switch events -----------------------------------------------------------------
    async def _on_ready(self, conn: SwitchConnection) -> None:
        self.core.switch_named(conn.dpid, conn.bridge_name)
        if self.following:
            if not await take_slave(conn, self.generation_seen, lambda: self.following):
                return  # gone meanwhile
            if self.following:  # (``lead`` may have begun meanwhile: then this switch is led below)
                self.switches[conn.dpid] = conn
                self.core.switch_held(conn.dpid, conn.ports)
                return
        await self._master_of(conn)

    async def _master_of(self, conn: SwitchConnection) -> None:
        """Take the switch (as MASTER when roles are used), learn what it holds, and start discovering. A
        switch that calls this leader's generation stale has a newer leader: this one steps down."""
        try:
            await take_master(conn, self.generation)
        except SwitchError as error:
            if error.refused == STALE:
                self.following = True
                if self.on_deposed is not None:
                    self.on_deposed(f"switch {conn.dpid:#x} holds a newer generation than {self.generation}")
            raise
        held, held_groups = await read_back(conn)
        self.switches[conn.dpid] = conn
        self._do(self.core.switch_ready(conn.dpid, conn.ports, held, held_groups), conn)

    async def lead(self, generation: int) -> None:
        """Stop following: take every connected switch as MASTER with ``generation`` (its old leader, if still
        connected, becomes SLAVE), read back what each holds, and note the ports that are down now (a
        follower ignores port reports). The caller has given the controller its chains and streams before
        (a sync then sends only what differs)."""
        self.following, self.generation = False, generation
        held = list(self.switches.values())
        self.switches.clear()  # back once read back: no sync pushes to a switch whose table is not known yet
        for conn in held:
            self.core.switch_released(conn.dpid)
        results = await asyncio.gather(*(self._master_of(conn) for conn in held), return_exceptions=True)
        for conn, result in zip(held, results, strict=True):
            if isinstance(result, Exception):  # gone meanwhile: it is taken again when it connects again
                log.warning("switch %#x: not taken over: %s", conn.dpid, result)
        for dpid, conn in list(self.switches.items()):
            for port, info in conn.ports.items():
                if info.down:
                    self._do(self.core.port_status(dpid, port, False, True, False))

    async def _on_gone(self, conn: SwitchConnection) -> None:
        if self.switches.get(conn.dpid) is conn:
            del self.switches[conn.dpid]
            self._do(self.core.switch_gone(conn.dpid))

    def _on_packet_in(self, conn: SwitchConnection, msg: PacketIn) -> None:
        """A packet-in, as its switch's read loop reads it: a new flow (reactive), or a frame for discovery."""
        if self.following:
            return  # the leader handles the switches' reports
        if self.config.reactive and msg.data[12:14] == b"\x08\x00":
            try:
                new = self.core.new_flow(conn.dpid, msg.in_port, msg.data, msg.received_ns, msg.msg_len)
            except SrfabricError as error:
                log.info("switch %#x: no flow set up: %s", conn.dpid, error)
                return
            if not new.barriers:
                self._first_packet(conn, new)
                return
            # The later switches' entries now; the ingress entry waits for their barrier replies in a task of its
            # own: the switch's read loop goes on, and must, since a barrier reply from a switch whose own read
            # loop waited here would never be read.
            switches = self.switches
            for send in new.later:
                switches[send.dpid].send_all(send.messages)
            waits = [switches[dpid].start_barrier() for dpid in new.barriers]
            task = asyncio.create_task(self._after_barriers(waits, conn, new))
            self._flow_tasks.add(task)
            task.add_done_callback(self._flow_tasks.discard)
        else:
            self._do(self.core.packet_in(conn.dpid, msg.in_port, msg.data), conn)

    def _first_packet(self, conn: SwitchConnection, new: NewFlow) -> None:
        messages = self.core.reactive.first_packet(new)
        if messages is not None:
            conn.send_all(messages)
            self.core.reactive.sent(new, messages, self.config.clock())

    async def _after_barriers(self, waits: list[Awaitable[None]], conn: SwitchConnection, new: NewFlow) -> None:
        try:
            await asyncio.gather(*waits)
        except SrfabricError as error:
            log.info("switch %#x: no flow set up: %s", conn.dpid, error)
            return
        self._first_packet(conn, new)

    async def _on_message(self, conn: SwitchConnection, msg: Any) -> None:
        if self.following:
            return  # the leader handles the switches' reports; ports' states are read again on taking over
        if isinstance(msg, PacketIn):
            self._on_packet_in(conn, msg)
        elif isinstance(msg, parser.OFPPortStatus):
            desc = msg.desc
            self._do(self.core.port_status(conn.dpid, desc.port_no, msg.reason == ofp.OFPPR_DELETE, port_down(desc),
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

    async def wait_until(self, condition: Callable[[], bool], timeout: float, what: str) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not condition():
            if loop.time() > deadline:
                raise SrfabricError("timeout", f"{what} not reached within {timeout} s")
            await asyncio.sleep(0.05)
        await self.sync()
