"""The compile engine: the fabric, its chains and its streams in, the flow entries and groups each switch
should hold out. Everything compiles through ``CompileCache``; ``compile_state`` is one call on a fresh one.

A controller compiles after every change; with a thousand chains, compiling
all of them each time costs more than the change. The chain-independent base
is kept per topology version (switches, links, hosts) and each chain's
placement per (chain, topology version, the service functions it uses), so
adding one chain compiles one chain and adding a service function compiles
nothing but its ports' entries. Pure: the same inputs always give the same
entries, so the controller can diff what a switch has against what it should have.
"""

from __future__ import annotations

from collections.abc import Sequence

from srfabric.errors import ModelError, SrfabricError
from srfabric.model.chain import Chain
from srfabric.model.fabric import Fabric, ServiceFunction
from srfabric.model.stream import SteeredStream
from srfabric.rules.assembly import Assembly, Key, Parts, Placed
from srfabric.rules.base import function_port_entries
from srfabric.rules.base_tables import TopologyMemo, topology_tables
from srfabric.rules.codec_rules import rules_for
from srfabric.rules.entries import EntryKey, FlowEntry, Kind, cookie
from srfabric.rules.headers import route_ingresses, sre_switches
from srfabric.rules.hop_by_hop import STEERING_NAMES, compile_hop_by_hop
from srfabric.rules.placement import Placement, chain_placement
from srfabric.rules.proxy import proxy_hint
from srfabric.rules.streams.placements import StreamPlacements
from srfabric.rules.tables import SwitchState, Tables, as_problem, reported, resorted


