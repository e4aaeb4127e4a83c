"""Paths through the fabric as (switch, egress port) hops.

A route starts at the port where the packet enters the fabric and ends at the
switch that delivers it to its destination host. After every hop the packet
arrives somewhere: over a link at the peer port, or, when the hop leads into a
service function, back from that function's egress port.
"""

from __future__ import annotations

import hashlib
import itertools
import struct
from dataclasses import dataclass

import networkx as nx

from srfabric.errors import RoutingError
from srfabric.model.chain import Chain
from srfabric.model.fabric import Endpoint, Fabric


@dataclass(frozen=True)
class Hop:
    """Leave switch ``dpid`` through ``port``; the packet then arrives at ``arrival``."""

    dpid: int
    port: int
    arrival: Endpoint


@dataclass(frozen=True)
class Route:
    """Hops from ``entry`` (where the packet enters) until the delivering switch.

    ``delivery`` is the destination host's port; the last hop arrives at its switch.
    """

    entry: Endpoint
    hops: tuple[Hop, ...]
    delivery: Endpoint

    def ports(self) -> list[int]:
        return [hop.port for hop in self.hops]

    def visits(self) -> list[tuple[int, int, int]]:
        """(switch, port the packet arrives on, port it leaves by) for each switch it enters, in order.

        The last visit is the delivering switch, leaving by the destination host's port.
        """
        visits = []
        arrival = self.entry
        for hop in self.hops:
            visits.append((hop.dpid, arrival[1], hop.port))
            arrival = hop.arrival
        visits.append((self.delivery[0], arrival[1], self.delivery[1]))
        return visits


def no_path(what: str, src: int, dst: int) -> RoutingError:
    """The error for switch ``src`` reaching no path to switch ``dst``, naming ``what`` asked for it."""
    return RoutingError(what, f"no path from switch {src:#x} to switch {dst:#x}")


def _switch_path(fabric: Fabric, src: int, dst: int, what: str) -> list[Hop]:
    if src == dst:
        return []
    try:
        nodes = nx.shortest_path(fabric.graph(), src, dst)
    except (nx.NetworkXNoPath, nx.NodeNotFound):
        raise no_path(what, src, dst) from None
    hops = []
    for a, b in itertools.pairwise(nodes):
        port = fabric.graph().edges[a, b]["port"]
        hops.append(Hop(a, port, fabric.links[(a, port)]))
    return hops


def _rank(destination: int, dpid: int, neighbour: int) -> int:
    # A keyed digest, not CRC-32: CRC is linear, so its order of neighbours would barely depend on the destination.
    return int.from_bytes(hashlib.blake2b(struct.pack("!QQQ", destination, dpid, neighbour), digest_size=8).digest())


def tree_path(fabric: Fabric, src: int, dst: int, what: str) -> list[Hop]:
    """A shortest path from switch ``src`` to switch ``dst`` along ``dst``'s tree: each switch on it leaves by
    the neighbour one link closer to ``dst`` that ranks first for (``dst``, switch, neighbour) in a fixed hash.

    Destinations spread over equal-cost paths (a fat tree's cores share them), every source reaching one
    switch follows the same choices there (so per-switch next hops, as hop-by-hop rules hold them, give the
    same paths), and a lost link moves only the paths that crossed it: a neighbour that stays one link
    closer keeps its rank (rendezvous hashing).

    Examples
    --------
    >>> from srfabric.model.topo import fat_tree
    >>> fabric = fat_tree(4).to_fabric()
    >>> edges = sorted(d for d in fabric.switches if d >> 8 == 1)  # edge switches
    >>> sorted({tree_path(fabric, edges[0], dst, "x")[0].port for dst in edges[2:]})  # both uplinks taken
    [1, 2]
    """
    if src == dst:
        return []
    distance = fabric.distances_to(dst)
    if src not in distance:
        raise no_path(what, src, dst)
    graph = fabric.graph()
    hops = []
    node = src
    while node != dst:
        closer = [n for n in graph.successors(node) if distance.get(n) == distance[node] - 1]
        chosen = max(closer, key=lambda n: _rank(dst, node, n))
        port = graph.edges[node, chosen]["port"]
        hops.append(Hop(node, port, fabric.links[(node, port)]))
        node = chosen
    return hops


def chain_route(fabric: Fabric, chain: Chain, functions: tuple[str, ...] | None = None) -> Route:
    """The shortest route from the chain's source through each function in order to its destination.

    ``functions`` replaces the chain's own list (one alternative of a load-balanced chain). A chain without a
    destination ends where its last function hands frames back.

    Examples
    --------
    >>> from srfabric.model.topo import tsn_fig1
    >>> from srfabric.model import Chain, FlowClassifier
    >>> fabric = tsn_fig1().to_fabric()
    >>> route = chain_route(fabric, Chain("c", FlowClassifier(), (), "h1", "h3"))
    >>> route.ports()
    [3, 2]
    """
    source = fabric.hosts[chain.source]
    hops, position = _through_functions(fabric, (source.dpid, source.port),
                                        chain.functions if functions is None else functions)
    if chain.destination is None:
        return Route((source.dpid, source.port), tuple(hops), position)
    destination = fabric.hosts[chain.destination]
    hops += _switch_path(fabric, position[0], destination.dpid, "destination")
    return Route((source.dpid, source.port), tuple(hops), (destination.dpid, destination.port))


def tap_route(fabric: Fabric, chain: Chain, tap: str) -> Route:
    """From the chain's source into the tap function; the route ends where the tap hands the copy back."""
    source = fabric.hosts[chain.source]
    hops, position = _through_functions(fabric, (source.dpid, source.port), (tap,))
    return Route((source.dpid, source.port), tuple(hops), position)


def _through_functions(fabric: Fabric, position: Endpoint, functions: tuple[str, ...]) -> tuple[list[Hop], Endpoint]:
    """Hops from ``position`` through each function in order, and where the last one hands frames back."""
    hops: list[Hop] = []
    for index, name in enumerate(functions):
        function = fabric.functions.get(name)
        if function is None:
            raise RoutingError(f"functions[{index}]", f"service function {name!r} is unknown")
        hops += _switch_path(fabric, position[0], function.ingress[0], f"functions[{index}]")
        hops.append(Hop(function.ingress[0], function.ingress[1], function.egress))
        position = function.egress
    return hops, position


def host_route(fabric: Fabric, entry: Endpoint, destination: str) -> Route:
    """The shortest route from a switch port to a host (default, non-chain traffic), along the tree of the host's
    switch (``tree_path``)."""
    host = fabric.hosts[destination]
    hops = tree_path(fabric, entry[0], host.dpid, "destination")
    return Route(entry, tuple(hops), (host.dpid, host.port))
