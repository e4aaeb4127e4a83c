"""The streams' decisions, in the core: the live planner for the fabric as it is (rebuilt on a topology change,
holding the kept streams' slots), every gated port's list named as its switch names the port, the refusal when
a path crosses a bridge whose clock is off, and ``StreamEffects``, what a decision sends. Pure: the shell
(:mod:`srfabric.controller.stream_install`) carries the effects out.

Examples
--------
>>> from srfabric.model.topo import tsn_fig1
>>> from srfabric.tsn.model.network import Stream
>>> fabric = tsn_fig1().to_fabric()
>>> planning = StreamPlanning(CycleConfig())
>>> planner = planning.planner(fabric, lambda: [], None)
>>> placed = planner.admit(Stream("cam", "h1", "h3", period_ns=1_000_000, size_bytes=200))
>>> [gcl.interface for gcl in planning.named_gcls(planner, fabric, lambda dpid, port: None, 0)]
['s1-eth3', 's2-eth2', 's5-eth4']
>>> planning.planner(fabric, lambda: [], None) is planner  # same topology: the same planner, its streams kept
True
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from srfabric.errors import ModelError
from srfabric.model.fabric import Fabric
from srfabric.model.stream import SteeredStream
from srfabric.tsn.gates.capabilities import PortCapabilities, over
from srfabric.tsn.gates.gcl import PortGcl
from srfabric.tsn.model.network import Stream
from srfabric.tsn.model.schedule import Assignment
from srfabric.tsn.runtime.clock_watch import ClockWatch
from srfabric.tsn.runtime.live import CycleConfig, LivePlanner, network_from_fabric

log = logging.getLogger(__name__)

Path = tuple[str, ...]  # talker, switches, listener


@dataclass(frozen=True)
class KeptStream:
    """An admitted stream as kept: its path (talker, switches, listener), slot and phase, and for a redundant
    stream its second tree's switches."""

    stream: Stream
    full: Path
    slot: int
    phase: int | None = None
    second: tuple[str, ...] | None = None


@dataclass
class StreamEffects:
    """What one stream decision sends: every stream's steering, every gated port's list (its base time is set
    when it goes out), the streams whose switches must confirm (None: every one), and how to undo the decision
    in the planner."""

    steered: dict[str, SteeredStream]
    gcls: list[PortGcl]
    confirm: list[str] | None = None
    undo: Callable[[], None] = lambda: None


