"""Per-switch tables under construction: entries and groups collected all or nothing, with the checks that keep
two chains (or streams) from fighting over one packet. Pure: no I/O.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import compress

from srfabric.errors import ModelError, SrfabricError
from srfabric.rules.entries import EntryKey, FlowEntry, GroupEntry, Kind, Match, match_fields


def matches_overlap(a: Match, b: Match) -> bool:
    """Whether some packet matches both: every field the two share agrees under both masks.

    >>> from srfabric.rules.entries import match
    >>> matches_overlap(match(udp_dst=5001), match(udp_dst=(5000, 0xFFF8)))
    True
    >>> matches_overlap(match(udp_dst=5001), match(udp_dst=5002))
    False
    """
    fields_a = match_fields(a)
    for name, value, mask in b:
        if name in fields_a:
            other_value, other_mask = fields_a[name]
            common = (mask if mask is not None else -1) & (other_mask if other_mask is not None else -1)
            if value & common != other_value & common:
                return False
    return True


class Tables:
    """Collects entries and groups per switch and refuses two different ones with one key."""

    def __init__(self, dpids: Iterable[int]) -> None:
        self.entries: dict[int, dict[EntryKey, FlowEntry]] = {d: {} for d in dpids}
        self.groups: dict[int, dict[int, GroupEntry]] = {d: {} for d in dpids}
        # Made by changing other tables: those, and per switch the keys whose entries may differ from theirs (a
        # switch not named has its very entries): what changed is then found without comparing every entry.
        self.since: tuple[Tables, dict[int, set[EntryKey]]] | None = None

    def add_all(self, placed: list[tuple[int, FlowEntry]], what: str, groups: Sequence[tuple[int, GroupEntry]] = (),
                check_overlap: bool = True, hint: str = "") -> None:
        """Add entries (and the groups they use) all or nothing, so a conflicting chain leaves no half of itself.

        Two chain entries of one priority whose matches can both hit one packet
        would leave the choice to the switch: that is refused too, unless
        ``check_overlap`` is off (the caller checked when the chain was added).
        """
        for dpid, group in groups:
            old_group = self.groups[dpid].get(group.group_id)
            if old_group is not None and old_group != group:
                raise ModelError(what, f"group {group.group_id} on switch {dpid:#x} is taken by another chain")
        for dpid, entry in placed:
            old = self.entries[dpid].get(entry.key)
            if old is not None and old != entry:
                raise ModelError(what, f"conflicts with an existing entry on switch {dpid:#x} "
                                       f"(cookie {old.cookie:#x}){hint}")
            if entry.kind not in (Kind.CHAIN, Kind.STREAM) or not check_overlap:
                continue
            for other in self.entries[dpid].values():  # plain fields first: a switch may hold a thousand routes
                if (other.table == entry.table and other.priority == entry.priority and other.cookie != entry.cookie
                        and other.kind == entry.kind and matches_overlap(other.match, entry.match)):
                    raise ModelError(what, f"its classifier overlaps another {entry.kind.name.lower()}'s "
                                           f"(cookie {other.cookie:#x}) "
                                           f"on switch {dpid:#x}; make them disjoint{hint}")
        for dpid, entry in placed:
            self.entries[dpid][entry.key] = entry
        for dpid, group in groups:
            self.groups[dpid][group.group_id] = group

    def sorted(self) -> dict[int, list[FlowEntry]]:
        """Each switch's entries by (table, priority, match): the same inputs give the same lists."""
        return {dpid: sorted(entries.values(), key=entry_order) for dpid, entries in self.entries.items()}

    def copy(self) -> Tables:
        other = Tables(())
        other.entries = {dpid: dict(entries) for dpid, entries in self.entries.items()}
        other.groups = {dpid: dict(groups) for dpid, groups in self.groups.items()}
        return other

    def sorted_groups(self) -> dict[int, list[GroupEntry]]:
        return {dpid: [groups[i] for i in sorted(groups)] for dpid, groups in self.groups.items() if groups}


def entry_order(entry: FlowEntry) -> tuple[int, int, Match]:
    """How a switch's entries are listed: by table, then highest priority first, then match."""
    return entry.table, -entry.priority, entry.match


