"""Compiled tables kept between reconciliations.

A controller compiles after every change; with a thousand chains, compiling
all of them each time costs more than the change. The chain-independent base
is kept per topology version (switches, links, hosts) and each chain's
placement per (chain, topology version, the service functions it uses), so
adding one chain compiles one chain and adding a service function compiles
nothing but its ports' entries. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence

from srfabric.errors import ModelError, SrfabricError
from srfabric.model.chain import Chain
from srfabric.model.fabric import Fabric, ServiceFunction
from srfabric.model.stream import SteeredStream
from srfabric.rules.codec_rules import rules_for
from srfabric.rules.compile import (
    Placement,
    SwitchState,
    TopologyMemo,
    _reported,
    _Tables,
    chain_placement,
    entry_order,
    function_port_entries,
    topology_tables,
)
from srfabric.rules.entries import EntryKey, FlowEntry
from srfabric.rules.headers import sre_switches
from srfabric.rules.hop_by_hop import STEERING_NAMES, compile_hop_by_hop
from srfabric.rules.proxy import proxy_hint
from srfabric.rules.streams import stream_entries


class CompileCache:
    """``state`` gives what ``compile_state`` would, reusing what the last calls compiled.

    Examples
    --------
    >>> from srfabric.model.topo import tsn_fig1
    >>> from srfabric.model import Chain, FlowClassifier
    >>> fabric = tsn_fig1().to_fabric()
    >>> cache = CompileCache("mac-nibble")
    >>> chain = Chain("c", FlowClassifier(protocol="udp"), (), "h1", "h3", chain_id=1)
    >>> first = cache.state(fabric, [chain])
    >>> cache.state(fabric, [chain]) == first, len(cache.placements)
    (True, 1)
    """

    def __init__(self, codec: str, steering: str = "source-routing", tt_queue: int | None = None) -> None:
        if steering not in STEERING_NAMES:
            raise ModelError("steering", f"{steering!r} is not one of {', '.join(STEERING_NAMES)}")
        self.codec = codec
        self.rules = rules_for(codec)
        self.steering = steering
        self.tt_queue = tt_queue
        # (topology version, tables, their problems, the SRE switches): all decided by switches, links and hosts
        self._base: tuple[int, _Tables, list[SrfabricError], set[int]] | None = None
        self._memo = TopologyMemo()  # switches' fixed entries and host routes, kept while only links are lost
        # chain name -> (the chain, fabric version last checked at, what it depends on, its placement)
        self.placements: dict[str, tuple[Chain, int, PlacementKey, Placement]] = {}
        # switch -> (its entries, those entries sorted): a change touches a switch or two, not every one
        self._sorted: dict[int, tuple[dict[EntryKey, FlowEntry], list[FlowEntry]]] = {}

    def _base_tables(self, fabric: Fabric) -> tuple[_Tables, list[SrfabricError], set[int]]:
        if self._base is None or self._base[0] != fabric.topology_version:
            problems: list[SrfabricError] = []
            tables = topology_tables(fabric, self.codec, problems, self.tt_queue, self._memo)
            self._base = (fabric.topology_version, tables, problems, sre_switches(fabric))
        return self._base[1], self._base[2], self._base[3]

    def placement(self, fabric: Fabric, chain: Chain, sre: set[int] | None = None) -> Placement:
        kept = self.placements.get(chain.name)
        if kept is not None and kept[0] != chain:
            kept = None  # the chain itself changed
        if kept is not None and kept[1] == fabric.version:
            return kept[3]  # nothing changed since: no need to work out the key
        key = placement_key(fabric, chain)
        # Only links lost since: the placement stands while every link it crosses is still up.
        if kept is not None and kept[2] == key and kept[3].links <= fabric.links.keys():
            placed = kept[3]
        else:
            placed = chain_placement(fabric, chain, self.codec, sre)
        self.placements[chain.name] = (chain, fabric.version, key, placed)
        return placed

    def state(self, fabric: Fabric, chains: Sequence[Chain], problems: list[SrfabricError] | None = None,
              checked: Chain | None = None, streams: Sequence[SteeredStream] = (),
              checked_streams: Sequence[SteeredStream] = ()) -> SwitchState:
        """The tables for ``chains`` and ``streams`` (checked when they were added) plus ``checked`` and
        ``checked_streams``, new ones that are checked against all of them and raise on any problem."""
        every = [*chains, *([checked] if checked else [])]
        if self.steering == "hop-by-hop":
            if streams or checked_streams:
                raise ModelError("steering", "streams are source-routed; hop-by-hop steering cannot pin them")
            if checked is not None:
                found: list[SrfabricError] = []
                compile_hop_by_hop(fabric, every, found)
                for problem in found:
                    if problem.field == f"chain {checked.name}":
                        raise problem
            return SwitchState(compile_hop_by_hop(fabric, every, problems))
        base, base_problems, sre = self._base_tables(fabric)
        tables = base.copy()
        tables.add_all(function_port_entries(fabric, self.rules, self.tt_queue), "service functions")
        if problems is not None:
            problems.extend(base_problems)
        names = {chain.name for chain in every}
        for name in [name for name in self.placements if name not in names]:
            del self.placements[name]  # chains that are gone
        for chain in chains:
            what = f"chain {chain.name}"
            with _reported(problems, what):
                placed = self.placement(fabric, chain, sre)
                tables.add_all(placed.entries, what, placed.groups, check_overlap=False)
        if checked is not None:
            placed = self.placement(fabric, checked, sre)
            tables.add_all(placed.entries, f"chain {checked.name}", placed.groups, hint=proxy_hint(fabric, checked))
        for stream in streams:
            with _reported(problems, f"stream {stream.name}"):
                tables.add_all(stream_entries(fabric, stream, self.rules, sre, self.tt_queue),
                               f"stream {stream.name}", check_overlap=False)
        for stream in checked_streams:
            tables.add_all(stream_entries(fabric, stream, self.rules, sre, self.tt_queue), f"stream {stream.name}")
        return SwitchState(self._sorted_entries(tables.entries), tables.sorted_groups())

    def _sorted_entries(self, tables: dict[int, dict[EntryKey, FlowEntry]]) -> dict[int, list[FlowEntry]]:
        """Each switch's entries in order; a switch whose entries are the same as last time keeps its list
        (shared between calls: callers must not change it)."""
        lists = {}
        for dpid, entries in tables.items():
            kept = self._sorted.get(dpid)
            if kept is None or kept[0] != entries:
                kept = self._sorted[dpid] = (entries, sorted(entries.values(), key=entry_order))
            lists[dpid] = kept[1]
        for dpid in [dpid for dpid in self._sorted if dpid not in tables]:
            del self._sorted[dpid]
        return lists


PlacementKey = tuple[int, tuple[tuple[ServiceFunction | None, bool], ...]]


def placement_key(fabric: Fabric, chain: Chain) -> PlacementKey:
    """What a chain's placement depends on besides the chain and the links it crosses: the topology short of
    links lost (``Fabric.growth_version``) and the functions it crosses."""
    names = sorted({name for path in chain.paths() for name in path.functions} | set(chain.taps))
    return fabric.growth_version, tuple((fabric.functions.get(name), name in fabric.functions_down) for name in names)
