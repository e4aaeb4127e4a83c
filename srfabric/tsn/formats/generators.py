"""Seeded random topologies and streams like the TSSDN evaluation's (section 5.2).

Switch graphs come from NetworkX's Erdős–Rényi, random regular, Barabási–Albert
and Waxman models; hosts are attached to switches (round robin, or to the
nearest switch for Waxman). Every generator retries with the next seed until
the switch graph is connected.

Examples
--------
>>> net = erdos_renyi(switches=6, hosts=24, links=38, seed=1)
>>> len(net.switches), len(net.hosts), len(net.links)
(6, 24, 38)
>>> len(random_streams(net, 5, seed=1))
5
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable

import networkx as nx

from srfabric.errors import ModelError
from srfabric.tsn.model.network import HOST, SWITCH, Link, Network, Stream

TOPOLOGY_MODELS = ("er", "rrg", "ba", "waxman")


def _connected(make: Callable[[int], nx.Graph], seed: int) -> nx.Graph:
    for attempt in range(1000):
        graph = make(seed * 1000 + attempt)
        if graph.number_of_nodes() and nx.is_connected(graph):
            return graph
    raise ModelError("topology", "could not draw a connected switch graph in 1000 tries; add links")


def _with_hosts(graph: nx.Graph, hosts: int, rate_bps: int, attach: list[int] | None = None) -> Network:
    switches = [f"s{n + 1}" for n in sorted(graph.nodes)]
    names = [f"h{i + 1}" for i in range(hosts)]
    net = Network(kinds={name: SWITCH for name in switches} | {name: HOST for name in names})
    for u, v in sorted(graph.edges):
        net.add_link(Link(f"s{u + 1}", f"s{v + 1}", rate_bps))
    for i, name in enumerate(names):
        switch = attach[i] if attach is not None else i % len(switches)
        net.add_link(Link(name, f"s{switch + 1}", rate_bps))
    net.validate()
    return net


def erdos_renyi(switches: int, hosts: int, links: int, seed: int = 0, rate_bps: int = 1_000_000_000) -> Network:
    """G(n, m) switch graph with ``links - hosts`` switch links; hosts spread round robin."""
    inner = links - hosts
    if not switches - 1 <= inner <= switches * (switches - 1) // 2:
        raise ModelError("links", f"{switches} switches take {switches - 1}..{switches * (switches - 1) // 2} links")
    graph = _connected(lambda s: nx.gnm_random_graph(switches, inner, seed=s), seed)
    return _with_hosts(graph, hosts, rate_bps)


def random_regular(switches: int, hosts: int, degree: int, seed: int = 0, rate_bps: int = 1_000_000_000) -> Network:
    """Random ``degree``-regular switch graph."""
    if degree >= switches or (degree * switches) % 2:
        raise ModelError("degree", f"no {degree}-regular graph on {switches} switches")
    graph = _connected(lambda s: nx.random_regular_graph(degree, switches, seed=s), seed)
    return _with_hosts(graph, hosts, rate_bps)


def barabasi_albert(switches: int, hosts: int, attach: int, seed: int = 0, rate_bps: int = 1_000_000_000) -> Network:
    """Scale-free switch graph: each new switch links to ``attach`` existing ones."""
    if not 1 <= attach < switches:
        raise ModelError("attach", f"must be in 1..{switches - 1}, got {attach}")
    graph = _connected(lambda s: nx.barabasi_albert_graph(switches, attach, seed=s), seed)
    return _with_hosts(graph, hosts, rate_bps)


def waxman(
    switches: int, hosts: int, links: int, seed: int = 0, alpha: float = 0.6, beta: float = 0.4,
    rate_bps: int = 1_000_000_000,
) -> Network:
    """Geographic model: nodes in the unit square, links likelier when short (Waxman).

    Switch links are drawn with Waxman's probability ``beta * exp(-d / (alpha * L))``
    until the graph is connected; each host links to its nearest switch. Links
    beyond that, up to ``links``, are drawn with the same probability among the
    remaining switch pairs and then as second uplinks of hosts (multi-homing):
    the paper's 256 links for 200 hosts and 10 switches need more than the 45
    links 10 switches can have among themselves.
    """
    rng = random.Random(seed)
    most = switches * (switches - 1) // 2 + 2 * hosts
    if not hosts + switches - 1 <= links <= most:
        raise ModelError("links", f"{switches} switches and {hosts} hosts take {hosts + switches - 1}..{most} links")
    place = {n: (rng.random(), rng.random()) for n in range(switches + hosts)}
    scale = math.sqrt(2)

    def chance(a: int, b: int) -> float:
        return beta * math.exp(-math.dist(place[a], place[b]) / (alpha * scale))

    pairs = [(a, b) for a in range(switches) for b in range(a + 1, switches)]
    graph = nx.Graph()
    graph.add_nodes_from(range(switches))
    while not nx.is_connected(graph):
        a, b = rng.choice(pairs)
        if rng.random() < chance(a, b):
            graph.add_edge(a, b)
    nearest = [sorted(range(switches), key=lambda s: math.dist(place[s], place[switches + h])) for h in range(hosts)]
    net = _with_hosts(graph, hosts, rate_bps, attach=[order[0] for order in nearest])
    extra = links - len(net.links)
    spare = [p for p in pairs if not graph.has_edge(*p)]
    while extra > 0 and spare:
        a, b = spare[rng.randrange(len(spare))]
        if rng.random() < chance(a, b):
            net.add_link(Link(f"s{a + 1}", f"s{b + 1}", rate_bps))
            spare.remove((a, b))
            extra -= 1
    homed = list(range(hosts))
    rng.shuffle(homed)
    for h in homed[:extra]:
        net.add_link(Link(f"h{h + 1}", f"s{nearest[h][1] + 1}", rate_bps))
    net.validate()
    return net


def random_streams(
    network: Network, count: int, seed: int = 0, period_ns: int = 1_000_000, size_bytes: int = 1500
) -> list[Stream]:
    """``count`` streams between random distinct hosts."""
    rng = random.Random(seed)
    hosts = network.hosts
    streams = []
    for index in range(count):
        src, dst = rng.sample(hosts, 2)
        streams.append(Stream(f"f{index + 1}", src, dst, period_ns, size_bytes))
    return streams
