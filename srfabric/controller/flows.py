"""Reactive flow setup: a new IPv4 flow's first packet reaches the controller, which works out the flow's entries
(``rules/reactive.py``: one at the ingress under source routing, one per switch with hop-by-hop rules, one per
later pathlet), and hands back what to send. The reactive entries are kept with the links their routes cross,
so that a lost link drops exactly the flows over it. Pure: no I/O.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Container
from dataclasses import dataclass
from typing import Any

from srfabric.controller.config import ControllerConfig, FlowSetup
from srfabric.controller.outbox import Send
from srfabric.controller.packets import parse_five_tuple
from srfabric.controller.reconcile import Reconciler
from srfabric.errors import SrfabricError
from srfabric.model.fabric import Fabric
from srfabric.model.flow import FiveTuple
from srfabric.rules.entries import EntryKey, FlowEntry, Match
from srfabric.rules.openflow.ofbind import flow_add, wire_cookie
from srfabric.rules.openflow.wire import step_flow_add, step_packet_out
from srfabric.rules.reactive import FlowPlan, FlowStep, RouteCache

Link = tuple[int, int]


@dataclass(slots=True)
class NewFlow:
    """One new flow's setup: ``later`` goes out at once (entries for switches further on), and once the switches
    in ``barriers`` have confirmed them, ``first_packet`` gives the ingress entry and the packet to send together."""

    dpid: int
    in_port: int
    data: bytes
    first: FlowEntry
    plan: FlowPlan
    flow: FiveTuple
    received_ns: int
    header_ns: int
    bytes_up: int
    bytes_down: int
    searched: bool
    later: list[Send]
    barriers: list[int]


class ReactiveFlows:
    """The reactive entries each switch holds, the links each one's route crosses, and the setups seen."""

    def __init__(self, reconciler: Reconciler) -> None:
        self.reconciler = reconciler
        self.flows: dict[int, dict[EntryKey, FlowEntry]] = {}  # reactive entries, kept by sync
        self.links: dict[tuple[int, EntryKey], frozenset[Link]] = {}  # reactive entry -> the links its route crosses
        # and back: a lost link finds its entries without a walk over every flow (issue 60)
        self.on_link: dict[Link, set[tuple[int, EntryKey]]] = {}
        self.setups: deque[FlowSetup] = deque(maxlen=100_000)
        self.routes = RouteCache()

    def flow_in(self, fabric: Fabric, config: ControllerConfig, dpid: int, in_port: int, data: bytes,
                received_ns: int, bytes_up: int, connected: Container[int]) -> NewFlow:
        """A new flow's packet-in on ``dpid``: its entries, ready to send. ``SrfabricError`` when it cannot be set
        up (no route, a switch on it not connected)."""
        clock = config.clock
        flow = parse_five_tuple(data)
        misses = self.routes.misses
        begin = clock()
        plan = self.routes.plan(fabric, flow, (dpid, in_port), config.codec, config.steering)
        placed = plan.entries(flow, config.flow_idle_timeout)
        header_ns = clock() - begin
        searched = self.routes.misses > misses
        *later, (_, first) = placed
        if not later:  # source routing in one pathlet: one flow-mod and the packet, no barrier
            return NewFlow(dpid, in_port, data, first, plan, flow, received_ns, header_ns, bytes_up, 0, searched, [],
                           [])
        missing = {later_dpid for later_dpid, _ in later if later_dpid not in connected}
        if missing:
            raise SrfabricError("switch", f"{min(missing):#x} on the flow's path is not connected or is led by "
                                          "another instance")
        sends, bytes_down = [], 0
        for step, (later_dpid, entry) in zip(plan.steps[:-1], later, strict=True):
            msg = self.message(later_dpid, entry, plan, step)
            sends.append(Send(later_dpid, (msg,)))
            bytes_down += len(msg.buf)
        # Switches further on must hold their entry before the packet can reach them: a barrier each. The
        # ingress entry's links are known now, so that a link lost meanwhile stops it (``forget_over``).
        self._remember((dpid, first.key), plan.links)
        barriers = sorted({later_dpid for later_dpid, _ in later})
        barrier_bytes = 8 * len(barriers)
        return NewFlow(dpid, in_port, data, first, plan, flow, received_ns, header_ns, bytes_up + barrier_bytes,
                       bytes_down + barrier_bytes, searched, sends, barriers)

    def first_packet(self, new: NewFlow) -> tuple[Any, Any] | None:
        """The ingress entry's flow-mod and the packet-out, to leave together (one wake-up of the switch); None if
        a link on the route was lost while the switches further on confirmed (the flow's next packet starts
        again)."""
        if new.barriers and (new.dpid, new.first.key) not in self.links:
            return None
        step = new.plan.steps[-1]
        return self.message(new.dpid, new.first, new.plan, step), step_packet_out(new.in_port, step, new.data)

    def sent(self, new: NewFlow, messages: tuple[Any, Any], sent_ns: int) -> None:
        """Record the setup once its first packet is written."""
        mod, out = messages
        self.setups.append(FlowSetup(new.dpid, new.flow, new.received_ns, new.header_ns, sent_ns, new.bytes_up,
                                     new.bytes_down + len(mod.buf) + len(out.buf), len(out.buf), new.plan.switches,
                                     new.searched))

    def message(self, dpid: int, entry: FlowEntry, plan: FlowPlan, step: FlowStep) -> Any:
        """One reactive entry's flow-mod, remembered as installed on ``dpid`` with the links its route crosses."""
        msg = step_flow_add(entry, step) or flow_add(entry)
        self.reconciler.count(dpid)
        key = entry.key
        self.flows.setdefault(dpid, {})[key] = entry
        self.reconciler.add(dpid, key, wire_cookie(entry))
        self._remember((dpid, key), plan.links)
        return msg

    def forget_over(self, lost: set[Link]) -> bool:
        """Drop the reactive entries whose route crossed a lost link (either direction): the next sync takes
        them off their switches, and the flow's next packet sets it up again over a live route. True when any
        was dropped."""
        crossing = {entry for link in lost for entry in self.on_link.get(link, ())}
        for dpid, key in crossing:
            self._drop((dpid, key))
            self.flows.get(dpid, {}).pop(key, None)
        return bool(crossing)

    def _remember(self, entry: tuple[int, EntryKey], links: frozenset[Link]) -> None:
        self._drop(entry)
        self.links[entry] = links
        for link in links:
            self.on_link.setdefault(link, set()).add(entry)

    def _drop(self, entry: tuple[int, EntryKey]) -> None:
        for link in self.links.pop(entry, frozenset()):
            users = self.on_link.get(link)
            if users is not None:
                users.discard(entry)
                if not users:
                    del self.on_link[link]

    def removed(self, dpid: int, table: int, priority: int, match: Match, cookie: int) -> None:
        """A reactive entry the switch let go (idle): forget it, so that no sync puts it back; the flow's next
        packet is a new flow."""
        key = (table, priority, match)
        flows = self.flows.get(dpid, {})
        entry = flows.get(key)
        if entry is None or wire_cookie(entry) != cookie:
            return  # not one of ours, or already replaced by a newer one
        del flows[key]
        self._drop((dpid, key))
        self.reconciler.forget(dpid, key)