class StreamPlanning:
    """The planner of the fabric's current topology, and the lists it gives, named for the switches."""

    def __init__(self, cycle: CycleConfig) -> None:
        self.cycle = cycle
        self._planned: tuple[int, LivePlanner] | None = None
        self.capabilities: dict[str, PortCapabilities] = {}  # by bridge name: what its ports' schedulers can run
        self._named: dict[tuple[str, str], tuple[PortGcl, str, PortGcl]] = {}  # port -> planner's, name, named
        # the fabric and version the names were read at (ports are named as their switches connect)
        self._named_at: tuple[Fabric | None, int] = (None, -1)

    def beyond_capabilities(self, gcls: Iterable[PortGcl]) -> str | None:
        """Why a list cannot run on its bridge (naming the bridge, the port, the leaf and the limit), or None:
        checked before anything is sent."""
        for gcl in gcls:
            caps = self.capabilities.get(gcl.node)
            reason = over(gcl, caps) if caps is not None else None
            if reason is not None:
                return f"bridge {gcl.node} port {gcl.interface}: {reason}"
        return None

    def planner(self, fabric: Fabric, kept: Callable[[], Iterable[KeptStream]], duty_percent: int | None
                ) -> LivePlanner:
        """The planner for ``fabric`` as it is now; on a new topology, a fresh one holding ``kept()``'s slots
        (a stream whose slot is taken keeps none, logged) and the kept duty cycle. ``ModelError`` when the
        scheduler cannot use the fabric."""
        if self._planned is not None and self._planned[0] == fabric.topology_version:
            return self._planned[1]
        planner = LivePlanner(network_from_fabric(fabric, self.cycle), self.cycle)
        for stream in kept():
            try:
                place_kept(planner, stream)
            except ModelError as error:
                log.warning("stream %s keeps no slot on this topology: %s", stream.stream.id, error)
        try:
            planner.set_duty(duty_percent)
        except ModelError as error:
            log.warning("the kept duty cycle is not used: %s", error)
        self._planned = (fabric.topology_version, planner)
        return planner

    def named_gcls(self, planner: LivePlanner, fabric: Fabric, port_name: Callable[[int, int], str | None],
                   base_time_ns: int) -> list[PortGcl]:
        """The planner's lists, each on the interface the switch itself names for that port (``s1-eth3`` under
        Mininet); the planner's network numbers ports as the switches do. A port whose list did not change
        while the fabric stood gets the very object it got last time (the shell sets base times on these: it
        keeps a running port's own), so only the changed ports cost a copy."""
        by_name = fabric.dpids_by_name()
        named, out = self._named, []
        fresh = self._named_at[0] is not fabric or self._named_at[1] != fabric.version  # names read again
        for gcl in planner.gcls(base_time_ns):
            kept = named.get((gcl.node, gcl.peer))
            if kept is None or kept[0] is not gcl or fresh:
                dpid = by_name.get(gcl.node)
                interface = gcl.interface if dpid is None else \
                    port_name(dpid, planner.network.port(gcl.node, gcl.peer)) or gcl.interface
                if kept is None or kept[0] is not gcl or kept[1] != interface:
                    kept = named[(gcl.node, gcl.peer)] = (gcl, interface, replace(gcl, interface=interface,
                                                                                  entries=list(gcl.entries)))
            out.append(kept[2])
        self._named_at = (fabric, fabric.version)
        if len(named) > 2 * len(out):
            self._named = {(gcl.node, gcl.peer): named[(gcl.node, gcl.peer)] for gcl in out}
        return out


def place_kept(planner: LivePlanner, kept: KeptStream) -> None:
    """A kept stream's slot and phase on a new planner (after a restart or a topology change): on both trees
    when it is redundant, or on the tree that still has all its links while a link of the other is down (its
    slot kept there, so no other stream takes it; both again once the link is back); raises ``ModelError``
    when they are taken."""
    at = (kept.slot, kept.phase or 0)
    if not kept.second:
        planner.place(kept.stream, Assignment(kept.stream.id, at[0], kept.full, at[1]))
        return
    second = (kept.full[0], *kept.second, kept.full[-1])
    try:
        planner.admit_redundant(kept.stream, kept.full, second, at)
        return
    except ModelError as both:
        whole = [tree for tree in (kept.full, second) if planner.network.has_path(tree)]
        if not whole:
            raise both from None
    planner.place(kept.stream, Assignment(kept.stream.id, at[0], whole[0], at[1]))


def latency_bound_ns(planner: LivePlanner, stream: Stream, full: Path, second: tuple[str, ...] | None) -> int:
    """From the talker's send to the last bit at the listener on ``full``; for a redundant stream (``second``:
    its other tree's switches), on the slower tree and one frame behind the other copy."""
    if second:
        return planner.redundant_latency_ns(stream, full, (full[0], *second, full[-1]))
    return planner.latency_ns(stream, full)


def clock_refusal(clocks: ClockWatch | None, paths: Iterable[Iterable[str]]) -> str | None:
    """Why no stream may be scheduled over ``paths`` now (a bridge on them off its grandmaster), or None."""
    state = None if clocks is None else clocks.unsynced(name for path in paths for name in path)
    if state is None:
        return None
    return f"gptp: bridge {state.bridge} is not synchronised ({state.reason}); no stream is scheduled through it " \
           "until it is"
