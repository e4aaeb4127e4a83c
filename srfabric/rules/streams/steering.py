"""A steered stream's one entry: at its talker's edge, match its frames, write the whole path, pick the queue.

Transit and egress switches need nothing per stream: the header carries the
path and the time-triggered mark (``time_triggered``) carries the class. So a
stream's path must fit one header; re-routing a stream rewrites one entry at
one switch.

Examples
--------
>>> from srfabric.model.topo import tsn_fig1
>>> fabric = tsn_fig1().to_fabric()
>>> stream = SteeredStream("s", 1, "h1", "h3", ("s1", "s3", "s4", "s5"), udp_dst=5001)
>>> explicit_route(fabric, stream).ports()
[4, 2, 2]
>>> placed = stream_entries(fabric, stream, rules_for("mac-nibble"), set(fabric.switches), 6)
>>> [(fabric.switches[dpid].name, entry.priority) for dpid, entry in placed]
[('s1', 300)]
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from srfabric.errors import RoutingError
from srfabric.model.fabric import Fabric, Host
from srfabric.model.stream import SteeredStream
from srfabric.routing.paths import Hop, Route
from srfabric.rules.codec_rules import TT_PCP, CodecRules, rules_for
from srfabric.rules.entries import Action, FlowEntry, Kind, Meter, Output, cookie, match
from srfabric.rules.headers import pathlet_steps
from srfabric.rules.pipeline import HOST_IN, PRIO_STREAM
from srfabric.rules.streams.time_triggered import marked_queues, queued

__all__ = ["check_path_ends", "explicit_route", "rules_for", "stream_entries", "switch_path"]


def switch_path(fabric: Fabric, names: Sequence[str]) -> list[int]:
    """The datapath ids of a path given by switch names: each known, crossed once, linked to the one before.

    Raises :class:`RoutingError` naming the hop (``path[2]``).
    """
    by_name = fabric.dpids_by_name()
    linked = {(a[0], b[0]) for a, b in fabric.links.items()}
    dpids: list[int] = []
    for index, name in enumerate(names):
        where = f"path[{index}]"
        if name not in by_name:
            raise RoutingError(where, f"{name!r} is not a switch of the fabric.")
        if name in names[:index]:
            raise RoutingError(where, f"{name} is crossed twice; a path has no loops.")
        if dpids and (dpids[-1], by_name[name]) not in linked:
            raise RoutingError(where, f"no link from {names[index - 1]} to {name}.")
        dpids.append(by_name[name])
    return dpids


def check_path_ends(fabric: Fabric, names: Sequence[str], talker: Host, listener: Host) -> None:
    """A non-empty path starts at the talker's switch and ends at the listener's."""
    for role, host, at in (("talker", talker, 0), ("listener", listener, len(names) - 1)):
        switch = fabric.switches[host.dpid].name
        if names[at] != switch:
            raise RoutingError(f"path[{at}]", f"must be the {role}'s switch {switch}, not {names[at]}.")


def explicit_route(fabric: Fabric, stream: SteeredStream) -> Route:
    """The route along ``stream.path`` (switch names), from the talker's port to the listener's."""
    hosts = []
    for role in ("talker", "listener"):
        host = fabric.hosts.get(getattr(stream, role))
        if host is None:
            raise RoutingError(role, f"stream {stream.name}: host {getattr(stream, role)!r} is not known to the "
                                     "controller")
        hosts.append(host)
    talker, listener = hosts
    dpids = switch_path(fabric, stream.path)
    check_path_ends(fabric, stream.path, talker, listener)
    graph = fabric.graph()
    hops = []
    for a, b in itertools.pairwise(dpids):
        port = graph.edges[a, b]["port"]
        hops.append(Hop(a, port, fabric.links[(a, port)]))
    return Route((talker.dpid, talker.port), tuple(hops), (listener.dpid, listener.port))


def stream_entries(
    fabric: Fabric, stream: SteeredStream, rules: CodecRules, sre: set[int], tt_queue: int | None
) -> list[tuple[int, FlowEntry]]:
    """The talker edge's entry for ``stream``; raises when its path needs more than one header."""
    route = explicit_route(fabric, stream)
    steps = pathlet_steps(route, rules, sre, f"stream {stream.name}")
    if len(steps) > 1:
        raise RoutingError("path", f"stream {stream.name}: {len(route.hops)} hops need {len(steps)} headers; a "
                                   f"stream's path must fit one ({rules.capacity + 1} links) so that only its "
                                   "talker's edge holds its state")
    actions: tuple[Action, ...] = steps[0][1] if steps else (Output(route.delivery[1]),)
    if tt_queue is not None and (stream.time_triggered or stream.sr_class is not None):
        priority = TT_PCP if stream.time_triggered else stream.sr_class
        queue = marked_queues(tt_queue)[priority]  # type: ignore[index]
        actions = queued(rules.mark(actions, priority) if steps else actions, queue)  # type: ignore[arg-type]
    if stream.meter is not None:  # policed first, as 802.1Qci's flow meter sits before the queues
        actions = (Meter(stream.owner, *stream.meter), *actions)
    talker = fabric.hosts[stream.talker]
    addresses = {host.name: host.ip for host in fabric.hosts.values()}
    fields = stream.match_fields(addresses)
    entry = FlowEntry(HOST_IN, PRIO_STREAM, match(**fields, in_port=talker.port), actions,
                      cookie=cookie(Kind.STREAM, stream.owner))
    return [(talker.dpid, entry)]
