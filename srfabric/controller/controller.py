"""The srfabric controller: it discovers the fabric, learns hosts, and keeps every switch's
tables equal to what ``compile_fabric`` says they should hold.

Reconciliation: the controller remembers what each switch holds, compiles the
desired entries after every change, sends only the difference (deletes, then
adds) and waits for each switch's barrier reply before reporting success.
When a switch connects, what it holds is read back (flow table and groups), so
a restarted controller changes only what differs: no flush, no duplicates. Each
entry's cookie carries a digest of the entry (``wire_cookie``), which is how an
entry read back is known to be exactly the one that would be sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from os_ken.ofproto import ofproto_v1_3 as ofp
from os_ken.ofproto import ofproto_v1_3_parser as parser

from srfabric.controller.discovery import Discovery
from srfabric.controller.packets import FiveTuple, parse_five_tuple
from srfabric.controller.taking import Taking
from srfabric.errors import ModelError, SrfabricError
from srfabric.model.chain import Chain
from srfabric.model.fabric import Fabric, Role, ServiceFunction
from srfabric.model.stream import SteeredStream
from srfabric.rules.compile import CompileCache
from srfabric.rules.entries import EntryKey, FlowEntry, GroupEntry, Kind, Match, kind_of
from srfabric.rules.reactive import FlowPlan, FlowStep, RouteCache, reactive_groups, reactive_tables
from srfabric.southbound.channel import OpenFlowServer, SwitchConnection, port_down
from srfabric.southbound.ofbind import (
    flow_add,
    group_delete,
    group_mod,
    wire_cookie,
)
from srfabric.southbound.readback import group_from_ofp, match_from_ofp
from srfabric.southbound.wire import PacketIn, flow_add_packed, flow_delete_packed, step_flow_add, step_packet_out

log = logging.getLogger(__name__)

@dataclass
class ControllerConfig:
    """What the operator tells the controller; everything else it discovers."""

    codec: str = "mac-nibble"
    steering: str = "source-routing"  # or "hop-by-hop": per-switch chain rules, for comparison
    switch_names: dict[int, tuple[str, Role]] = field(default_factory=dict)
    host_names: dict[int, str] = field(default_factory=dict)
    lldp_interval: float = 1.0
    lldp_missed: int = 3  # a link whose LLDP stops for this many intervals is down (0: only port status says so)
    reactive: bool = False  # no default routes ahead: each new IPv4 flow from a host is set up on its first packet
    flow_idle_timeout: int = 60  # seconds: a reactive entry no packet matched for this long goes (0: never)
    tt_queue: int | None = None  # every switch puts time-triggered frames in this queue (rules/time_triggered.py)
    clock: Callable[[], int] = time.perf_counter_ns
    on_synced: Callable[[Fabric], None] | None = None  # told after each sync, e.g. to keep learned hosts and links
    gateway: str | None = None  # the address of the host that takes IPv4 to no host of the fabric (rules/gateway.py)


@dataclass(slots=True)
class FlowSetup:
    """One reactive flow setup as the controller saw it (times from the configured clock, in ns)."""

    dpid: int
    flow: FiveTuple
    received_ns: int  # the packet-in's last byte read
    header_ns: int  # computing the path and its header (or the per-switch rules)
    sent_ns: int  # the packet-out written
    bytes_up: int  # packet-in plus any barrier replies
    bytes_down: int  # flow-mods, barrier requests and the packet-out
    packet_out_bytes: int
    switches: int  # switches that received an entry
    route_searched: bool = False  # the route was not cached: header_ns includes the shortest-path search

@dataclass
class EntryStats:
    """One installed entry as the switch reports it."""

    table: int
    priority: int
    cookie: int
    packets: int
    bytes: int

    @property
    def kind(self) -> Kind | None:
        return kind_of(self.cookie)

class Controller(Discovery, Taking):
    def __init__(self, config: ControllerConfig | None = None) -> None:
        self.config = config or ControllerConfig()
        self.fabric = Fabric()
        self.fabric.set_gateway(self.config.gateway)
        self.chains: dict[str, Chain] = {}
        self.streams: dict[str, SteeredStream] = {}
        self.sent: dict[int, int] = {}  # flow-mods each switch got in the last sync that changed it (a count)
        self.flow_mods: dict[int, int] = {}  # flow-mods (adds, deletes) and group-mods each switch got since the start
        self.flow_mod_kinds: dict[tuple[int, str], int] = {}  # the same by (switch, entry kind)
        self.switches: dict[int, SwitchConnection] = {}
        # What each switch holds: entry key -> the cookie it was sent with; groups by id (None: not ours).
        self.installed: dict[int, dict[EntryKey, int]] = {}
        self.installed_groups: dict[int, dict[int, GroupEntry | None]] = {}
        # The last confirmed push per switch: (entries, groups, the installed dicts it left). A sync that
        # wants the same again skips the switch without working out the difference entry by entry. A read-back
        # replaces the installed dicts (so the switch is compared again); a reactive entry is added to them in
        # place, but it joins ``flows``, and so the wanted list, at the same moment.
        self._confirmed: dict[int, tuple[list[FlowEntry], list[GroupEntry], dict[EntryKey, int],
                                         dict[int, GroupEntry | None]]] = {}
        self.cache = CompileCache(self.config.codec, self.config.steering, self.config.tt_queue)
        self.flows: dict[int, dict[EntryKey, FlowEntry]] = {}  # reactive entries, kept by sync
        self.setups: deque[FlowSetup] = deque(maxlen=100_000)
        self._routes = RouteCache()
        self.problems: list[SrfabricError] = []  # what the last sync could not route (chains, streams)
        self._reported: dict[str, str] = {}  # those already in the log: said once, and again once repaired
        self._lldp_seen: dict[tuple[int, int], int] = {}  # switch port -> when LLDP last arrived on it (clock ns)
        self._aged: dict[frozenset[tuple[int, int]], int] = {}  # links taken down for silence -> when
        # Ends of links taken down for silence: not fabric ports, but no host is learned on them and nothing is
        # flooded out of them (a link that still carries frames one way would teach hosts in the wrong place),
        # until LLDP both ways brings the link back or the carrier goes down.
        self._quarantine: set[tuple[int, int]] = set()
        self._unclaimed_ip6: dict[tuple[int, int, int], set[str]] = {}  # (MAC, switch, port): ND before ARP
        self._dormant_up: dict[tuple[int, int], int] = {}  # a dormant link's port -> when its carrier came back
        self._down_ports: set[tuple[int, int]] = set()  # service functions' ports whose carrier is down
        self._flow_links: dict[tuple[int, EntryKey], frozenset[tuple[int, int]]] = {}  # reactive entry -> its links
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
        self._flow_tasks: set[asyncio.Task[None]] = set()  # new flows waiting for barriers (``_flow_in``)

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

    # -- northbound --------------------------------------------------------------------
    def add_function(self, function: ServiceFunction) -> None:
        """Declare a service function's ports (they are trusted and never fabric links)."""
        before = self.fabric.version
        for end in (function.ingress, function.egress):
            self.fabric.remove_link(end)
        self.fabric.add_function(function)
        if self.fabric.version != before:  # the API declares every function on every change: most are known
            self._dirty.set()

    def remove_function(self, name: str) -> None:
        before = self.fabric.version
        self.fabric.remove_function(name)
        if self.fabric.version != before:
            self._dirty.set()

    async def add_chain(self, chain: Chain) -> None:
        """Install a chain; returns once every switch confirmed its entries with a barrier.

        A chain that cannot be routed or conflicts raises and changes nothing.
        """
        if chain.name in self.chains:
            raise ModelError("name", f"chain {chain.name!r} exists already")
        await self.replace_chains({**self.chains, chain.name: chain}, check=[chain.name])

    async def remove_chain(self, name: str) -> None:
        if self.chains.pop(name, None) is None:
            raise ModelError("name", f"chain {name!r} is unknown")
        await self.sync()

    async def replace_chains(self, chains: dict[str, Chain], check: list[str] | None = None,
                             meanwhile: Callable[[], None] | None = None) -> None:
        """Make ``chains`` the installed set in one sync (an update of several chains at once).

        The chains named in ``check`` are checked against the others first; on any
        error nothing changes. Returns once every switch confirmed with a barrier;
        ``meanwhile`` runs while the switches work (see ``sync``).
        """
        names = set(check or [])
        for name in sorted(names):
            if self.config.reactive and chains[name].destination is None:
                raise ModelError("reactive", f"chain {name} has no destination: it is sent on from its last "
                                             "function by the default routes, which reactive setup installs "
                                             "per flow at hosts' edges only")
        kept = [chain for name, chain in chains.items() if name not in names]
        for name in sorted(names):
            self.cache.state(self.fabric, kept, [], checked=chains[name])
            kept.append(chains[name])
        old, self.chains = self.chains, dict(chains)
        await self._sync_or_undo(lambda: setattr(self, "chains", old), meanwhile)

    async def replace_streams(self, streams: dict[str, SteeredStream], check: list[str] | None = None,
                              meanwhile: Callable[[], None] | None = None) -> dict[int, int]:
        """Make ``streams`` the installed set in one sync, as ``replace_chains`` does for chains.

        Returns the flow-mods each switch received (only the talkers' edges, as transit holds no stream state).
        """
        names = set(check or [])
        self.cache.state(self.fabric, list(self.chains.values()), [],
                         streams=[s for name, s in streams.items() if name not in names],
                         checked_streams=[streams[name] for name in sorted(names)])
        old, self.streams = self.streams, dict(streams)
        self.sent = {}
        await self._sync_or_undo(lambda: setattr(self, "streams", old), meanwhile)
        return dict(self.sent)

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
            problems: list[SrfabricError] = []
            state = self.cache.state(self.fabric, list(self.chains.values()), problems,
                                     streams=list(self.streams.values()))
            self.problems = problems
            self._note(problems)
            tables, groups = state.entries, state.groups
            if self.config.reactive:
                tables, groups = reactive_tables(tables, self.config.steering), reactive_groups(groups)
            for dpid, flows in self.flows.items():  # a new list: the compiled one is kept by the cache
                tables[dpid] = [*tables.get(dpid, ()), *flows.values()]
            pushes = [self._push(dpid, tables.get(dpid, []), groups.get(dpid, []))
                      for dpid in list(self.switches)]
            failure: BaseException | None = None
            if meanwhile is not None:
                try:
                    meanwhile()
                except Exception as error:  # noqa: BLE001 - raised below, once the switches answered
                    failure = error
            results = await asyncio.gather(*(push for push in pushes if push is not None), return_exceptions=True)
            for result in [*results, failure]:  # every push has finished before any failure is reported
                if isinstance(result, BaseException):
                    raise result
            if self.config.on_synced is not None:
                self.config.on_synced(self.fabric)

    def _note(self, problems: list[SrfabricError]) -> None:
        """Log each problem once when it appears (or its reason changes) and once when it is gone."""
        now = {problem.field: problem.message for problem in problems}
        for what, reason in now.items():
            if self._reported.get(what) != reason:
                log.warning("%s is not routed: %s", what, reason)
        for what in self._reported.keys() - now.keys():
            log.warning("%s is routed again", what)
        self._reported = now

    def _push(self, dpid: int, desired_list: list[FlowEntry],
              desired_groups: list[GroupEntry]) -> Awaitable[None] | None:
        """Send a switch what it lacks, and a barrier, now; the result awaits the barrier and records the state.

        None when the switch already holds ``desired_list`` and ``desired_groups``.
        """
        conn = self.switches.get(dpid)
        if conn is None:
            return None
        last = self._confirmed.get(dpid)
        if (last is not None and last[2] is self.installed.get(dpid) and last[3] is self.installed_groups.get(dpid)
                and last[0] == desired_list and last[1] == desired_groups):
            return None  # list equality meets the same entry objects first: cheap when nothing changed
        desired = {entry.key: entry for entry in desired_list}
        cookies = {key: wire_cookie(entry) for key, entry in desired.items()}
        current = self.installed.setdefault(dpid, {})
        removed = [key for key in current if key not in desired]
        added = [entry for key, entry in desired.items() if current.get(key) != cookies[key]]
        groups = {group.group_id: group for group in desired_groups}
        current_groups = self.installed_groups.setdefault(dpid, {})
        changed = [group for gid, group in groups.items() if current_groups.get(gid, False) != group]
        dropped = [gid for gid in current_groups if gid not in groups]
        if not removed and not added and not changed and not dropped:
            self._confirmed[dpid] = (desired_list, desired_groups, current, current_groups)
            return None
        # Groups first (entries refer to them), entries next, unused groups last; all with the barrier in one write.
        messages = [group_mod(group, modify=group.group_id in current_groups) for group in changed]
        messages += [flow_delete_packed(FlowEntry(*key)) for key in removed]
        messages += [flow_add_packed(entry) for entry in added]
        messages += [group_delete(gid) for gid in dropped]
        self._confirmed.pop(dpid, None)
        self.sent[dpid] = len(removed) + len(added)
        # Group-mods count with the flow-mods: both change what the switch holds.
        self.flow_mods[dpid] = self.flow_mods.get(dpid, 0) + len(removed) + len(added) + len(changed) + len(dropped)
        for kind in [kind_of(current[key]) for key in removed] + [entry.kind for entry in added]:
            name = kind.name.lower() if kind is not None else "foreign"
            self.flow_mod_kinds[(dpid, name)] = self.flow_mod_kinds.get((dpid, name), 0) + 1
        if changed or dropped:
            self.flow_mod_kinds[(dpid, "group")] = self.flow_mod_kinds.get((dpid, "group"), 0) + len(changed) + len(
                dropped)
        return self._confirm(dpid, conn.start_barrier(before=messages), (current, cookies, added),
                             (current_groups, groups, changed), (desired_list, desired_groups))

    async def _confirm(self, dpid: int, barrier: Awaitable[None],
                       entries: tuple[dict[EntryKey, int], dict[EntryKey, int], list[FlowEntry]],
                       groups: tuple[dict[int, GroupEntry | None], dict[int, GroupEntry], list[GroupEntry]],
                       desired: tuple[list[FlowEntry], list[GroupEntry]]) -> None:
        """Await a push's barrier, then record what the switch holds; each tuple is (held, wanted, sent),
        ``desired`` the lists the push was made from."""
        (current, cookies, added), (current_groups, wanted_groups, changed) = entries, groups
        try:
            await barrier
        except SrfabricError:
            # Assume the adds landed: the next sync then deletes whatever is not wanted.
            self.installed[dpid] = {**{k: v for k, v in current.items() if k in cookies},
                                    **{entry.key: cookies[entry.key] for entry in added}}
            self.installed_groups[dpid] = {**{g: v for g, v in current_groups.items() if g in wanted_groups},
                                           **{group.group_id: group for group in changed}}
            raise
        self.installed[dpid] = cookies
        self.installed_groups[dpid] = dict(wanted_groups)
        self._confirmed[dpid] = (*desired, self.installed[dpid], self.installed_groups[dpid])

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

    # -- switch events -----------------------------------------------------------------
    async def _on_gone(self, conn: SwitchConnection) -> None:
        if self.switches.get(conn.dpid) is conn:
            del self.switches[conn.dpid]
            lost = {end for pair in self.fabric.links.items() for end in pair if pair[0][0] == conn.dpid}
            self._forget_flows_over(lost)
            for end in [end for end in self.fabric.links if end[0] == conn.dpid]:
                self.fabric.remove_link(end)
            for end in [end for end in self._lldp_seen if end[0] == conn.dpid]:
                del self._lldp_seen[end]
            # Its ports' reports while it is away are lost: forget what they said (a suspended link, a function
            # port down); LLDP and port status say it again once it is back.
            for end in [end for end in self.fabric.dormant if end[0] == conn.dpid]:
                self.fabric.remove_link(end)
            self._down_ports = {end for end in self._down_ports if end[0] != conn.dpid}
            for function in self.fabric.functions.values():
                if self._ports_up(function):
                    self.fabric.set_function_up(function.name, True)
            self._quarantine = {end for end in self._quarantine if end[0] != conn.dpid}
            self._dirty.set()

    def _on_packet_in(self, conn: SwitchConnection, msg: PacketIn) -> None:
        """A packet-in, as its switch's read loop reads it: a new flow (reactive), or a frame for discovery."""
        if self.following:
            return  # the leader handles the switches' reports
        if self.config.reactive and msg.data[12:14] == b"\x08\x00":
            try:
                self._flow_in(conn, msg.in_port, msg.data, msg.received_ns, msg.msg_len)
            except SrfabricError as error:
                log.info("switch %#x: no flow set up: %s", conn.dpid, error)
        else:
            self._packet_in(conn, msg.in_port, msg.data)

    async def _on_message(self, conn: SwitchConnection, msg: Any) -> None:
        if self.following:
            return  # the leader handles the switches' reports; ports' states are read again on taking over
        if isinstance(msg, PacketIn):
            self._on_packet_in(conn, msg)
        elif isinstance(msg, parser.OFPPortStatus):
            desc = msg.desc
            self._port_status(conn.dpid, desc.port_no, msg.reason == ofp.OFPPR_DELETE,
                              port_down(desc),
                              bool(desc.state & ofp.OFPPS_LIVE))
        elif isinstance(msg, parser.OFPFlowRemoved):
            self._flow_removed(conn.dpid, msg.table_id, msg.priority, match_from_ofp(msg.match), msg.cookie)

    def _port_status(self, dpid: int, port: int, deleted: bool, down: bool, live: bool = True) -> None:
        """A port went away (its link is forgotten), lost its carrier or was set down (its link is suspended: no
        path uses it, the ports stay trusted, so the switches at its ends need no change) or is live again (a
        dormant link waits for LLDP, and is forgotten if none comes; ``age_links``). A report that is neither
        (Open vSwitch sends one as a port goes down, before the carrier is gone) changes nothing."""
        end = (dpid, port)
        function = self.fabric.function_ports().get(end)
        if function is not None:  # a function's port: its pair leaves (or rejoins) its group's load balancing
            if not (deleted or down or live):
                return
            (self._down_ports.add if deleted or down else self._down_ports.discard)(end)
            up = self._ports_up(function)
            if (function.name in self.fabric.functions_down) == up:
                log.warning("service function %s is %s", function.name,
                            "up again" if up else "down (a port lost its carrier)")
            self.fabric.set_function_up(function.name, up)
            if not up:
                self._urgent.set()
            self._dirty.set()
            return
        peer = self.fabric.links.get(end)
        if deleted or down:  # what the port was is open again; a wait for LLDP after an earlier return is over
            self._quarantine.discard(end)
            for known in (end, peer, self.fabric.dormant.get(end)):
                self._dormant_up.pop(known, None)  # type: ignore[arg-type]
            if peer is not None:
                self._forget_flows_over({end, peer})
                if not deleted:
                    log.warning("link %#x:%d - %#x:%d is down: the port lost its carrier", *end, *peer)
            (self.fabric.remove_link if deleted else self.fabric.suspend_link)(end)
            self._urgent.set()
        elif end in self.fabric.dormant and live:
            if self.config.lldp_missed <= 0:
                self.fabric.remove_link(end)  # nothing would time out the wait for LLDP: LLDP re-adds it
            else:
                self._dormant_up.setdefault(end, self.config.clock())
        self._dirty.set()

    def _ports_up(self, function: ServiceFunction) -> bool:
        return function.ingress not in self._down_ports and function.egress not in self._down_ports

    def _flow_removed(self, dpid: int, table: int, priority: int, match: Match, cookie: int) -> None:
        """A reactive entry the switch let go (idle): forget it, so that no sync puts it back; the flow's next
        packet is a new flow."""
        key = (table, priority, match)
        flows = self.flows.get(dpid, {})
        entry = flows.get(key)
        if entry is None or wire_cookie(entry) != cookie:
            return  # not one of ours, or already replaced by a newer one
        del flows[key]
        self._flow_links.pop((dpid, key), None)
        self.installed.get(dpid, {}).pop(key, None)
        self._confirmed.pop(dpid, None)  # what the switch holds is no longer what was last confirmed

    def _packet_in(self, conn: SwitchConnection, in_port: int, data: bytes) -> None:
        ethertype = int.from_bytes(data[12:14], "big") if len(data) >= 14 else 0
        try:
            if ethertype == 0x88CC:
                self._lldp_in(conn, in_port, data)
            elif ethertype == 0x0806:
                self._arp_in(conn, in_port, data)
            elif ethertype == 0x86DD:
                self._nd_in(conn, in_port, data)
        except SrfabricError as error:
            log.info("switch %#x port %d: ignored frame: %s", conn.dpid, in_port, error)

    def _flow_in(self, conn: SwitchConnection, in_port: int, data: bytes, received_ns: int, bytes_up: int) -> None:
        """Install one new flow's entries and send its first packet on along them.

        When switches further on get entries (hop-by-hop rules, later pathlets), the ingress entry waits for
        their barrier replies in a task of its own: the switch's read loop goes on, and must, since a
        barrier reply from a switch whose own read loop waited here would never be read.
        """
        clock = self.config.clock
        flow = parse_five_tuple(data)
        misses = self._routes.misses
        begin = clock()
        plan = self._routes.plan(self.fabric, flow, (conn.dpid, in_port), self.config.codec, self.config.steering)
        placed = plan.entries(flow, self.config.flow_idle_timeout)
        header_ns = clock() - begin
        searched = self._routes.misses > misses
        *later, (_, first) = placed
        if not later:  # source routing in one pathlet: one flow-mod and the packet, no barrier
            self._flow_first_packet(conn, in_port, data, first, plan, flow, received_ns, header_ns, bytes_up, 0,
                                    searched)
            return
        switches = self.switches
        missing = {dpid for dpid, _ in later if dpid not in switches}
        if missing:
            raise SrfabricError("switch", f"{min(missing):#x} on the flow's path is not connected")
        bytes_down = 0
        for step, (dpid, entry) in zip(plan.steps[:-1], later, strict=True):
            msg = self._flow_message(dpid, entry, plan, step)
            switches[dpid].send(msg)
            bytes_down += len(msg.buf)
        # Switches further on must hold their entry before the packet can reach them: a barrier each. The
        # ingress entry's links are known now, so that a link lost meanwhile stops it (``_forget_flows_over``).
        self._flow_links[(conn.dpid, first.key)] = plan.links
        targets = [switches[dpid] for dpid in sorted({dpid for dpid, _ in later})]
        barriers = 8 * len(targets)
        send_first = partial(self._flow_first_packet, conn, in_port, data, first, plan, flow, received_ns,
                             header_ns, bytes_up + barriers, bytes_down + barriers, searched)
        task = asyncio.create_task(self._after_barriers([target.start_barrier() for target in targets], conn.dpid,
                                                        send_first))
        self._flow_tasks.add(task)
        task.add_done_callback(self._flow_tasks.discard)

    def _forget_flows_over(self, lost: set[tuple[int, int]]) -> None:
        """Drop the reactive entries whose route crossed a lost link (either direction): the next sync takes
        them off their switches, and the flow's next packet sets it up again over a live route."""
        for (dpid, key), links in list(self._flow_links.items()):
            if links & lost:
                del self._flow_links[(dpid, key)]
                self.flows.get(dpid, {}).pop(key, None)
                self._dirty.set()

    async def _after_barriers(self, waits: list[Awaitable[None]], dpid: int, send_first: Callable[[], None]) -> None:
        try:
            await asyncio.gather(*waits)
        except SrfabricError as error:
            log.info("switch %#x: no flow set up: %s", dpid, error)
            return
        send_first()

    def _flow_first_packet(self, conn: SwitchConnection, in_port: int, data: bytes, first: FlowEntry, plan: FlowPlan,
                           flow: FiveTuple, received_ns: int, header_ns: int, bytes_up: int, bytes_down: int,
                           searched: bool) -> None:
        """The ingress entry and the first packet leave together (``send_all``): one wake-up of the switch. Not if
        a link on the route was lost while the switches further on confirmed (the flow's next packet starts
        again)."""
        if len(plan.steps) > 1 and (conn.dpid, first.key) not in self._flow_links:
            return
        step = plan.steps[-1]
        mod, out = self._flow_message(conn.dpid, first, plan, step), step_packet_out(in_port, step, data)
        conn.send_all((mod, out))
        self.setups.append(FlowSetup(conn.dpid, flow, received_ns, header_ns, self.config.clock(), bytes_up,
                                     bytes_down + len(mod.buf) + len(out.buf), len(out.buf), plan.switches, searched))

    def _flow_message(self, dpid: int, entry: FlowEntry, plan: FlowPlan, step: FlowStep) -> Any:
        """One reactive entry's flow-mod, remembered as installed on ``dpid`` with the links its route crosses."""
        msg = step_flow_add(entry, step) or flow_add(entry)
        self.flow_mods[dpid] = self.flow_mods.get(dpid, 0) + 1
        key = entry.key
        self.flows.setdefault(dpid, {})[key] = entry
        self.installed.setdefault(dpid, {})[key] = wire_cookie(entry)
        self._flow_links[(dpid, key)] = plan.links
        return msg

    def request_sync(self) -> None:
        """Sync soon (after the usual settling), as after any change the controller sees itself."""
        self._dirty.set()

    def forget_routes(self) -> None:
        """Empty the route cache, so that each pair's next new flow searches its path again."""
        self._routes = RouteCache()

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

