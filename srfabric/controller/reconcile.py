"""What each switch holds, and the difference from what it should hold: the messages that close it.

The controller remembers each switch's entries (key -> the cookie they were sent with, whose digest bits say
exactly which entry it is: ``ofbind.wire_cookie``) and groups. A sync compiles what every switch should hold;
``plan`` gives, per switch, the deletes and adds that close the gap, sent with one barrier; ``confirmed``
records what the switch then holds. A switch that connects is read back (``held``), so a restarted controller
changes only what differs: no flush, no duplicates. Pure: no I/O.
"""

from __future__ import annotations

import operator
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import compress, repeat
from operator import itemgetter
from typing import Any

from srfabric.rules.entries import EntryKey, FlowEntry, GroupEntry, kind_of
from srfabric.rules.meters import meter_changes
from srfabric.rules.openflow.ofbind import group_delete, group_mod, meter_delete, meter_mod, wire_cookie
from srfabric.rules.openflow.wire import flow_add_packed, flow_delete_packed
from srfabric.rules.tables import came_and_went

# What a switch with no entries or no groups is asked to hold: the very same lists each time, so that ``touched``
# knows by identity that nothing changed there (never changed by anyone).
NO_ENTRIES: list[FlowEntry] = []
NO_GROUPS: list[GroupEntry] = []
_NEVER = (object(), object(), object(), object())  # a switch never confirmed: no column is the very one
Held = dict[EntryKey, int]  # entry key -> the cookie it was sent with
HeldGroups = dict[int, GroupEntry | None]  # group id -> the group (None: one srfabric did not send)


@dataclass
class Push:
    """One switch's part of a sync: ``messages`` (sent with a barrier), and what the switch holds once the
    barrier confirms them (``wanted``, ``wanted_groups``) or, if it does not, at least (``held`` kept where
    wanted, plus ``added`` and ``changed``)."""

    dpid: int
    messages: list[Any]
    held: Held
    wanted: Held
    added: list[FlowEntry]
    held_groups: HeldGroups
    wanted_groups: dict[int, GroupEntry]
    changed: list[GroupEntry]
    desired: tuple[list[FlowEntry], list[GroupEntry]]
    held_meters: set[int]
    wanted_meters: set[int]


