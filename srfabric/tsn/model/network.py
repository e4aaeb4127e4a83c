"""The network and stream model of time-triggered scheduling (TSSDN, section 2).

A :class:`Network` is pure data: named nodes that are hosts or switches, and
full-duplex links, each of which is two directed edges. Schedulers work on the
directed edges by index, so :class:`Network` numbers them once.

Examples
--------
>>> net = Network.build(
...     nodes=[("h1", "host"), ("s1", "switch"), ("h2", "host")],
...     links=[("h1", "s1"), ("s1", "h2")],
... )
>>> net.edges
[('h1', 's1'), ('s1', 'h1'), ('s1', 'h2'), ('h2', 's1')]
>>> net.interface("s1", "h2")
's1-eth2'
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import networkx as nx

from srfabric.errors import ModelError

HOST = "host"
SWITCH = "switch"
NODE_KINDS = (HOST, SWITCH)
DEFAULT_RATE_BPS = 1_000_000_000


@dataclass(frozen=True)
class Link:
    """A full-duplex link; ``a_port``/``b_port`` number the interfaces (``<node>-eth<port>``)."""

    a: str
    b: str
    rate_bps: int = DEFAULT_RATE_BPS
    t_proc_ns: int = 1000
    t_prop_ns: int = 50
    a_port: int = 0
    b_port: int = 0


@dataclass(frozen=True)
class Stream:
    """A time-triggered flow: one frame of ``size_bytes`` every ``period_ns`` from src to dst."""

    id: str
    src: str
    dst: str
    period_ns: int = 1_000_000
    size_bytes: int = 1500
    deadline_ns: int | None = None
    jitter_ns: int | None = None  # as read from tsnkit's files; kept for its task file (the slot model has none)


@dataclass
class Network:
    """Nodes and links; the directed edges are numbered in link order (a→b, then b→a)."""

    kinds: dict[str, str]
    links: list[Link] = field(default_factory=list)

    @classmethod
    def build(
        cls, nodes: Iterable[tuple[str, str]], links: Iterable[tuple[str, str]], rate_bps: int = DEFAULT_RATE_BPS
    ) -> Network:
        """Make a network from ``(id, kind)`` pairs and ``(a, b)`` pairs, numbering ports in order."""
        net = cls(kinds=dict(nodes))
        for a, b in links:
            net.add_link(Link(a, b, rate_bps))
        net.validate()
        return net

    def add_link(self, link: Link) -> None:
        """Append ``link``, giving it the next free port number on each side when it has none."""
        a_port = link.a_port or self._next_port(link.a)
        b_port = link.b_port or self._next_port(link.b)
        self.links.append(
            Link(link.a, link.b, link.rate_bps, link.t_proc_ns, link.t_prop_ns, a_port, b_port)
        )
        self.__dict__.pop("edges", None)
        self.__dict__.pop("edge_index", None)
        self.__dict__.pop("_ports", None)

    def _next_port(self, node: str) -> int:
        used = [lk.a_port for lk in self.links if lk.a == node] + [lk.b_port for lk in self.links if lk.b == node]
        return max(used, default=0) + 1

    def validate(self) -> None:
        """Raise :class:`ModelError` naming the first bad node or link."""
        for node, kind in self.kinds.items():
            if kind not in NODE_KINDS:
                raise ModelError(f"nodes[{node}].kind", f"must be one of {', '.join(NODE_KINDS)}, got {kind!r}")
        seen: set[frozenset[str]] = set()
        for index, link in enumerate(self.links):
            where = f"links[{index}]"
            for end in (link.a, link.b):
                if end not in self.kinds:
                    raise ModelError(where, f"node {end!r} is not in nodes")
            if link.a == link.b:
                raise ModelError(where, f"a link cannot join {link.a!r} to itself")
            if link.rate_bps <= 0:
                raise ModelError(f"{where}.rate_bps", f"must be > 0, got {link.rate_bps}")
            if link.t_proc_ns < 0 or link.t_prop_ns < 0:
                raise ModelError(where, "t_proc and t_prop must be >= 0")
            pair = frozenset((link.a, link.b))
            if pair in seen:
                raise ModelError(where, f"{link.a!r} and {link.b!r} are already linked")
            seen.add(pair)
            if self.kinds[link.a] == HOST and self.kinds[link.b] == HOST:
                raise ModelError(where, "two hosts cannot be linked directly; put a switch between them")
        ports: dict[tuple[str, int], int] = {}
        for index, link in enumerate(self.links):
            for node, port in ((link.a, link.a_port), (link.b, link.b_port)):
                if (node, port) in ports:
                    other = ports[node, port]
                    raise ModelError(f"links[{index}]", f"port {port} of {node!r} is used by links[{other}]")
                ports[node, port] = index

    @property
    def hosts(self) -> list[str]:
        return [node for node, kind in self.kinds.items() if kind == HOST]

    @property
    def switches(self) -> list[str]:
        return [node for node, kind in self.kinds.items() if kind == SWITCH]

    @cached_property
    def edges(self) -> list[tuple[str, str]]:
        """Directed edges: link i gives edges 2i (a→b) and 2i+1 (b→a)."""
        out: list[tuple[str, str]] = []
        for link in self.links:
            out += [(link.a, link.b), (link.b, link.a)]
        return out

    @cached_property
    def edge_index(self) -> dict[tuple[str, str], int]:
        return {edge: index for index, edge in enumerate(self.edges)}

    @cached_property
    def _ports(self) -> dict[tuple[str, str], int]:
        ports: dict[tuple[str, str], int] = {}
        for link in self.links:
            ports[link.a, link.b] = link.a_port
            ports[link.b, link.a] = link.b_port
        return ports

    def link_of(self, edge: int) -> Link:
        return self.links[edge // 2]

    def port(self, node: str, peer: str) -> int:
        """The port number of ``node`` that faces ``peer``."""
        return self._ports[node, peer]

    def interface(self, node: str, peer: str) -> str:
        """Mininet-style interface name of ``node``'s port towards ``peer``."""
        return f"{node}-eth{self.port(node, peer)}"

    def digraph(self) -> nx.DiGraph:
        """Directed graph whose edges carry their index as ``index``."""
        graph = nx.DiGraph()
        graph.add_nodes_from(self.kinds)
        for index, (u, v) in enumerate(self.edges):
            graph.add_edge(u, v, index=index)
        return graph

    def has_path(self, path: Sequence[str]) -> bool:
        """Whether every hop of ``path`` is a link of the network."""
        return all((u, v) in self.edge_index for u, v in zip(path, path[1:], strict=False))

    def path_edges(self, path: Sequence[str]) -> list[int]:
        """Edge indices of a node path; raises :class:`ModelError` for a hop without a link."""
        try:
            return [self.edge_index[u, v] for u, v in zip(path, path[1:], strict=False)]
        except KeyError as missing:
            raise ModelError("path", f"no link {missing.args[0][0]!r}→{missing.args[0][1]!r}") from None


def check_streams(network: Network, streams: Sequence[Stream]) -> None:
    """Raise :class:`ModelError` naming the first stream that is malformed for ``network``."""
    seen: set[str] = set()
    for index, stream in enumerate(streams):
        where = f"flows[{index}]"
        if stream.id in seen:
            raise ModelError(f"{where}.id", f"{stream.id!r} is used twice")
        seen.add(stream.id)
        for name in ("src", "dst"):
            node = getattr(stream, name)
            if network.kinds.get(node) != HOST:
                raise ModelError(f"{where}.{name}", f"{node!r} is not a host of the topology")
        if stream.src == stream.dst:
            raise ModelError(f"{where}.dst", "must differ from src")
        if stream.period_ns <= 0:
            raise ModelError(f"{where}.period_ns", f"must be > 0, got {stream.period_ns}")
        if not 1 <= stream.size_bytes <= 9000:
            raise ModelError(f"{where}.size_bytes", f"must be in 1..9000, got {stream.size_bytes}")
