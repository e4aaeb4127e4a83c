"""Two ways between two switches for a redundant stream (IEEE 802.1CB FRER): frames are replicated at the talker's
switch and the duplicates eliminated at the listener's, so the two paths between them should share no link, and
no switch where the topology allows. Each path is a list of switch names, ends included. Pure.

The pair is found as a minimum-cost flow of two units (Suurballe's problem): the two paths together cross as
few links as any disjoint pair can.

>>> from srfabric.model.topo import tsn_fig1
>>> pair = disjoint_pair(tsn_fig1().to_fabric(), "s1", "s5")
>>> pair.paths, pair.shared_switches, pair.shared_links
((('s1', 's2', 's5'), ('s1', 's3', 's4', 's5')), (), ())
"""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx

from srfabric.errors import RoutingError
from srfabric.model.fabric import Fabric


@dataclass(frozen=True)
class DisjointPair:
    """Two paths between the same two switches, and what they still share besides their ends."""

    paths: tuple[tuple[str, ...], tuple[str, ...]]
    shared_switches: tuple[str, ...]  # inner switches both cross (empty unless only links could be kept apart)
    shared_links: tuple[tuple[str, str], ...]  # always empty: a pair sharing a link is refused


def switch_graph(fabric: Fabric) -> nx.Graph:
    """The fabric's switches (by name) and the links between them, each once."""
    names = {dpid: switch.name for dpid, switch in fabric.switches.items()}
    graph = nx.Graph()
    graph.add_nodes_from(names.values())
    graph.add_edges_from((names[a[0]], names[b[0]]) for a, b in fabric.links.items()
                         if a[0] in names and b[0] in names and a[0] != b[0])
    return graph


def disjoint_pair(fabric: Fabric, source: str, target: str) -> DisjointPair:
    """Two paths from switch ``source`` to switch ``target`` sharing no switch on the way, or failing that no link
    (the switches they share are named); ``RoutingError`` when even the links cannot be kept apart."""
    graph = switch_graph(fabric)
    for end, name in (("source", source), ("target", target)):
        if name not in graph:
            raise RoutingError(end, f"{name!r} is not a switch of the fabric")
    if source == target:
        raise RoutingError("target", f"the talker and the listener are both on {source}: no way to replicate on")
    paths = _two_paths(_split_nodes(graph, source, target), (source, "out"), (target, "in"))
    if paths is not None:
        return DisjointPair(in_order(_names(paths[0]), _names(paths[1])), (), ())
    paths = _two_paths(graph.to_directed(), source, target)
    if paths is None:
        raise RoutingError("path", f"no two paths from {source} to {target} share no link: a single link or switch "
                                   "carries every way between them (FRER needs two)")
    first, second = (tuple(str(node) for node in path) for path in paths)
    shared = tuple(sorted(set(first[1:-1]) & set(second[1:-1])))
    return DisjointPair(in_order(first, second), shared, ())


def in_order(first: tuple[str, ...], second: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The shorter path first, then by name: the same pair whatever order the fabric's links were learned in.

    >>> in_order(("s1", "s3", "s4", "s5"), ("s1", "s2", "s5"))
    (('s1', 's2', 's5'), ('s1', 's3', 's4', 's5'))
    """
    ordered = sorted((first, second), key=lambda path: (len(path), path))
    return ordered[0], ordered[1]


def _split_nodes(graph: nx.Graph, source: str, target: str) -> nx.DiGraph:
    """Each switch as an in-node and an out-node joined by one unit of capacity, so that a flow of two units
    crosses no switch twice."""
    split = nx.DiGraph()
    for node in graph.nodes:
        split.add_edge((node, "in"), (node, "out"), capacity=1 if node not in (source, target) else 2, weight=0)
    for a, b in graph.edges:
        split.add_edge((a, "out"), (b, "in"), capacity=1, weight=1)
        split.add_edge((b, "out"), (a, "in"), capacity=1, weight=1)
    return split


def _two_paths(graph: nx.DiGraph, source: object, target: object) -> list[list[object]] | None:
    """Two paths carrying two units of a minimum-cost flow, or None when the cut between the ends is one unit."""
    for a, b in graph.edges:
        graph.edges[a, b].setdefault("capacity", 1)
        graph.edges[a, b].setdefault("weight", 1)
    if nx.maximum_flow_value(graph, source, target) < 2:
        return None
    graph.add_node("_source")
    graph.add_edge("_source", source, capacity=2, weight=0)
    flow = nx.max_flow_min_cost(graph, "_source", target)
    paths = []
    for _ in range(2):
        path, node = [source], source
        while node != target:
            node = next(b for b, units in flow[node].items() if units > 0)
            flow[path[-1]][node] -= 1
            path.append(node)
        paths.append(path)
    return paths


def _names(path: list[object]) -> tuple[str, ...]:
    """A split-node path as switch names (each switch's in- and out-node once)."""
    names: list[str] = []
    for node in path:
        assert isinstance(node, tuple)
        if not names or names[-1] != node[0]:
            names.append(node[0])
    return tuple(names)