class EntryList(list[FlowEntry]):
    """A switch's entries in order, made by ``resorted`` from the list before a change: it remembers that list and
    what came and went, so the reconciler comparing the two (``came_and_went``) needs no pass over either."""

    __slots__ = ("made_from", "went", "came")

    def __init__(self, entries: Iterable[FlowEntry], made_from: list[FlowEntry] | None = None,
                 went: list[FlowEntry] | None = None, came: list[FlowEntry] | None = None) -> None:
        super().__init__(entries)
        self.made_from, self.went, self.came = made_from, went, came
        if isinstance(made_from, EntryList):
            made_from.made_from = made_from.went = made_from.came = None  # one step back only: no chain of lists


def came_and_went(before: Sequence[FlowEntry], after: Sequence[FlowEntry]) -> tuple[list[FlowEntry], list[FlowEntry]]:
    """The entries of ``before`` that are not, by identity, in ``after`` and those of ``after`` not in ``before``,
    each in its list's order (the maps are built in C: a switch holds a thousand, a change touches a few; a list
    ``resorted`` made from ``before`` already knows).

    >>> a, b, c = (FlowEntry(0, p, ()) for p in (1, 2, 3))
    >>> came_and_went([a, b], [b, c]) == ([a], [c])
    True
    """
    if isinstance(after, EntryList) and after.made_from is before and after.went is not None \
            and after.came is not None:
        return list(after.went), list(after.came)
    was, now = set(map(id, before)), set(map(id, after))
    went, came = was - now, now - was
    return (list(compress(before, map(went.__contains__, map(id, before)))) if went else [],
            list(compress(after, map(came.__contains__, map(id, after)))) if came else [])


def resorted(before: list[FlowEntry] | None, entries: dict[EntryKey, FlowEntry],
             changed: tuple[list[FlowEntry], list[FlowEntry]] | None = None) -> list[FlowEntry]:
    """``entries`` in ``entry_order``, from the list of a switch's entries before a change: the entries that are
    the very ones kept in place and the others put in by bisection (a cut changes a few of a thousand), so the
    same list as sorting them all (no two share a key). The list made remembers ``before`` (``EntryList``).
    ``changed``, when the caller knows it, is what came and went (``came_and_went(before, entries)``).

    >>> a, b, c = (FlowEntry(0, p, (("in_port", p, None),)) for p in (30, 20, 10))
    >>> [e.priority for e in resorted([a, c], {e.key: e for e in (a, b, c)})]
    [30, 20, 10]
    """
    if before is None:
        return sorted(entries.values(), key=entry_order)
    gone, new = changed if changed is not None else came_and_went(before, list(entries.values()))
    # In each list's order: the kept list is in entry_order and no two entries share a key.
    gone.sort(key=entry_order)
    new.sort(key=entry_order)
    if len(gone) + len(new) > len(before) // 4:  # much changed: sort them all
        return EntryList(sorted(entries.values(), key=entry_order), before, gone, new)
    kept = EntryList(before, before, gone, new)
    for entry in gone:
        del kept[bisect.bisect_left(kept, entry_order(entry), key=entry_order)]
    for entry in new:
        bisect.insort(kept, entry, key=entry_order)
    return kept


@contextmanager
def reported(problems: list[SrfabricError] | None, what: str) -> Iterator[None]:
    """Run a block that places one host's or chain's entries; an error in it is raised, or, with
    ``problems`` given, recorded under ``what`` so that the rest still compiles."""
    try:
        yield
    except SrfabricError as error:
        if problems is None:
            raise
        problems.append(as_problem(error, what))


def as_problem(error: SrfabricError, what: str) -> SrfabricError:
    """``error`` as the problem of ``what`` (its own message when it already names it)."""
    return type(error)(what, error.message if error.field == what else str(error))



@dataclass
class SwitchState:
    """What every switch should hold: flow entries sorted by (table, priority, match), and groups by id."""

    entries: dict[int, list[FlowEntry]]
    groups: dict[int, list[GroupEntry]] = field(default_factory=dict)
