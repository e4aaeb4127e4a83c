"""Where Linux taprio should take a new list over from the one it runs, so that the switch-over opens no gate early.

Linux 6.1's taprio (``advance_sched``) leaves the running list at the start of the entry during which the new
list's base time falls, and runs the new list's first entry from there (upstream: "net/sched: taprio: fix too
early schedules switching"). With the base time on a cycle boundary, the old list's last entry (the guard band
before a window at offset 0) is replaced by the new first entry (that window): a frame waiting for it leaves a
guard band early. What is replaced is harmless when the two entries have one gate mask; so the list handed to
taprio starts, and its base time is moved, to a point where the old and the new lists agree, inside an entry of
each, in the stretch around the base time where they agree throughout: the old list runs up to that point and
the new one from it, and as both open the same gates there, every frame sees the new list from the base time.

Pure: the old list (what this port runs) and the new one in, the list for taprio out.

Examples
--------
>>> from srfabric.tsn.gates.gcl import GateEntry, PortGcl
>>> old = PortGcl("s1", "", "s1-eth1", 1000, 0, [GateEntry(2, 100), GateEntry(1, 850), GateEntry(0, 50)])
>>> new = PortGcl("s1", "", "s1-eth1", 1000, 5000, [GateEntry(2, 100), GateEntry(1, 400), GateEntry(3, 450),
...                                                 GateEntry(0, 50)])
>>> taken = for_taprio(old, new, min_piece_ns=20)
>>> taken.base_time_ns, [(e.mask, e.duration_ns) for e in taken.entries]
(5050, [(2, 50), (1, 400), (3, 450), (0, 50), (2, 50)])
"""

from __future__ import annotations

from dataclasses import replace

from srfabric.tsn.gates.gcl import GateEntry, PortGcl

MIN_PIECE_NS = 2_000  # each part of a split entry: well above taprio's shortest interval and a timer's slop


def mask_at(gcl: PortGcl, at_ns: int) -> int:
    """The gate mask ``gcl`` runs at ``at_ns`` (its cycle repeated both ways from its base time).

    >>> gcl = PortGcl("s1", "", "s1-eth1", 100, 1000, [GateEntry(2, 30), GateEntry(1, 70)])
    >>> mask_at(gcl, 1010), mask_at(gcl, 1099), mask_at(gcl, 995)
    (2, 1, 1)
    """
    offset = (at_ns - gcl.base_time_ns) % gcl.cycle_ns
    for entry in gcl.entries:
        if offset < entry.duration_ns:
            return entry.mask
        offset -= entry.duration_ns
    return gcl.entries[-1].mask


def boundaries(gcl: PortGcl, begin_ns: int, end_ns: int) -> list[int]:
    """The instants in [begin_ns, end_ns] where ``gcl`` moves from one entry to the next."""
    cycles_back = (gcl.base_time_ns - begin_ns) // gcl.cycle_ns + 1
    at, found = gcl.base_time_ns - cycles_back * gcl.cycle_ns, []
    while at <= end_ns:
        for entry in gcl.entries:
            if begin_ns <= at <= end_ns:
                found.append(at)
            at += entry.duration_ns
    return found


def switch_point(old: PortGcl, new: PortGcl, min_piece_ns: int = MIN_PIECE_NS) -> int:
    """The instant, near ``new``'s base time, from which taprio should run ``new``: the middle of the first stretch
    after the base time (or failing that, the last before it) in which neither list changes entry and both open
    the same gates, both lists agreeing all the way from the base time to it; the base time itself if none is
    long enough (then taprio's early switch happens as it would)."""
    base = new.base_time_ns
    span = max(old.cycle_ns, new.cycle_ns)
    cuts = sorted(set(boundaries(old, base - span, base + span)) | set(boundaries(new, base - span, base + span)))
    after = [base] + [cut for cut in cuts if cut > base]
    for begin, end in zip(after, after[1:], strict=False):
        if mask_at(old, begin) != mask_at(new, begin):
            break
        if end - begin >= 2 * min_piece_ns:
            return (begin + end) // 2
    before = [cut for cut in cuts if cut < base][::-1]
    for end, begin in zip([base, *before], before, strict=False):
        if mask_at(old, begin) != mask_at(new, begin):
            break
        if end - begin >= 2 * min_piece_ns:
            return (begin + end) // 2
    return base


def rotated(gcl: PortGcl, at_ns: int) -> PortGcl:
    """The same periodic list written to start at ``at_ns`` (the entry there split in two)."""
    offset = (at_ns - gcl.base_time_ns) % gcl.cycle_ns
    if offset == 0:
        return replace(gcl, base_time_ns=at_ns)
    head: list[GateEntry] = []
    tail = list(gcl.entries)
    while tail and offset >= tail[0].duration_ns:
        offset -= tail[0].duration_ns
        head.append(tail.pop(0))
    if offset:
        split = tail.pop(0)
        tail.insert(0, GateEntry(split.mask, split.duration_ns - offset))
        head.append(GateEntry(split.mask, offset))
    return replace(gcl, base_time_ns=at_ns, entries=tail + head)


def for_taprio(old: PortGcl | None, new: PortGcl, min_piece_ns: int = MIN_PIECE_NS) -> PortGcl:
    """``new`` as taprio should get it on a port running ``old`` (None: nothing yet, so no switch-over)."""
    if old is None or not old.entries:
        return new
    return rotated(new, switch_point(old, new, min_piece_ns))
