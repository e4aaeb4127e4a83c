"""Every switch's tables put together from the parts ``CompileCache`` keeps, and put together again after a chain
changes only on the switches the change lands on: adding a chain to a fabric of 320 switches rebuilds the two or
three its entries go to, not all 320 (source routing's promise, kept by the controller too).

The full assembly in ``CompileCache.state`` stays the reference. An ``Assembly`` is recorded from one, and answers
a later call only when everything but the chains is the very same (the base tables, the service functions' port
entries, the streams) and no chain conflicted; otherwise it answers None and the full assembly runs. Pure: no I/O.

Examples
--------
>>> from srfabric.rules.entries import FlowEntry, match
>>> a = Placement([(1, FlowEntry(0, 10, match(udp_dst=1)))], [])
>>> b = Placement([(2, FlowEntry(0, 10, match(udp_dst=2)))], [])
>>> tables = Tables([1, 2, 3])
>>> tables.add_all(a.entries, "chain a")
>>> done = Assembly.record(Parts(Tables([1, 2, 3]), []), {"a": a}, [], tables, SwitchState(tables.sorted()))
>>> before = done.sorted[1]
>>> state = done.entries({"a": a, "b": b})  # b lands on switch 2: only switch 2 is put together again
>>> [len(state.entries[dpid]) for dpid in (1, 2, 3)], state.entries[1] is before
([1, 1, 0], True)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from srfabric.errors import SrfabricError
from srfabric.rules.entries import FlowEntry, GroupEntry
from srfabric.rules.placement import Placement
from srfabric.rules.tables import SwitchState, Tables, entry_order

Placed = Placement | SrfabricError  # a chain's placement, or why it has none


@dataclass
class Parts:
    """What the tables are made of besides the chains: compared by identity (the cache keeps each part's
    object while it stands), the streams by equality."""

    base: Tables
    ports: list[tuple[int, FlowEntry]]
    streams: tuple[Any, ...] = ()
    stream_entries: list[tuple[int, FlowEntry]] = field(default_factory=list)
    stream_groups: list[tuple[int, GroupEntry]] = field(default_factory=list)

    def same(self, other: Parts) -> bool:
        return self.base is other.base and self.ports is other.ports and self.streams == other.streams


def switches_of(placed: Placed | None) -> set[int]:
    """The switches a placement puts entries or groups on (none for a chain that has no placement)."""
    if not isinstance(placed, Placement):
        return set()
    return {dpid for dpid, _ in placed.entries} | {dpid for dpid, _ in placed.groups}


class Assembly:
    """The last assembled tables, each switch's sorted lists, and which chains each switch holds entries of."""

    def __init__(self, parts: Parts, placed: dict[str, Placed], tables: Tables, state: SwitchState) -> None:
        self.parts = parts
        self.placed = placed
        self.tables = tables
        self.sorted = dict(state.entries)  # the full assembly's lists: the same objects go on
        self.groups = dict(state.groups)
        self.by_switch: dict[int, set[str]] = {}
        for name, placement in placed.items():
            for dpid in switches_of(placement):
                self.by_switch.setdefault(dpid, set()).add(name)

    @classmethod
    def record(cls, parts: Parts, placed: dict[str, Placed], problems: Sequence[SrfabricError],
               tables: Tables, state: SwitchState) -> Assembly | None:
        """An assembly of a full one's result, or None when a chain placed there conflicted (which one is left
        out then depends on the chains' order: only the full assembly decides that)."""
        failed = {name for name, placement in placed.items() if not isinstance(placement, Placement)}
        chains_refused = {p.field.removeprefix("chain ") for p in problems if p.field.startswith("chain ")}
        if chains_refused != failed or any(p.field.startswith("stream ") for p in problems):
            return None
        return cls(parts, placed, tables, state)

    def entries(self, placed: Mapping[str, Placed]) -> SwitchState | None:
        """The tables for chains placed as ``placed`` (the same parts): the changed chains' switches rebuilt,
        every other switch's lists kept (the very objects, so a reconciler sees them unchanged at once). None when
        a rebuilt switch would hold two different entries with one key."""
        changed = {name for name in self.placed.keys() | placed.keys() if self.placed.get(name) is not placed.get(name)}
        dirty: set[int] = set()
        for name in changed:
            dirty |= switches_of(self.placed.get(name)) | switches_of(placed.get(name))
        if not dirty:
            return SwitchState(dict(self.sorted), dict(self.groups))
        by_switch = {dpid: {name for name in self.by_switch.get(dpid, ()) if name not in changed} for dpid in dirty}
        for name in changed:  # a changed chain's switches are all dirty: its old ones and its new ones
            for dpid in switches_of(placed.get(name)):
                by_switch[dpid].add(name)
        rebuilt = {}
        for dpid in dirty:
            tables = self._switch(dpid, [placed[name] for name in sorted(by_switch[dpid])])
            if tables is None:
                return None
            rebuilt[dpid] = tables
        self._keep(placed, by_switch, rebuilt)
        return SwitchState(dict(self.sorted), dict(self.groups))

    def _switch(self, dpid: int, chains: list[Placed]) -> Tables | None:
        """One switch's tables from its parts (None if two of them disagree on an entry or a group)."""
        tables = Tables(())
        tables.entries = {dpid: dict(self.parts.base.entries.get(dpid, {}))}
        tables.groups = {dpid: dict(self.parts.base.groups.get(dpid, {}))}
        mine = [(d, e) for d, e in self.parts.ports if d == dpid]
        try:
            tables.add_all(mine, "service functions")
            for placement in chains:
                assert isinstance(placement, Placement)  # only placed chains are listed by switch
                tables.add_all([(d, e) for d, e in placement.entries if d == dpid], "chain",
                               [(d, g) for d, g in placement.groups if d == dpid], check_overlap=False)
            tables.add_all([(d, e) for d, e in self.parts.stream_entries if d == dpid], "streams",
                           [(d, g) for d, g in self.parts.stream_groups if d == dpid], check_overlap=False)
        except SrfabricError:
            return None
        return tables

    def _keep(self, placed: Mapping[str, Placed], by_switch: dict[int, set[str]], rebuilt: dict[int, Tables]) -> None:
        self.placed = dict(placed)
        for dpid, tables in rebuilt.items():
            self.by_switch[dpid] = by_switch[dpid]
            self.tables.entries[dpid] = tables.entries[dpid]
            self.tables.groups[dpid] = tables.groups[dpid]
            self.sorted[dpid] = sorted(tables.entries[dpid].values(), key=entry_order)
            groups = tables.groups[dpid]
            if groups:
                self.groups[dpid] = [groups[i] for i in sorted(groups)]
            else:
                self.groups.pop(dpid, None)

    def check(self, placed: Mapping[str, Placed], new: Placement, what: str, hint: str) -> bool:
        """Raise as the full assembly would if ``new`` conflicts with the chains placed as ``placed``; False when
        this assembly does not hold exactly those chains (then the full one must check)."""
        if placed.keys() != self.placed.keys() or any(placed[n] is not self.placed[n] for n in placed):
            return False
        switches = sorted(switches_of(new))
        tables = Tables(())
        tables.entries = {dpid: dict(self.tables.entries.get(dpid, {})) for dpid in switches}
        tables.groups = {dpid: dict(self.tables.groups.get(dpid, {})) for dpid in switches}
        tables.add_all(new.entries, what, new.groups, hint=hint)
        return True
