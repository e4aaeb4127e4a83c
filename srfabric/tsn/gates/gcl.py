"""Gate control lists (IEEE 802.1Qbv) for every egress port that carries scheduled streams.

The time-triggered class is open, alone, in the slots its streams use on that
port; before each such window the best-effort class is closed for one maximum
best-effort frame (the guard band), so no frame is still on the wire when the
window opens; the best-effort class is open the rest of the cycle. Adjacent
entries with equal gate masks are merged.

Examples
--------
>>> windows_to_entries([(100, 200)], cycle_ns=1000, guard_ns=30, tt_mask=2, be_mask=1)
[GateEntry(mask=1, duration_ns=70), GateEntry(mask=0, duration_ns=30), GateEntry(mask=2, duration_ns=100), \
GateEntry(mask=1, duration_ns=800)]
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field

from srfabric.tsn.model.network import SWITCH, Network
from srfabric.tsn.model.schedule import Assignment, Schedule
from srfabric.tsn.model.slots import SlotModel
from srfabric.tsn.model.timed import TimedSchedule

TT_CLASS = 1
BE_CLASS = 0
BE_FRAME_BYTES = 1500
U32 = 2**32 - 1  # the widest interval, cycle numerator and count the YANG modules and taprio take


@dataclass(frozen=True)
class GateEntry:
    """One SetGateStates entry: bit c of ``mask`` opens traffic class c for ``duration_ns``."""

    mask: int
    duration_ns: int


@dataclass(frozen=True)
class ClassShaper:
    """The credit-based shaper (802.1Qav) of one SR class on a port, in the units Linux's ``cbs`` takes."""

    priority: int  # the class's priority: 3 (class A) or 2 (class B)
    idle_kbit: int
    send_kbit: int
    hi_bytes: int
    lo_bytes: int


@dataclass
class PortGcl:
    """The gate control list of one egress port."""

    node: str
    peer: str
    interface: str
    cycle_ns: int
    base_time_ns: int = 0
    entries: list[GateEntry] = field(default_factory=list)
    tt_class: int = TT_CLASS
    be_class: int = BE_CLASS
    # The credit-based shaper's traffic classes the list also opens (802.1Qav's SR classes, each taking the frames
    # of the priority with its own number: class A priority 3, class B priority 2); none by default.
    sr_classes: tuple[int, ...] = ()
    # The SR classes' shapers on the port (Linux: ``shaping``): the classes share best effort's traffic class and gate.
    shapers: tuple[ClassShaper, ...] = ()


def same_list(a: PortGcl, b: PortGcl) -> bool:
    """Whether two lists gate their port alike, whatever their base times (both boundaries of one cycle).

    >>> same_list(PortGcl("s1", "s2", "s1-eth1", 1000, 0, [GateEntry(2, 1000)]),
    ...           PortGcl("s1", "s2", "s1-eth1", 1000, 8000, [GateEntry(2, 1000)]))
    True
    """
    return (a.interface, a.node, a.cycle_ns, a.tt_class, a.be_class, a.sr_classes, a.shapers) == \
        (b.interface, b.node, b.cycle_ns, b.tt_class, b.be_class, b.sr_classes, b.shapers) and a.entries == b.entries


def windows_to_entries(
    windows: list[tuple[int, int]], cycle_ns: int, guard_ns: int, tt_mask: int, be_mask: int
) -> list[GateEntry]:
    """Entries covering ``[0, cycle_ns)`` for time-triggered ``windows`` (start, end) in the cycle: open to the
    time-triggered class in a window, closed in the guard band before each window's start (a window wins over
    a guard), best effort elsewhere.

    >>> windows_to_entries([(0, 100), (500, 600)], cycle_ns=1000, guard_ns=50, tt_mask=2, be_mask=1)[-2:]
    [GateEntry(mask=1, duration_ns=350), GateEntry(mask=0, duration_ns=50)]
    """
    guards: list[tuple[int, int]] = []
    for start, _ in windows:
        begin = start - guard_ns
        if begin >= 0:
            guards.append((begin, start))
        else:  # The guard of an early window reaches back into the end of the previous cycle.
            guards += [(0, start), (cycle_ns + begin, cycle_ns)]
    cuts = sorted({0, cycle_ns, *(t for w in windows + guards for t in w)})
    tt, guarded = _merge([w for w in windows if w[0] < w[1]]), _merge([g for g in guards if g[0] < g[1]])
    # One sweep over the cuts, in order: every span's ends are cuts, so a piece between two cuts lies wholly
    # inside a span or wholly outside it, and the spans that end before a piece are never asked again.
    at_tt = at_guard = 0
    entries: list[GateEntry] = []
    mask, run = -1, 0
    for begin, end in zip(cuts, cuts[1:], strict=False):
        while at_tt < len(tt) and tt[at_tt][1] <= begin:
            at_tt += 1
        while at_guard < len(guarded) and guarded[at_guard][1] <= begin:
            at_guard += 1
        if at_tt < len(tt) and tt[at_tt][0] <= begin:
            here = tt_mask
        elif at_guard < len(guarded) and guarded[at_guard][0] <= begin:
            here = 0
        else:
            here = be_mask
        if here != mask and run:
            entries.append(GateEntry(mask, run))
            run = 0
        mask, run = here, run + end - begin
    if run:
        entries.append(GateEntry(mask, run))
    return entries


