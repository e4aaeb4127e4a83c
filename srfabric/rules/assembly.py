"""Every switch's tables put together from the parts ``CompileCache`` keeps, and put together again after a chain
or a stream changes only on the switches the change lands on: adding a chain to a fabric of 320 switches rebuilds
the two or three its entries go to, and admitting a stream its talker's edge, not all 320 (source routing's
promise, kept by the controller too).

The full assembly in ``CompileCache.state`` stays the reference. An ``Assembly`` is recorded from one, and answers
a later call only when everything but the chains and streams is the very same (the base tables, the service
functions' port entries) and none of them conflicted; otherwise it answers None and the full assembly runs. Each
chain and stream is an *item*, keyed ``("chain", name)`` or ``("stream", name)``. Pure: no I/O.

Examples
--------
>>> from srfabric.rules.entries import FlowEntry, match
>>> a = Placement([(1, FlowEntry(0, 10, match(udp_dst=1)))], [])
>>> b = Placement([(2, FlowEntry(0, 10, match(udp_dst=2)))], [])
>>> tables = Tables([1, 2, 3])
>>> tables.add_all(a.entries, "chain a")
>>> done = Assembly.record(Parts(Tables([1, 2, 3]), []), {("chain", "a"): a}, [], tables,
...                        SwitchState(tables.sorted()))
>>> before = done.sorted[1]
>>> state = done.entries({("chain", "a"): a, ("stream", "b"): b})  # b lands on switch 2: only it is rebuilt
>>> [len(state.entries[dpid]) for dpid in (1, 2, 3)], state.entries[1] is before
([1, 1, 0], True)
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from srfabric.errors import SrfabricError
from srfabric.rules.entries import EntryKey, FlowEntry
from srfabric.rules.placement import Placement
from srfabric.rules.tables import SwitchState, Tables, resorted

Placed = Placement | SrfabricError  # a chain's or a stream's placement, or why it has none
Key = tuple[str, str]  # ("chain", name) or ("stream", name): the field its problems are reported under, split


@dataclass
class Parts:
    """What the tables are made of besides the chains and streams: compared by identity (the cache keeps each
    part's object while it stands)."""

    base: Tables
    ports: list[tuple[int, FlowEntry]]

    def same(self, other: Parts) -> bool:
        return self.base is other.base and self.ports is other.ports


def switches_of(placed: Placed | None) -> set[int]:
    """The switches a placement puts entries or groups on (none for a chain that has no placement)."""
    if not isinstance(placed, Placement):
        return set()
    return {dpid for dpid, _ in placed.entries} | {dpid for dpid, _ in placed.groups}


class Assembly:
    """The last assembled tables, each switch's sorted lists, and which items each switch holds entries of."""

    def __init__(self, parts: Parts, placed: dict[Key, Placed], tables: Tables, state: SwitchState) -> None:
        self.parts = parts
        self.placed = placed
        self.tables = tables
        self.sorted = dict(state.entries)  # the full assembly's lists: the same objects go on
        self.groups = dict(state.groups)
        self.by_switch: dict[int, set[Key]] = {}
        for name, placement in placed.items():
            for dpid in switches_of(placement):
                self.by_switch.setdefault(dpid, set()).add(name)

    @classmethod
    def record(cls, parts: Parts, placed: dict[Key, Placed], problems: Sequence[SrfabricError],
               tables: Tables, state: SwitchState) -> Assembly | None:
        """An assembly of a full one's result, or None when an item placed there conflicted (which one is left
        out then depends on the items' order: only the full assembly decides that)."""
        failed = {key for key, placement in placed.items() if not isinstance(placement, Placement)}
        refused = {(kind, name) for kind, _, name in (p.field.partition(" ") for p in problems)
                   if kind in ("chain", "stream")}
        if refused != failed:
            return None
        return cls(parts, placed, tables, state)

    def entries(self, placed: Mapping[Key, Placed], parts: Parts | None = None) -> SwitchState | None:
        """The tables for items placed as ``placed`` on ``parts`` (by default the same): the changed items'
        switches and those whose base tables are new objects rebuilt, every other switch's lists kept (the very
        objects, so a reconciler sees them unchanged at once). None when a rebuilt switch would hold two different
        entries with one key, or ``parts`` differ in more than base tables switch by switch."""
        before = self.parts
        rebased = self._rebased(parts) if parts is not None else (set(), {})
        if rebased is None:
            return None
        state = self._entries(placed, *rebased)
        if state is None:
            self.parts = before
        return state

    def _rebased(self, parts: Parts) -> tuple[set[int], dict[int, set[EntryKey]] | None] | None:
        """Take ``parts``: the switches whose base tables are not the very ones of the parts before, and the keys
        whose entries may differ there when the new base says (``Tables.since``); None when the port entries or
        the switches differ."""
        old, new = self.parts.base, parts.base
        if new is old and parts.ports is self.parts.ports:
            self.parts = parts
            return set(), None  # the same base tables: no switch rebased (most changes)
        if parts.ports is not self.parts.ports or old.entries.keys() != new.entries.keys() \
                or old.groups.keys() != new.groups.keys():
            return None
        self.parts = parts
        keys = new.since[1] if new.since is not None and new.since[0] is old else None
        return {dpid for dpid in new.entries
                if new.entries[dpid] is not old.entries[dpid] or new.groups[dpid] is not old.groups[dpid]}, keys

    def _entries(self, placed: Mapping[Key, Placed], dirty: set[int],
                 base_keys: dict[int, set[EntryKey]] | None) -> SwitchState | None:
        before, rebased = self.placed, set(dirty)  # one pass over the new items (new ones and those placed anew),
        changed = {name for name, placement in placed.items() if before.get(name) is not placement}
        changed.update(before.keys() - placed.keys())  # then the gone ones
        for name in changed:
            dirty |= switches_of(self.placed.get(name)) | switches_of(placed.get(name))
        if not dirty:
            return SwitchState(dict(self.sorted), dict(self.groups))
        by_switch = {dpid: {name for name in self.by_switch.get(dpid, ()) if name not in changed} for dpid in dirty}
        for name in changed:  # a changed item's switches are all dirty: its old ones and its new ones
            for dpid in switches_of(placed.get(name)):
                by_switch[dpid].add(name)
        keys = self._keys(placed, changed, dirty, rebased, base_keys)
        rebuilt = {}
        for dpid in dirty:
            tables = self._switch(dpid, [placed[name] for name in sorted(by_switch[dpid])])
            if tables is None:
                return None
            rebuilt[dpid] = tables
        self._keep(placed, by_switch, rebuilt, keys)
        return SwitchState(dict(self.sorted), dict(self.groups))

    def _keys(self, placed: Mapping[Key, Placed], changed: set[Key], dirty: set[int], rebased: set[int],
              base_keys: dict[int, set[EntryKey]] | None) -> dict[int, set[EntryKey] | None]:
        """Per dirty switch, the keys whose entries may differ from before: those the changed items' entries had or
        have there, and on a switch with new base tables those the base says changed (None when it does not)."""
        keys: dict[int, set[EntryKey] | None] = {
            dpid: set() if dpid not in rebased else None if base_keys is None else set(base_keys.get(dpid, ()))
            for dpid in dirty}
        for name in changed:
            for placement in (self.placed.get(name), placed.get(name)):
                for dpid, entry in placement.entries if isinstance(placement, Placement) else ():
                    if (held := keys.get(dpid)) is not None:
                        held.add(entry.key)
        return keys

    def _switch(self, dpid: int, items: list[Placed]) -> Tables | None:
        """One switch's tables from its parts (None if two of them disagree on an entry or a group)."""
        tables = Tables(())
        tables.entries = {dpid: dict(self.parts.base.entries.get(dpid, {}))}
        tables.groups = {dpid: dict(self.parts.base.groups.get(dpid, {}))}
        mine = [(d, e) for d, e in self.parts.ports if d == dpid]
        try:
            tables.add_all(mine, "service functions")
            for placement in items:
                assert isinstance(placement, Placement)  # only placed items are listed by switch
                tables.add_all([(d, e) for d, e in placement.entries if d == dpid], "chain or stream",
                               [(d, g) for d, g in placement.groups if d == dpid], check_overlap=False)
        except SrfabricError:
            return None
        return tables

    def _keep(self, placed: Mapping[Key, Placed], by_switch: dict[int, set[Key]], rebuilt: dict[int, Tables],
              keys: dict[int, set[EntryKey] | None]) -> None:
        self.placed = dict(placed)
        for dpid, tables in rebuilt.items():
            self.by_switch[dpid] = by_switch[dpid]
            changed = _changed(self.tables.entries.get(dpid), tables.entries[dpid], keys.get(dpid))
            self.tables.entries[dpid] = tables.entries[dpid]
            self.tables.groups[dpid] = tables.groups[dpid]
            self.sorted[dpid] = resorted(self.sorted.get(dpid), tables.entries[dpid], changed)
            groups = tables.groups[dpid]
            if groups:
                self.groups[dpid] = [groups[i] for i in sorted(groups)]
            else:
                self.groups.pop(dpid, None)

    def check(self, placed: Mapping[Key, Placed], new: Placement, what: str, hint: str,
              replaces: tuple[Key, int] | None = None) -> bool:
        """Raise as the full assembly would if ``new`` conflicts with the items placed as ``placed``; False when
        this assembly does not hold exactly those items (then the full one must check).

        ``replaces``: the item ``new`` takes the place of (an update) and its entries' cookie. The assembly may
        hold it beside ``placed``; its entries and groups on ``new``'s switches are left out of the check when
        all of them carry that cookie (one chain's own); otherwise the full one must check.
        """
        held = self.placed.keys() - {replaces[0]} if replaces is not None else self.placed.keys()
        if placed.keys() != held or not all(map(operator.is_, placed.values(), map(self.placed.__getitem__, placed))):
            return False
        switches = sorted(switches_of(new))
        tables = Tables(())
        tables.entries = {dpid: dict(self.tables.entries.get(dpid, {})) for dpid in switches}
        tables.groups = {dpid: dict(self.tables.groups.get(dpid, {})) for dpid in switches}
        if replaces is not None:
            old = self.placed.get(replaces[0])
            if isinstance(old, Placement) and not _left_out(tables, old, replaces[1]):
                return False
        tables.add_all(new.entries, what, new.groups, hint=hint)
        return True


def _left_out(tables: Tables, old: Placement, cookie: int) -> bool:
    """``old``'s entries and groups taken out of ``tables`` (on its switches), if every entry there carries
    ``cookie``; False, and ``tables`` unusable, if one does not."""
    for dpid, entry in old.entries:
        entries = tables.entries.get(dpid)
        if entries is None:
            continue
        if entry.cookie != cookie:
            return False
        if entries.get(entry.key) is entry:
            del entries[entry.key]
    for dpid, group in old.groups:
        groups = tables.groups.get(dpid)
        if groups is not None and groups.get(group.group_id) is group:
            del groups[group.group_id]
    return True


def _changed(before: dict[EntryKey, FlowEntry] | None, after: dict[EntryKey, FlowEntry],
             keys: set[EntryKey] | None) -> tuple[list[FlowEntry], list[FlowEntry]] | None:
    """The entries that went and came between a switch's two tables when only ``keys`` can differ (None when that
    is not known: the caller compares them all)."""
    if before is None or keys is None:
        return None
    went, came = [], []
    for key in keys:
        was, now = before.get(key), after.get(key)
        if was is not now:
            if was is not None:
                went.append(was)
            if now is not None:
                came.append(now)
    return went, came