class CompileCache:
    """The compile engine: ``state`` gives every switch's tables, reusing what the last calls compiled.

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
        # ((topology version, the switches holding default routes), tables, their problems, the SRE switches)
        self._base: tuple[tuple[int, frozenset[int]], Tables, list[SrfabricError], set[int]] | None = None
        self._memo = TopologyMemo()  # switches' fixed entries and host routes, kept while only links are lost
        # chain name -> (the chain, fabric version last checked at, what it depends on, its placement)
        self.placements: dict[str, tuple[Chain, int, PlacementKey, Placement]] = {}
        # switch -> (its entries, those entries sorted): a change touches a switch or two, not every one
        self._sorted: dict[int, tuple[dict[EntryKey, FlowEntry], list[FlowEntry]]] = {}
        self._ports: tuple[int, list[tuple[int, FlowEntry]]] | None = None  # (fabric version, port entries)
        self._assembly: Assembly | None = None  # the last full tables, put together again where items change
        self.streams = StreamPlacements(self.rules, tt_queue)  # each stream's entries, kept per fabric version

    def _base_tables(self, fabric: Fabric) -> tuple[Tables, list[SrfabricError], set[int]]:
        # Service leaves hold default routes too: the base changes with the SR-unaware functions' switches.
        version = (fabric.topology_version, frozenset(route_ingresses(fabric)))
        if self._base is None or self._base[0] != version:
            problems: list[SrfabricError] = []
            tables = topology_tables(fabric, self.codec, problems, self.tt_queue, self._memo)
            self._base = (version, tables, problems, sre_switches(fabric))
        return self._base[1], self._base[2], self._base[3]

    def placement(self, fabric: Fabric, chain: Chain, sre: set[int] | None = None) -> Placement:
        kept = self.placements.get(chain.name)
        if kept is not None and kept[0] is not chain and kept[0] != chain:
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
              checked_streams: Sequence[SteeredStream] = (), check_all: bool = False) -> SwitchState:
        """The tables for ``chains`` and ``streams`` (checked when they were added) plus ``checked`` and
        ``checked_streams``, new ones that are checked against all of them and raise on any problem.

        With ``problems`` given, a host, chain or stream that cannot be routed (or conflicts) is left out and
        its error appended there; without it the first error is raised. ``check_all`` checks every chain
        against the ones before it (no chain was checked when it was added: ``compile_state``).
        """
        every = [*chains, *([checked] if checked else [])]
        if self.steering == "hop-by-hop":
            return _hop_by_hop(fabric, every, problems, checked, bool(streams or checked_streams))
        base, base_problems, sre = self._base_tables(fabric)
        if base_problems and problems is None:  # raised as the host's route raised it
            topology_tables(fabric, self.codec, None, self.tt_queue)
        parts = Parts(base, self._port_entries(fabric))
        placed = self._placed(fabric, every, sre)
        streamed = self.streams.placed(fabric, [*streams, *checked_streams], sre)
        items = _items(chains, placed, streams, streamed)
        plain = problems is not None and checked is None and not checked_streams and not check_all
        if plain and problems is not None and self._assembly is not None:
            state = self._assembly.entries(items, parts)
            if state is not None:  # only the switches of changed items or base tables were put together again
                problems.extend(base_problems)
                problems.extend(as_problem(error, f"{kind} {name}") for (kind, name), error in _errors(items))
                return state
        if problems is not None:
            problems.extend(base_problems)
        before = len(problems) if problems is not None else 0
        tables = self._tables(fabric, parts, chains, items, problems, check_all)
        if checked is not None:
            placement = _placement(placed[checked.name])
            tables.add_all(placement.entries, f"chain {checked.name}", placement.groups,
                           hint=proxy_hint(fabric, checked))
        for stream in checked_streams:
            placement = _placement(streamed[stream.name])
            tables.add_all(placement.entries, f"stream {stream.name}", placement.groups)
        state = SwitchState(self._sorted_entries(tables.entries), tables.sorted_groups())
        if plain and problems is not None:
            self._assembly = Assembly.record(parts, items, problems[before:], tables, state)
        return state

    def _tables(self, fabric: Fabric, parts: Parts, chains: Sequence[Chain], items: dict[Key, Placed],
                problems: list[SrfabricError] | None, check_all: bool) -> Tables:
        """Every switch's tables from scratch: the base, the functions' ports, the chains, then the streams."""
        tables = parts.base.copy()
        tables.add_all(parts.ports, "service functions")
        by_name = {chain.name: chain for chain in chains} if check_all else {}
        for (kind, name), placed in items.items():
            what = f"{kind} {name}"
            with reported(problems, what):
                placement = _placement(placed)
                overlap = check_all and kind == "chain"  # streams never were checked against each other here
                tables.add_all(placement.entries, what, placement.groups, check_overlap=overlap,
                               hint=proxy_hint(fabric, by_name[name]) if overlap else "")
        return tables

    def check(self, fabric: Fabric, chains: Sequence[Chain], new: Chain) -> None:
        """Raise if ``new`` cannot be routed beside ``chains`` or conflicts with them (``state``'s ``checked``),
        on the new chain's switches alone when the last tables hold exactly ``chains`` and no stream."""
        if self.steering != "hop-by-hop" and self._assembly is not None:
            base, _, sre = self._base_tables(fabric)
            if self._assembly.parts.same(Parts(base, self._port_entries(fabric))):
                placed = self._placed(fabric, [*chains, new], sre)
                placement = _placement(placed[new.name])
                kept = _items(chains, placed, (), {})
                replaces = (("chain", new.name), cookie(Kind.CHAIN, new.chain_id))  # its last version, if held
                if self._assembly.check(kept, placement, f"chain {new.name}", proxy_hint(fabric, new), replaces):
                    return
        self.state(fabric, chains, [], checked=new)

    def check_streams(self, fabric: Fabric, chains: Sequence[Chain], streams: Sequence[SteeredStream],
                      checked: Sequence[SteeredStream]) -> None:
        """Raise if a stream of ``checked`` cannot be steered beside ``chains`` and ``streams`` (``state``'s
        ``checked_streams``); one new stream is checked on its talker's edge alone when the last tables hold
        exactly those chains and streams."""
        if self.steering != "hop-by-hop" and self._assembly is not None and len(checked) == 1:
            base, _, sre = self._base_tables(fabric)
            if self._assembly.parts.same(Parts(base, self._port_entries(fabric))):
                streamed = self.streams.placed(fabric, [*streams, *checked], sre)
                kept = _items(chains, self._placed(fabric, chains, sre), streams, streamed)
                new = checked[0]
                if self._assembly.check(kept, _placement(streamed[new.name]), f"stream {new.name}", ""):
                    return
        self.state(fabric, chains, [], streams=streams, checked_streams=checked)

    def _port_entries(self, fabric: Fabric) -> list[tuple[int, FlowEntry]]:
        """The service functions' port entries, kept per fabric version (the same objects while it stands)."""
        if self._ports is None or self._ports[0] != fabric.version:
            entries = function_port_entries(fabric, self.rules, self.tt_queue)
            if self._ports is not None and entries == self._ports[1]:
                entries = self._ports[1]  # the very list while its entries stand: the assembly knows it by identity
            self._ports = (fabric.version, entries)
        return self._ports[1]

    def _placed(self, fabric: Fabric, chains: Sequence[Chain], sre: set[int]) -> dict[str, Placed]:
        """Each chain's placement, or the error that kept it from one; the placements of chains gone are dropped."""
        kept, version = self.placements, fabric.version
        placed: dict[str, Placed] = {}
        for chain in chains:
            held = kept.get(chain.name)
            if held is not None and held[0] is chain and held[1] == version:
                placed[chain.name] = held[3]  # the very chain on the same fabric: most of them, at every change
                continue
            try:
                placed[chain.name] = self.placement(fabric, chain, sre)
            except SrfabricError as error:
                placed[chain.name] = error
        for name in kept.keys() - placed.keys():
            del kept[name]
        return placed

    def _sorted_entries(self, tables: dict[int, dict[EntryKey, FlowEntry]]) -> dict[int, list[FlowEntry]]:
        """Each switch's entries in order; a switch whose entries are the same as last time keeps its list
        (shared between calls: callers must not change it)."""
        lists = {}
        for dpid, entries in tables.items():
            kept = self._sorted.get(dpid)
            if kept is None or kept[0] != entries:
                kept = self._sorted[dpid] = (entries, resorted(None if kept is None else kept[1], entries))
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


def compile_state(fabric: Fabric, chains: Sequence[Chain], codec: str, problems: list[SrfabricError] | None = None,
                  steering: str = "source-routing") -> SwitchState:
    """Every entry and group every switch should hold (see ``compile_fabric``): one call on a fresh
    ``CompileCache``, every chain checked against the ones before it."""
    return CompileCache(codec, steering).state(fabric, chains, problems, check_all=True)


def compile_fabric(fabric: Fabric, chains: Sequence[Chain], codec: str, problems: list[SrfabricError] | None = None,
                   steering: str = "source-routing") -> dict[int, list[FlowEntry]]:
    """Every entry every switch should hold, sorted by (table, priority, match).

    With ``problems`` given, a host or chain that cannot be routed (or conflicts)
    is left out and its error appended there; without it the first error is raised.
    The error's ``field`` names the culprit (``host h3``, ``chain SFP1``).
    Default routes (indirect groups per destination switch), load-balanced and tapped chains also need
    groups: see ``compile_state``. ``steering`` is source routing with ``codec``, or hop-by-hop rules.

    Examples
    --------
    >>> from srfabric.model.topo import fat_tree
    >>> from srfabric.rules.entries import Kind
    >>> tables = compile_fabric(fat_tree(4).to_fabric(), [], "mac-nibble")
    >>> sum(1 for e in tables[0x301] if e.kind == Kind.DECODE)
    11
    """
    return compile_state(fabric, chains, codec, problems, steering).entries


def _placement(placed: Placed) -> Placement:
    """A chain's placement; its error (raised afresh) when it has none."""
    if isinstance(placed, Placement):
        return placed
    raise type(placed)(placed.field, placed.message)


def _items(chains: Sequence[Chain], placed: dict[str, Placed], streams: Sequence[SteeredStream],
           streamed: dict[str, Placed]) -> dict[Key, Placed]:
    """The chains' and the streams' placements as the assembly's items, chains first."""
    items: dict[Key, Placed] = {("chain", chain.name): placed[chain.name] for chain in chains}
    items.update({("stream", stream.name): streamed[stream.name] for stream in streams})
    return items


def _errors(items: dict[Key, Placed]) -> list[tuple[Key, SrfabricError]]:
    """The items that have no placement, in order, with why."""
    return [(key, error) for key, error in items.items() if isinstance(error, SrfabricError)]


def _hop_by_hop(fabric: Fabric, chains: list[Chain], problems: list[SrfabricError] | None, checked: Chain | None,
                streams: bool) -> SwitchState:
    """Hop-by-hop steering's tables (``compile_hop_by_hop``): chains only."""
    if streams:
        raise ModelError("steering", "streams are source-routed; hop-by-hop steering cannot pin them")
    if checked is not None:
        found: list[SrfabricError] = []
        compile_hop_by_hop(fabric, chains, found)
        for problem in found:
            if problem.field == f"chain {checked.name}":
                raise problem
    return SwitchState(compile_hop_by_hop(fabric, chains, problems))