def build_gcls(
    schedule: Schedule,
    guard_bytes: int = BE_FRAME_BYTES,
    include_hosts: bool = False,
    tt_class: int = TT_CLASS,
    be_class: int = BE_CLASS,
    base_time_ns: int = 0,
    slot_model: SlotModel | None = None,
    extra: Sequence[tuple[Assignment, int]] = (),
) -> list[PortGcl]:
    """One :class:`PortGcl` per egress port used by the schedule (switch ports; host ports on request).
    ``extra``: more positions (each with its period in base periods) held by no stream of the problem, such as a
    redundant stream's second tree (``tsn.redundant``)."""
    problem = schedule.problem
    network = problem.network
    slot_model = slot_model or SlotModel()
    cycle_ns = problem.cycles * problem.base_period_ns
    index_of = {stream.id: index for index, stream in enumerate(problem.streams)}
    windows: dict[tuple[str, str], list[tuple[int, int]]] = {}
    held = [(a, range(a.phase, problem.cycles, problem.multiples[index_of[a.stream]])) for a in schedule.assignments]
    for assignment, cycles in [*held, *((a, range(a.phase, problem.cycles, m)) for a, m in extra)]:
        for hop in zip(assignment.path, assignment.path[1:], strict=False):
            if network.kinds[hop[0]] != SWITCH and not include_hosts:
                continue
            for cycle in cycles:
                start = cycle * problem.base_period_ns + assignment.slot * problem.slot_ns
                windows.setdefault(hop, []).append((start, start + problem.slot_ns))
    return [port_gcl(network, hop, spans, cycle_ns, slot_model, guard_bytes, problem.base_period_ns, tt_class,
                      be_class, base_time_ns) for hop, spans in sorted(windows.items())]


def port_gcl(network: Network, hop: tuple[str, str], spans: list[tuple[int, int]], cycle_ns: int,
              slot_model: SlotModel, guard_bytes: int, guard_cap_ns: int, tt_class: int, be_class: int,
              base_time_ns: int) -> PortGcl:
    """The gate control list of egress port ``hop`` open to the time-triggered class in ``spans``, a guard band
    of one ``guard_bytes`` frame at the link's rate (at most ``guard_cap_ns``) before each window."""
    node, peer = hop
    rate = network.link_of(network.edge_index[node, peer]).rate_bps
    guard = min(slot_model.frame_ns(guard_bytes, rate), guard_cap_ns)
    entries = list(cached_entries(tuple(_merge(spans)), cycle_ns, guard, 1 << tt_class, 1 << be_class))
    return PortGcl(node, peer, network.interface(node, peer), cycle_ns, base_time_ns, entries, tt_class, be_class)


@functools.lru_cache(maxsize=4096)
def cached_entries(windows: tuple[tuple[int, int], ...], cycle_ns: int, guard_ns: int, tt_mask: int, be_mask: int
             ) -> tuple[GateEntry, ...]:
    """``windows_to_entries``, kept: a change of one stream leaves most ports' windows as they were."""
    return tuple(windows_to_entries(list(windows), cycle_ns, guard_ns, tt_mask, be_mask))


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The union of ``spans`` as sorted, disjoint spans (touching ones joined)."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def build_timed_gcls(
    schedule: TimedSchedule,
    guard_bytes: int = BE_FRAME_BYTES,
    include_hosts: bool = False,
    tt_class: int = TT_CLASS,
    be_class: int = BE_CLASS,
    base_time_ns: int = 0,
) -> list[PortGcl]:
    """One :class:`PortGcl` per egress port of a fine-grained schedule: the time-triggered class open in its
    frames' windows over the hyperperiod (the cycle), a guard band before each, best effort the rest."""
    problem = schedule.problem
    network = problem.network
    slot_model = SlotModel(overhead_bytes=problem.overhead_bytes)
    fastest = min(s.period_ns for s in problem.streams)
    return [port_gcl(network, hop, [(start, end) for start, end, _ in spans], problem.hyperperiod_ns, slot_model,
                      guard_bytes, fastest, tt_class, be_class, base_time_ns)
            for hop, spans in sorted(schedule.windows().items())
            if network.kinds[hop[0]] == SWITCH or include_hosts]
