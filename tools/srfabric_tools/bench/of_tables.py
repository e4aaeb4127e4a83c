"""One emulated switch's flow tables, kept as a switch keeps them: added, modified and deleted by flow-mods,
looked up by match and priority, and emptied of entries idle past their timeout.

Lookup is Open vSwitch's tuple-space search: entries are grouped by the fields (and masks) they match, so a
packet costs one hash probe per group, not one comparison per entry; a reactive edge holds tens of thousands.
The clock is passed in (seconds), so tests step it.

>>> from srfabric.rules.entries import FlowEntry, Output
>>> from srfabric_tools.simulate import Packet
>>> tables = FlowTables()
>>> tables.add(FlowEntry(0, 10, (("eth_dst", 2, None),), (Output(1),), idle_timeout=5), 0, b"", now=0.0)
>>> tables.add(FlowEntry(0, 0, ()), 0, b"", now=0.0)  # the table-miss entry: drop
>>> tables.lookup(0, Packet(1, 2), in_port=3, now=1.0).priority
10
>>> [held.entry.priority for held in tables.expire(now=7.0)]  # idle since 1.0
[10]
>>> tables.lookup(0, Packet(1, 2), in_port=3, now=8.0).priority
0
"""

from __future__ import annotations

from dataclasses import dataclass

from os_ken.ofproto import ofproto_v1_3 as ofp

from srfabric.rules.entries import EntryKey, FlowEntry, Match
from srfabric_tools.simulate import Packet

Shape = tuple[tuple[str, int | None], ...]  # the fields an entry matches, with their masks
Values = tuple[int, ...]


@dataclass
class Held:
    """An entry as the switch holds it: its flags, its match as sent (for the flow-removed message) and when a
    packet last hit it."""

    entry: FlowEntry
    flags: int
    raw_match: bytes
    added: float
    last_hit: float
    packets: int = 0
    sent_cookie: int = 0  # the cookie as the flow-mod carried it (the entry's may leave bits out)


def shape_of(match: Match) -> tuple[Shape, Values]:
    """An entry's group and its key in that group (values under their masks)."""
    ordered = sorted(match)
    return (tuple((name, mask) for name, _, mask in ordered),
            tuple(value if mask is None else value & mask for _, value, mask in ordered))


class FlowTables:
    """Every table of one switch."""

    def __init__(self) -> None:
        self.by_key: dict[EntryKey, Held] = {}
        # table -> shape -> values -> entries, highest priority first
        self.index: dict[int, dict[Shape, dict[Values, list[Held]]]] = {}
        self.timed: dict[EntryKey, Held] = {}

    def __len__(self) -> int:
        return len(self.by_key)

    def add(self, entry: FlowEntry, flags: int, raw_match: bytes, now: float, sent_cookie: int = 0) -> None:
        """OFPFC_ADD: a new entry, or one replacing the entry of the same table, priority and match."""
        self.remove(entry.key)
        held = Held(entry, flags, raw_match, now, now, 0, sent_cookie)
        self.by_key[entry.key] = held
        shape, values = shape_of(entry.match)
        same = self.index.setdefault(entry.table, {}).setdefault(shape, {}).setdefault(values, [])
        same.append(held)
        same.sort(key=lambda h: -h.entry.priority)
        if entry.idle_timeout:
            self.timed[entry.key] = held

    def modify(self, entry: FlowEntry, strict: bool) -> int:
        """OFPFC_MODIFY(_STRICT): new actions for the entries it names; how many changed."""
        changed = self.select(entry.table, entry.match, entry.priority if strict else None)
        for held in changed:
            old = held.entry
            held.entry = FlowEntry(old.table, old.priority, old.match, entry.actions, entry.goto, old.cookie,
                                   old.idle_timeout)
        return len(changed)

    def delete(self, table: int, match: Match, priority: int | None, cookie: int = 0, cookie_mask: int = 0
               ) -> list[Held]:
        """OFPFC_DELETE (``priority`` None: every entry whose match holds ``match``) or _STRICT; the removed."""
        gone = [h for h in self.select(table, match, priority) if (h.entry.cookie ^ cookie) & cookie_mask == 0]
        for held in gone:
            self.remove(held.entry.key)
        return gone

    def select(self, table: int, match: Match, priority: int | None) -> list[Held]:
        """The entries a modify or delete names: strict (``priority`` given) the one of that match; else every
        entry of ``table`` (any, for OFPTT_ALL) whose match includes every field of ``match``."""
        if priority is not None:
            found = self.by_key.get((table, priority, match))
            return [found] if found else []
        wanted = set(match)
        return [h for key, h in self.by_key.items()
                if (table == ofp.OFPTT_ALL or key[0] == table) and wanted <= set(h.entry.match)]

    def remove(self, key: EntryKey) -> Held | None:
        held = self.by_key.pop(key, None)
        if held is None:
            return None
        self.timed.pop(key, None)
        shape, values = shape_of(held.entry.match)
        groups = self.index[held.entry.table]
        same = groups[shape][values]
        same.remove(held)
        if not same:
            del groups[shape][values]
            if not groups[shape]:
                del groups[shape]
        return held

    def lookup(self, table: int, packet: Packet, in_port: int, now: float) -> FlowEntry | None:
        """The highest-priority entry of ``table`` that matches, its idle time restarted; None: a table miss."""
        best: Held | None = None
        for shape, groups in self.index.get(table, {}).items():
            values = []
            for name, mask in shape:
                have = packet.read(name, in_port)
                if have is None:
                    break
                values.append(have if mask is None else have & mask)
            else:
                found = groups.get(tuple(values))
                if found and (best is None or found[0].entry.priority > best.entry.priority):
                    best = found[0]
        if best is None:
            return None
        best.last_hit, best.packets = now, best.packets + 1
        return best.entry

    def expire(self, now: float) -> list[Held]:
        """Remove every entry idle for its timeout or longer; the removed."""
        idle = [h for h in self.timed.values() if now - h.last_hit >= h.entry.idle_timeout]
        for held in idle:
            self.remove(held.entry.key)
        return idle
