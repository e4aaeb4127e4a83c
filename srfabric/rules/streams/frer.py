"""A redundant stream (IEEE 802.1CB, ``num-seamless-trees: 2``): at its talker's edge one group of type all with a
bucket per path, each bucket writing its own path's whole header. The talker writes the R-TAG (end-system
replication, as 802.1CB allows); the listener's interface eliminates the second copy (``bpf/frer_eliminate.c``).
Transit switches and the listener's edge hold nothing per stream, only entries the same for every redundant
stream: twins of their decode entries that put R-TAG frames in the time-triggered queue, and at the listener's
edge delivery by MAC address (the R-TAG hides the IPv4 header the other deliveries match).

The talker's frames are told apart by the R-TAG's EtherType and the listener's MAC: OpenFlow cannot read the
IPv4 header behind an R-TAG, so a talker has one redundant stream per listener.

Only the mac-nibble codec carries an R-TAG: its header is the source MAC, so the tag stays where the talker put
it. mac-vlan-mpls's egress pops MPLS back to IPv4, which would take the tag for an IPv4 header.
"""

from __future__ import annotations

from dataclasses import replace

from srfabric.errors import RoutingError
from srfabric.model.fabric import Fabric
from srfabric.model.stream import SteeredStream
from srfabric.rules.codec_rules import CodecRules
from srfabric.rules.entries import Action, Bucket, FlowEntry, Group, GroupEntry, Kind, Meter, Output, cookie, match
from srfabric.rules.headers import pathlet_steps
from srfabric.rules.pipeline import DELIVER, HOST_IN, PRIO_ROUTE, PRIO_STREAM
from srfabric.rules.streams.steering import explicit_route
from srfabric.rules.streams.time_triggered import marked_twins, queued

RTAG_ETHERTYPE = 0xF1C1  # IEEE 802.1CB's R-TAG
FRER_GROUPS = 1 << 28  # apart from chains', taps', proxies' and routes' groups (owners have 24 bits)
CODECS = ("mac-nibble",)


def frer_group_id(owner: int) -> int:
    """
    >>> hex(frer_group_id(5))
    '0x10000005'
    """
    return FRER_GROUPS | owner


def redundant_stream(fabric: Fabric, stream: SteeredStream, rules: CodecRules, sre: set[int],
                     tt_queue: int | None) -> tuple[list[tuple[int, FlowEntry]], list[tuple[int, GroupEntry]]]:
    """The talker edge's entry and all group for a stream with a ``second_path``: a bucket for each path that
    can be routed now (a path whose link is down loses its bucket; the stream is refused only when both are)."""
    if rules.name not in CODECS:
        raise RoutingError("num_seamless_trees", f"stream {stream.name}: the {rules.name} codec cannot carry an "
                                                 f"802.1CB R-TAG (its egress pops MPLS back to IPv4); run "
                                                 f"{' or '.join(CODECS)} for redundant streams")
    buckets, broken, placed = [], [], []
    for field, path in (("path", stream.path), ("second_path", stream.second_path)):
        try:
            route = explicit_route(fabric, replace(stream, path=path, second_path=()))
        except RoutingError as error:  # a link of this path is down: the other path carries the stream
            broken.append(RoutingError(field, f"stream {stream.name}: {error.message}"))
            continue
        steps = pathlet_steps(route, rules, sre, f"stream {stream.name}")
        if len(steps) != 1:
            raise RoutingError(field, f"stream {stream.name}: a redundant stream's path must leave its talker's "
                                      f"switch and fit one header ({rules.capacity + 1} links), "
                                      f"not {len(route.hops)} hops")
        actions: tuple[Action, ...] = steps[0][1]
        if stream.time_triggered and tt_queue is not None:  # the R-TAG marks it on later hops (``rtag_entries``)
            actions = queued(actions, tt_queue)
            placed += rtag_queue_entries(rules, [hop.dpid for hop in route.hops[1:]] + [route.delivery[0]],
                                         tt_queue)
        buckets.append(Bucket(actions))
    if not buckets:
        raise broken[0]
    talker, listener = fabric.hosts[stream.talker], fabric.hosts[stream.listener]
    group = GroupEntry(frer_group_id(stream.owner), "all", tuple(buckets))
    policed: tuple[Action, ...] = (Meter(stream.owner, *stream.meter),) if stream.meter is not None else ()
    entry = FlowEntry(HOST_IN, PRIO_STREAM, match(in_port=talker.port, eth_type=RTAG_ETHERTYPE, eth_dst=listener.mac),
                      (*policed, Group(group.group_id)), cookie=cookie(Kind.STREAM, stream.owner))
    deliver = FlowEntry(DELIVER, PRIO_ROUTE, match(eth_type=RTAG_ETHERTYPE, eth_dst=listener.mac),
                        (Output(listener.port),), cookie=cookie(Kind.DELIVER))
    return [(talker.dpid, entry), (listener.dpid, deliver), *placed], [(talker.dpid, group)]


def rtag_queue_entries(rules: CodecRules, dpids: list[int], queue: int) -> list[tuple[int, FlowEntry]]:
    """On each switch past the talker's edge, twins of the decode entries for R-TAG frames, which also choose the
    time-triggered queue (the DSCP the other streams are marked by is hidden behind the tag); the last switch's
    exhausted entry too. The same entries for every redundant stream: no switch holds any per stream."""
    return [(dpid, entry) for dpid in dpids
            for entry in marked_twins(rules, {"eth_type": RTAG_ETHERTYPE}, dpid == dpids[-1], queue)]
