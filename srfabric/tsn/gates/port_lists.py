"""Every egress port's gate control list, kept between changes and made again only on the ports whose windows
changed: admitting one stream beside a thousand redoes the lists of the ports on its path (and of the streams it
moved), not of every port of the fabric. The lists are those of :func:`~srfabric.tsn.gates.gcl.build_gcls` for
the same positions. Pure: no I/O.

Examples
--------
>>> from srfabric.model.topo import tsn_fig1
>>> from srfabric.tsn.runtime.live import network_from_fabric
>>> from srfabric.tsn.model.schedule import Assignment
>>> lists = PortLists(network_from_fabric(tsn_fig1().to_fabric()), 27_036, 1_000_000, 1500)
>>> cam = Assignment("cam", 0, ("h1", "s1", "s2", "s5", "h3"))
>>> [gcl.interface for gcl in lists.update({"cam": (cam, 1)})]
['s1-eth3', 's2-eth2', 's5-eth4']
>>> first = lists.finished(4_000_000, 0, None)[0]
>>> first.cycle_ns, len(first.entries)  # the cycle of one base period, repeated to the hyperperiod's
(4000000, 12)
>>> cam2 = Assignment("cam2", 1, ("h2", "s1", "s3", "s4", "h4"))
>>> len(lists.update({"cam": (cam, 1), "cam2": (cam2, 1)}))
6
>>> lists.finished(4_000_000, 0, None)[0] is first  # s1-eth3 did not change: the very list again
True
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Iterator
from operator import itemgetter

from srfabric.tsn.gates.gcl import BE_CLASS, BE_FRAME_BYTES, TT_CLASS, PortGcl, cached_entries, port_gcl
from srfabric.tsn.model.network import SWITCH, Network
from srfabric.tsn.model.schedule import Assignment
from srfabric.tsn.model.slots import SlotModel

Hop = tuple[str, str]
Window = tuple[int, int]
Duty = tuple[tuple[Window, ...], int]  # a duty cycle's windows over the hyperperiod, and its guard band (ns)


class PortLists:
    """The windows each port holds (counted: two positions may share one) and each port's list, for the
    positions last given to :meth:`update`."""

    def __init__(self, network: Network, slot_ns: int, base_period_ns: int, guard_bytes: int = BE_FRAME_BYTES,
                 slot_model: SlotModel | None = None, tt_class: int = TT_CLASS, be_class: int = BE_CLASS) -> None:
        self.network, self.slot_ns, self.base_period_ns = network, slot_ns, base_period_ns
        self.guard_bytes, self.slot_model = guard_bytes, slot_model or SlotModel()
        self.classes = (tt_class, be_class)
        self.held: dict[Hashable, tuple[Assignment, int]] = {}
        self.windows: dict[Hop, Counter[Window]] = {}
        self.lists: dict[Hop, PortGcl] = {}
        self.cycles = 0
        self._order: list[Hop] = []  # the ports of ``lists``, sorted (made again when one comes or goes)
        self._finished: dict[Hop, tuple[PortGcl, PortGcl]] = {}  # a port's list -> as ``finished`` gave it
        self._finish_key: tuple[int, int, Duty | None] | None = None

    def update(self, held: dict[Hashable, tuple[Assignment, int]]) -> list[PortGcl]:
        """The lists for ``held`` (each position with its period in base periods), sorted by port: the kept
        lists themselves, which the caller must not change. The cycle is the least common multiple of the
        periods."""
        cycles = math.lcm(*set(map(itemgetter(1), held.values()))) if held else 1
        if cycles != self.cycles:  # every window moves within a new cycle length: start again
            self.held, self.windows, self.lists, self.cycles = {}, {}, {}, cycles
            self._order = []
        dirty: set[Hop] = set()
        kept = self.held
        for key in kept.keys() - held.keys():
            dirty |= self._count(kept.pop(key), -1)
        for key, position in held.items():  # a thousand streams, one of them changed: keep this loop lean
            before = kept.get(key)
            if before is not None and before[1] == position[1] and (before[0] is position[0]
                                                                  or before[0] == position[0]):
                continue
            if before is not None:
                dirty |= self._count(before, -1)
            dirty |= self._count(position, 1)
            kept[key] = position
        for hop in dirty:
            self._redo(hop)
        if len(self._order) != len(self.lists) or any(hop not in self.lists for hop in dirty):
            self._order = sorted(self.lists)
        return [self.lists[hop] for hop in self._order]

    def finished(self, hyper_ns: int, base_time_ns: int, duty: Duty | None) -> list[PortGcl]:
        """The lists of the last :meth:`update` as the ports run them: repeated to ``hyper_ns`` (one cycle length
        on every port, whatever the streams: a change never resizes it), at ``base_time_ns``, or with ``duty``'s
        windows instead of the slots. A port whose list did not change gets the very object it got last time, so
        a caller can tell the changed ones by identity; nobody may change them."""
        key = (hyper_ns, base_time_ns, duty)
        if key != self._finish_key or len(self._finished) > 2 * len(self.lists):
            self._finished, self._finish_key = {}, key
        out = []
        for hop in self._order:
            raw = self.lists[hop]
            kept = self._finished.get(hop)
            if kept is None or kept[0] is not raw:
                kept = self._finished[hop] = (raw, _finish(raw, hyper_ns, base_time_ns, duty))
            out.append(kept[1])
        return out

    def _count(self, position: tuple[Assignment, int], sign: int) -> set[Hop]:
        hops = set()
        for hop, window in self._windows(position):
            counts = self.windows.setdefault(hop, Counter())
            counts[window] += sign
            if counts[window] <= 0:
                del counts[window]
            hops.add(hop)
        return hops

    def _windows(self, position: tuple[Assignment, int]) -> Iterator[tuple[Hop, Window]]:
        """As ``build_gcls`` places them: the slot in every cycle of the position's phase, on switch ports."""
        assignment, multiple = position
        for hop in zip(assignment.path, assignment.path[1:], strict=False):
            if self.network.kinds[hop[0]] != SWITCH:
                continue
            for cycle in range(assignment.phase, self.cycles, multiple):
                start = cycle * self.base_period_ns + assignment.slot * self.slot_ns
                yield hop, (start, start + self.slot_ns)

    def _redo(self, hop: Hop) -> None:
        counts = self.windows.get(hop)
        if not counts:
            self.windows.pop(hop, None)
            self.lists.pop(hop, None)
            return
        self.lists[hop] = port_gcl(self.network, hop, list(counts.elements()), self.cycles * self.base_period_ns,
                                   self.slot_model, self.guard_bytes, self.base_period_ns, *self.classes, 0)


def _finish(gcl: PortGcl, hyper_ns: int, base_time_ns: int, duty: Duty | None) -> PortGcl:
    """``gcl`` over ``hyper_ns`` at ``base_time_ns`` (``duty``'s windows when given), as a new list."""
    entries = gcl.entries * (hyper_ns // gcl.cycle_ns) if gcl.cycle_ns != hyper_ns else list(gcl.entries)
    if duty is not None:
        entries = list(cached_entries(duty[0], hyper_ns, duty[1], 1 << gcl.tt_class, 1 << gcl.be_class))
    return PortGcl(gcl.node, gcl.peer, gcl.interface, hyper_ns, base_time_ns, entries, gcl.tt_class, gcl.be_class)