class Reconciler:
    """Each switch's held entries and groups, and counts of what was sent to it."""

    def __init__(self) -> None:
        self.installed: dict[int, Held] = {}
        self.installed_groups: dict[int, HeldGroups] = {}
        self.installed_meters: dict[int, set[int]] = {}  # meter ids held (``rules.meters``), by switch
        self.sent: dict[int, int] = {}  # flow-mods each switch got in the last sync that changed it (a count)
        self.flow_mods: dict[int, int] = {}  # flow-mods (adds, deletes) and group-mods each switch got since the start
        self.flow_mod_kinds: dict[tuple[int, str], int] = {}  # the same by (switch, entry kind)
        # The last confirmed push per switch: (entries, groups, the held dicts it left). A sync that wants the same
        # again skips the switch; one that wants a little more or less looks only at the entries that are not
        # the very ones confirmed (``_since``). A read-back replaces the held dicts, and a reactive entry sent
        # outside a sync drops the record, so the switch is compared entry by entry again.
        self.last: dict[int, tuple[list[FlowEntry], list[GroupEntry], Held, HeldGroups]] = {}

    def held(self, dpid: int, entries: Held, groups: HeldGroups, meters: set[int] | None = None) -> None:
        """What a connecting switch holds, as read back."""
        self.installed[dpid] = entries
        self.installed_groups[dpid] = groups
        self.installed_meters[dpid] = set(meters or ())

    def touched(self, dpids: list[int], tables: dict[int, list[FlowEntry]], groups: dict[int, list[GroupEntry]]
                ) -> list[int]:
        """The switches of ``dpids`` whose wanted lists are not the very ones last confirmed (with nothing held
        since): only they need ``plan`` (a change touches a switch or two of hundreds)."""
        # Column by column through C's map: it runs at every change over every switch of the fabric.
        count = len(dpids)
        kept = list(map(self.last.get, dpids, repeat(_NEVER, count)))
        wanted: tuple[Iterable[object], ...] = (
            map(tables.get, dpids, repeat(NO_ENTRIES, count)), map(groups.get, dpids, repeat(NO_GROUPS, count)),
            map(self.installed.get, dpids), map(self.installed_groups.get, dpids))
        differs = [map(operator.is_not, map(itemgetter(column), kept), now) for column, now in enumerate(wanted)]
        return list(compress(dpids, map(any, zip(*differs, strict=True))))

    def plan(self, dpid: int, desired_list: list[FlowEntry], desired_groups: list[GroupEntry]) -> Push | None:
        """What to send ``dpid`` so that it holds ``desired_list`` and ``desired_groups``; None when it does."""
        last = self.last.get(dpid)
        if (last is not None and last[2] is self.installed.get(dpid) and last[3] is self.installed_groups.get(dpid)
                and (last[0] is desired_list or last[0] == desired_list)
                and (last[1] is desired_groups or last[1] == desired_groups)):
            if last[0] is not desired_list or last[1] is not desired_groups:  # equal, not the very lists: know
                # these, so that next time costs nothing
                self.last[dpid] = (desired_list, desired_groups, last[2], last[3])
            return None  # the compile cache hands an unchanged switch its very list again
        current = self.installed.setdefault(dpid, {})
        if last is not None and last[2] is current:
            cookies, removed, added = _since(last[0], desired_list, current)
        else:
            cookies, removed, added = _between(current, desired_list)
        groups = {group.group_id: group for group in desired_groups}
        current_groups = self.installed_groups.setdefault(dpid, {})
        changed = [group for gid, group in groups.items()
                   if (held := current_groups.get(gid, False)) is not group and held != group]
        dropped = [gid for gid in current_groups if gid not in groups]
        held_meters = self.installed_meters.setdefault(dpid, set())
        meters = meter_changes(held_meters, added, desired_list)
        if not removed and not added and not changed and not dropped and not meters.deleted:
            self.last[dpid] = (desired_list, desired_groups, current, current_groups)
            return None
        # Groups and meters first (entries refer to them), entries next, unused groups and meters last; all with
        # the barrier in one write.
        messages = [group_mod(group, modify=group.group_id in current_groups) for group in changed]
        messages += [meter_mod(meter, modify=meter.meter_id in meters.modify) for meter in meters.setting]
        messages += [flow_delete_packed(FlowEntry(*key)) for key in removed]
        messages += [flow_add_packed(entry) for entry in added]
        messages += [group_delete(gid) for gid in dropped]
        messages += [meter_delete(meter_id) for meter_id in meters.deleted]
        self.last.pop(dpid, None)
        self.sent[dpid] = len(removed) + len(added)
        # Group-mods count with the flow-mods: both change what the switch holds.
        self.count(dpid, len(removed) + len(added) + len(changed) + len(dropped))
        kinds = Counter(map(kind_of, map(current.__getitem__, removed)))
        kinds.update(entry.kind for entry in added)
        for kind, sent in kinds.items():
            self.count_kind(dpid, kind.name.lower() if kind is not None else "foreign", sent)
        if changed or dropped:
            self.count_kind(dpid, "group", len(changed) + len(dropped))
        return Push(dpid, messages, current, cookies, added, current_groups, groups, changed,
                    (desired_list, desired_groups), held_meters, meters.wanted)

    def confirmed(self, push: Push) -> None:
        """The switch confirmed ``push`` with its barrier: it holds what was wanted."""
        self.installed[push.dpid] = push.wanted
        self.installed_groups[push.dpid] = dict(push.wanted_groups)
        self.installed_meters[push.dpid] = set(push.wanted_meters)
        self.last[push.dpid] = (*push.desired, self.installed[push.dpid], self.installed_groups[push.dpid])

    def failed(self, push: Push) -> None:
        """The switch refused or did not answer: assume the adds landed, so the next sync deletes whatever is not
        wanted."""
        self.installed[push.dpid] = {**{k: v for k, v in push.held.items() if k in push.wanted},
                                     **{entry.key: push.wanted[entry.key] for entry in push.added}}
        self.installed_groups[push.dpid] = {**{g: v for g, v in push.held_groups.items() if g in push.wanted_groups},
                                            **{group.group_id: group for group in push.changed}}
        self.installed_meters[push.dpid] = push.held_meters | push.wanted_meters

    def add(self, dpid: int, key: EntryKey, cookie: int) -> None:
        """A reactive entry sent outside a sync: the switch holds more than was last confirmed (``_since`` no
        longer applies to it)."""
        self.installed.setdefault(dpid, {})[key] = cookie
        self.last.pop(dpid, None)

    def forget(self, dpid: int, key: EntryKey) -> None:
        """An entry the switch let go (idle): what it holds is no longer what was last confirmed."""
        self.installed.get(dpid, {}).pop(key, None)
        self.last.pop(dpid, None)

    def count(self, dpid: int, messages: int = 1) -> None:
        self.flow_mods[dpid] = self.flow_mods.get(dpid, 0) + messages

    def count_kind(self, dpid: int, kind: str, messages: int = 1) -> None:
        self.flow_mod_kinds[(dpid, kind)] = self.flow_mod_kinds.get((dpid, kind), 0) + messages


def _between(current: Held, desired_list: list[FlowEntry]) -> tuple[Held, list[EntryKey], list[FlowEntry]]:
    """What a switch holding ``current`` should hold, the keys to delete and the entries to add."""
    desired = {entry.key: entry for entry in desired_list}
    cookies = {key: wire_cookie(entry) for key, entry in desired.items()}
    removed = [key for key in current if key not in desired]
    added = [entry for key, entry in desired.items() if current.get(key) != cookies[key]]
    return cookies, removed, added


def _since(confirmed: list[FlowEntry], desired_list: list[FlowEntry], current: Held
           ) -> tuple[Held, list[EntryKey], list[FlowEntry]]:
    """``_between`` for a switch that holds exactly ``confirmed`` (as ``current`` says): only the entries that are
    not the very ones confirmed are looked at, so a change costs what it changes, not what the switch holds."""
    gone, new = came_and_went(confirmed, desired_list)
    cookies = dict(current)
    for entry in gone:
        cookies.pop(entry.key, None)
    for entry in new:
        cookies[entry.key] = wire_cookie(entry)
    removed = [entry.key for entry in gone if entry.key not in cookies]
    added = [entry for entry in new if current.get(entry.key) != cookies[entry.key]]
    return cookies, removed, added
