"""Candidate paths for streams: hosts never forward, and no path is longer than ``max_hops`` links."""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator

import networkx as nx

from srfabric.tsn.model.network import SWITCH, Network

Path = tuple[str, ...]


class PathFinder:
    """Shortest and k-shortest paths of one network, cached per host pair."""

    def __init__(self, network: Network, max_hops: int) -> None:
        self.network = network
        self.max_hops = max_hops
        self.graph = network.digraph()
        self._distances: dict[str, dict[str, int]] = {}
        # Per host pair: the paths found so far and the generator that finds more (a larger k resumes it).
        self._k_cache: dict[tuple[str, str], tuple[list[Path], Iterator[Path]]] = {}
        # The same between two switches: hosts with one link share their switches' paths.
        self._switch_cache: dict[tuple[str, str], tuple[list[Path], Iterator[Path]]] = {}
        self._preds: dict[str, dict[str, list[str]]] = {}
        self._adjacent: dict[str, list[str]] = {node: [] for node in network.kinds}
        for u, v in network.edges:
            self._adjacent[u].append(v)

    def _view(self, src: str, dst: str) -> nx.DiGraph:
        kinds = self.network.kinds
        return nx.subgraph_view(self.graph, filter_node=lambda n: n in (src, dst) or kinds[n] == SWITCH)

    def distances_from(self, node: str, reverse: bool = False) -> dict[str, int]:
        """Hop counts from ``node`` (to it when ``reverse``) through switches only."""
        key = ("<" if reverse else ">") + node
        if key not in self._distances:
            kinds = self.network.kinds
            graph = self.graph.reverse(copy=False) if reverse else self.graph
            view = nx.subgraph_view(graph, filter_node=lambda n: n == node or kinds[n] == SWITCH)
            self._distances[key] = nx.single_source_shortest_path_length(view, node, cutoff=self.max_hops)
        return self._distances[key]

    def usable_edges(self, src: str, dst: str) -> list[int]:
        """Edges that lie on some walk src→dst of at most ``max_hops`` links, hosts not transiting."""
        ahead = self.distances_from(src)
        behind = self.distances_from(dst, reverse=True)
        kinds = self.network.kinds
        usable = []
        for index, (u, v) in enumerate(self.network.edges):
            if u == dst or v == src or (kinds[u] != SWITCH and u != src) or (kinds[v] != SWITCH and v != dst):
                continue
            if u in ahead and v in behind and ahead[u] + 1 + behind[v] <= self.max_hops:
                usable.append(index)
        return usable

    def _predecessors(self, src: str) -> dict[str, list[str]]:
        """Breadth-first predecessors from ``src`` through switches, up to ``max_hops`` links, cached."""
        if src not in self._preds:
            kinds = self.network.kinds
            preds: dict[str, list[str]] = {src: []}
            depth = {src: 0}
            frontier = [src]
            while frontier and depth[frontier[0]] < self.max_hops:
                following = []
                for node in frontier:
                    if node != src and kinds[node] != SWITCH:
                        continue  # Hosts end paths; they do not forward.
                    for peer in self._adjacent[node]:
                        if peer not in depth:
                            depth[peer] = depth[node] + 1
                            preds[peer] = [node]
                            following.append(peer)
                        elif depth[peer] == depth[node] + 1:
                            preds[peer].append(node)
                frontier = following
            self._preds[src] = preds
        return self._preds[src]

    def shortest(self, src: str, dst: str, cap: int) -> list[Path]:
        """Up to ``cap`` shortest paths within ``max_hops`` (deterministic order); [] if there is none."""
        preds = self._predecessors(src)
        if dst not in preds or dst == src:
            return []
        found: list[Path] = []
        stack: list[tuple[str, tuple[str, ...]]] = [(dst, (dst,))]
        while stack and len(found) < cap:
            node, tail = stack.pop()
            if node == src:
                found.append(tail)
                continue
            for before in reversed(preds[node]):
                stack.append((before, (before, *tail)))
        return found

    def random_shortest(self, src: str, dst: str, rng: random.Random) -> list[Path]:
        """One shortest path drawn uniformly (seeded), like ECMP; [] if none fits."""
        paths = self.shortest(src, dst, cap=10_000)
        return [rng.choice(paths)] if paths else []

    def k_shortest(self, src: str, dst: str, k: int) -> list[Path]:
        """The ``k`` shortest loop-free paths within ``max_hops``, cached (the first k of a longer list)."""
        if (src, dst) not in self._k_cache:
            self._k_cache[src, dst] = ([], self._iter_simple(src, dst))
        found, more = self._k_cache[src, dst]
        if len(found) < k:
            found.extend(itertools.islice(more, k - len(found)))
        return found[:k]

    def attachment(self, host: str) -> str | None:
        """The switch of a host with exactly one link (both directions), else None."""
        peers = self._adjacent[host]
        if len(peers) == 1 and self.network.kinds[peers[0]] == SWITCH and host in self._adjacent[peers[0]]:
            return peers[0]
        return None

    def _iter_simple(self, src: str, dst: str) -> Iterator[Path]:
        first, last = self.attachment(src), self.attachment(dst)
        if first is not None and last is not None:  # one host link each way: the switches' paths, host at each end
            if first == last:
                if self.max_hops >= 2:
                    yield (src, first, dst)
                return
            if (first, last) not in self._switch_cache:
                self._switch_cache[first, last] = ([], self._iter_view(self._view(first, last), first, last, 2))
            found, more = self._switch_cache[first, last]
            for index in itertools.count():
                if index == len(found):
                    found.extend(itertools.islice(more, 1))
                    if index == len(found):
                        return
                yield (src, *found[index], dst)
        else:
            yield from self._iter_view(self._view(src, dst), src, dst, 0)

    def _iter_view(self, view: nx.DiGraph, src: str, dst: str, extra_hops: int) -> Iterator[Path]:
        """Simple paths of ``view`` in order of length, up to ``max_hops - extra_hops`` links."""
        try:
            for path in nx.shortest_simple_paths(view, src, dst):
                if len(path) - 1 + extra_hops > self.max_hops:
                    return
                yield tuple(path)
        except nx.NetworkXNoPath:
            return
