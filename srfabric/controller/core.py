"""The controller's decisions, apart from its sockets (in the manner of faucet's ``Valve``): each handler takes
an event from the switches or the API and returns what to send (``Effects``, ``NewFlow``, ``Push``), and the
shell (``controller.Controller``) writes it. The clock comes from the config. Pure: no I/O.

>>> from srfabric.model.topo import tsn_fig1
>>> core = ControllerCore(ControllerConfig())
>>> core.fabric = tsn_fig1().to_fabric()
>>> effects = core.switch_ready(1, [1, 2, 3, 4], {}, {})
>>> [len(send.messages) for send in effects.sends], effects.sync  # LLDP out of each port but its hosts' (1, 2)
([2], True)
>>> pushes = core.plan_sync()  # what each connected switch lacks
>>> [push.dpid for push in pushes]
[1]
>>> for push in pushes:  # each switch's barrier reply confirms its push
...     core.reconciler.confirmed(push)
>>> core.plan_sync()
[]
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Collection, Iterator, Mapping
from dataclasses import replace

from srfabric.controller.config import ControllerConfig
from srfabric.controller.flows import NewFlow, ReactiveFlows
from srfabric.controller.learning import HostLearning
from srfabric.controller.links import LinkWatch
from srfabric.controller.outbox import Effects
from srfabric.controller.reconcile import NO_ENTRIES, NO_GROUPS, Held, HeldGroups, Push, Reconciler
from srfabric.errors import ModelError, SrfabricError
from srfabric.model.chain import Chain
from srfabric.model.fabric import Fabric, Host, ServiceFunction, Switch
from srfabric.model.stream import SteeredStream
from srfabric.rules.compile import CompileCache
from srfabric.rules.entries import FlowEntry, GroupEntry, Match
from srfabric.rules.reactive import RouteCache, reactive_groups, reactive_tables

log = logging.getLogger("srfabric.controller.controller")  # one logger for the controller's own story
LLDP, ARP, IPV6 = 0x88CC, 0x0806, 0x86DD


class ControllerCore:
    """The fabric as discovered, the chains and streams asked for, and what every switch holds."""

    def __init__(self, config: ControllerConfig) -> None:
        self.config = config
        self.chains: dict[str, Chain] = {}
        self.streams: dict[str, SteeredStream] = {}
        self.cache = CompileCache(config.codec, config.steering, config.tt_queue)
        self.problems: list[SrfabricError] = []  # what the last sync could not route (chains, streams)
        self.reported: dict[str, str] = {}  # those already in the log: said once, and again once repaired
        self.ports: dict[int, Collection[int]] = {}  # each connected switch's ports (the connection keeps them)
        # The switches this controller is MASTER of: only these are synced and send LLDP. The others are held as
        # SLAVE (another instance leads them, or owns them as its edges): their ports and frames still tell
        # this one the topology.
        self.taken: set[int] = set()
        self.declared_functions: set[str] = set()  # service functions and hosts the API declared (``place``)
        self.declared_hosts: set[str] = set()
        self._placed: tuple[Mapping[str, ServiceFunction], int] = ({}, -1)  # the functions placed, on which version
        self.reconciler = Reconciler()
        self.reactive = ReactiveFlows(self.reconciler)
        fabric = Fabric()
        fabric.set_gateway(config.gateway)
        self.links = LinkWatch(fabric, config, self.reactive)
        self.hosts = HostLearning(fabric, config)
        self._fabric = fabric

    @property
    def fabric(self) -> Fabric:
        return self._fabric

    @fabric.setter
    def fabric(self, fabric: Fabric) -> None:
        """A fabric given whole (tests, a testbed that knows its topology)."""
        self._fabric = self.links.fabric = self.hosts.fabric = fabric

    # -- switches ----------------------------------------------------------------------
    def switch_named(self, dpid: int, bridge_name: str | None) -> None:
        """A switch connected: it joins the fabric under its configured name (else its own) and role."""
        fallback = bridge_name or f"dp{dpid:x}"
        name, role = self.config.switch_names.get(dpid, (fallback, "edge"))
        self.fabric.add_switch(Switch(dpid, name, role))

    def switch_ready(self, dpid: int, ports: Collection[int], held: Held, held_groups: HeldGroups,
                     held_meters: set[int] | None = None) -> Effects:
        """A switch taken (as MASTER), holding ``held`` and ``held_groups`` as read back: it is synced from now
        on, and discovery starts on its ports."""
        self.reconciler.held(dpid, held, held_groups, held_meters)
        self.ports[dpid] = ports
        self.taken.add(dpid)
        effects = Effects(sync=True)
        effects.sends.append(self.hosts.lldp_out(dpid, ports))
        return effects

    def switch_held(self, dpid: int, ports: Collection[int]) -> None:
        """A switch held as SLAVE (another instance leads it): known, but nothing is sent to it."""
        self.ports[dpid] = ports
        self.taken.discard(dpid)

    def switch_released(self, dpid: int) -> None:
        """A switch to be taken again (a take-over): no sync pushes to it until it is read back."""
        self.ports.pop(dpid, None)
        self.taken.discard(dpid)

    def switch_gone(self, dpid: int) -> Effects:
        self.ports.pop(dpid, None)
        self.taken.discard(dpid)
        self.links.switch_gone(dpid)
        return Effects(sync=True)

    def port_status(self, dpid: int, port: int, deleted: bool, down: bool, live: bool = True) -> Effects:
        """A port's news; a port that is live again is probed with LLDP at once, so that a link whose carrier came
        back is found in the time LLDP takes to cross it, not at the next round."""
        effects = self.links.port_status(dpid, port, deleted, down, live)
        if live and not (deleted or down) and dpid in self.taken and port in self.ports.get(dpid, ()):
            effects.sends.append(self.hosts.lldp_out(dpid, (port,)))  # a switch port: never the bridge's LOCAL
        return effects

    def packet_in(self, dpid: int, in_port: int, data: bytes, answered: bool = False) -> Effects:
        """A frame for discovery (LLDP, ARP, Neighbour Discovery); what cannot be read is logged and ignored.
        ``answered``: the switch answered this ARP request itself (``arp_answers``)."""
        ethertype = int.from_bytes(data[12:14], "big") if len(data) >= 14 else 0
        try:
            if ethertype == LLDP:
                effects = self.links.lldp_in(dpid, in_port, data)
                if self.links.heard_one_way((dpid, in_port)):
                    # A link that went silent comes back when heard both ways: its far end may have come back after
                    # this port's last LLDP went out, so this port answers at once instead of at the next round.
                    effects.sends.append(self.hosts.lldp_out(dpid, (in_port,)))
                return effects
            if ethertype == ARP:
                return self.hosts.arp_in(dpid, in_port, data, self.ports, self.links.quarantine, answered)
            if ethertype == IPV6:
                return self.hosts.nd_in(dpid, in_port, data, self.ports, self.links.quarantine)
        except SrfabricError as error:
            log.info("switch %#x port %d: ignored frame: %s", dpid, in_port, error)
        return Effects()

    def new_flow(self, dpid: int, in_port: int, data: bytes, received_ns: int, bytes_up: int) -> NewFlow:
        """A reactive setup for a new IPv4 flow's first packet (``SrfabricError`` when it cannot be set up)."""
        return self.reactive.flow_in(self.fabric, self.config, dpid, in_port, data, received_ns, bytes_up,
                                     self.taken)  # a switch another instance is MASTER of cannot take entries

    def flow_removed(self, dpid: int, table: int, priority: int, match: Match, cookie: int) -> None:
        self.reactive.removed(dpid, table, priority, match, cookie)

    def tick(self, now_ns: int) -> Effects:
        """Every LLDP interval: age the links that went silent, and send LLDP out of every switch."""
        down = self.links.age(now_ns, self.ports)
        effects = Effects(sync=bool(down), urgent=bool(down))
        effects.sends += [self.hosts.lldp_out(dpid, ports) for dpid, ports in self.ports.items() if dpid in self.taken]
        return effects

    def forget_routes(self) -> None:
        """Empty the route cache, so that each pair's next new flow searches its path again."""
        self.reactive.routes = RouteCache()

    # -- the API's changes -------------------------------------------------------------
    def add_function(self, function: ServiceFunction) -> Effects:
        """Declare a service function's ports (they are trusted and never fabric links)."""
        before = self.fabric.version
        for end in (function.ingress, function.egress):
            self.fabric.remove_link(end)
        self.fabric.add_function(function)
        return Effects(sync=self.fabric.version != before)  # the API declares every function on every change

    def remove_function(self, name: str) -> Effects:
        before = self.fabric.version
        self.fabric.remove_function(name)
        return Effects(sync=self.fabric.version != before)

    def place(self, functions: Mapping[str, ServiceFunction], hosts: Mapping[str, Host]) -> Effects:
        """The service functions and hosts the API declares, in the fabric: those it no longer declares leave
        (learned hosts stay), a declared host keeps the IPv6 addresses Neighbour Discovery taught beside its own."""
        effects = Effects()
        for name in self.declared_functions - set(functions):
            effects.merge(self.remove_function(name))
        # Every change declares every function: one placed last time, as the very object, on a fabric that has
        # not changed since, is as it was then.
        last, version = self._placed
        unchanged = version == self.fabric.version
        for function in functions.values():
            if unchanged and last.get(function.name) is function or self.fabric.declared(function):
                continue
            with contextlib.suppress(SrfabricError):  # a port that is a fabric link: the chain check reports it
                effects.merge(self.add_function(function))
        self.declared_functions = set(functions)
        fabric = self.fabric
        for name in self.declared_hosts - set(hosts):
            fabric.remove_host(name)
        for host in hosts.values():
            if host.dpid in fabric.switches:
                kept = fabric.hosts.get(host.name)
                if kept is host:
                    continue  # as declared last time (translation keeps equal hosts identical)
                if kept is not None and (kept.mac, kept.dpid, kept.port) == (host.mac, host.dpid, host.port) \
                        and kept.ip6 != host.ip6:
                    host = replace(host, ip6=(*host.ip6, *(a for a in kept.ip6 if a not in host.ip6)))
                fabric.add_host(host)
        self.declared_hosts = set(hosts)
        self._placed = (functions, fabric.version)
        return effects

    def check_chains(self, chains: dict[str, Chain], check: Collection[str]) -> None:
        """Raise if a chain named in ``check`` cannot be routed beside the others (or conflicts with them)."""
        for name in sorted(check):
            if self.config.reactive and chains[name].destination is None:
                raise ModelError("reactive", f"chain {name} has no destination: it is sent on from its last "
                                             "function by the default routes, which reactive setup installs "
                                             "per flow at hosts' edges only")
        kept = [chain for name, chain in chains.items() if name not in check]
        for name in sorted(check):
            self.cache.check(self.fabric, kept, chains[name])
            kept.append(chains[name])

    def check_streams(self, streams: dict[str, SteeredStream], check: Collection[str]) -> None:
        """Raise if a stream named in ``check`` cannot be steered beside the others and the chains."""
        if not check:
            return  # nothing to check (a removal): the sync that follows compiles the rest
        self.cache.check_streams(self.fabric, list(self.chains.values()),
                                 [s for name, s in streams.items() if name not in check],
                                 [streams[name] for name in sorted(check)])

    # -- reconciliation ----------------------------------------------------------------
    def plan_sync(self) -> list[Push]:
        """What each connected switch lacks of the compiled state, to send with a barrier each."""
        return list(self.planned_sync())

    def planned_sync(self) -> Iterator[Push]:
        """``plan_sync`` a switch at a time: the compile at the first step, then each switch's push as it is
        planned (the shell sends it at once, so the switches apply theirs while the next is planned)."""
        tables, groups = self.wanted()
        for dpid in self.reconciler.touched([dpid for dpid in self.ports if dpid in self.taken], tables, groups):
            push = self.reconciler.plan(dpid, tables.get(dpid, NO_ENTRIES), groups.get(dpid, NO_GROUPS))
            if push is not None:
                yield push

    def wanted(self) -> tuple[dict[int, list[FlowEntry]], dict[int, list[GroupEntry]]]:
        """What each switch should hold now, as a sync sends it: the compiled state (its problems noted) with the
        reactive entries."""
        problems: list[SrfabricError] = []
        state = self.cache.state(self.fabric, list(self.chains.values()), problems, streams=list(self.streams.values()))
        self.problems = problems
        self.note(problems)
        tables, groups = state.entries, state.groups
        if self.config.reactive:
            tables, groups = reactive_tables(tables, self.config.steering), reactive_groups(groups)
        for dpid, flows in self.reactive.flows.items():  # a new list: the compiled one is kept by the cache
            tables[dpid] = [*tables.get(dpid, ()), *flows.values()]
        return tables, groups

    def note(self, problems: list[SrfabricError]) -> None:
        """Log each problem once when it appears (or its reason changes) and once when it is gone."""
        now = {problem.field: problem.message for problem in problems}
        for what, reason in now.items():
            if self.reported.get(what) != reason:
                log.warning("%s is not routed: %s", what, reason)
        for what in self.reported.keys() - now.keys():
            log.warning("%s is routed again", what)
        self.reported = now
