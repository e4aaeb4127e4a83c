"""Streams on the running fabric: admit one at a time, move, remove, and give the gate control lists. Pure.

The slot length is fixed when the planner starts (the largest frame allowed
across the longest path allowed), so admitting a stream never changes other
streams' offsets. A stream of period ``m`` base periods uses its slot in the
cycles ``c ≡ phase (mod m)`` of a hyperperiod of ``hyper_cycles`` base periods.

By default each gated port opens the time-triggered class in its streams'
slots only. A *duty cycle* (the coupling paper's X:Y) instead opens it for the
first ``duty_percent`` of every base period on every gated port, best effort
the rest: streams are then admitted only into slots inside that window.

Examples
--------
>>> from srfabric.model.topo import tsn_fig1
>>> planner = LivePlanner(network_from_fabric(tsn_fig1().to_fabric()))
>>> planner.slots, planner.slot_ns
(36, 27036)
>>> placed = planner.admit(Stream("cam", "h1", "h3", period_ns=1_000_000, size_bytes=200))
>>> placed.path, placed.slot
(('h1', 's1', 's2', 's5', 'h3'), 0)
>>> [gcl.interface for gcl in planner.gcls(base_time_ns=0)]
['s1-eth3', 's2-eth2', 's5-eth4']
>>> planner.set_duty(50)
>>> [(e.mask, e.duration_ns) for e in planner.gcls(base_time_ns=0)[0].entries[:3]]
[(2, 500000), (1, 487664), (0, 12336)]
>>> try:
...     planner.set_duty(1)
... except Refused as refused:
...     print(refused)
duty_percent: 1 % opens 10000 ns per period, where stream cam's slot 0 ends at 27036 ns
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

from srfabric.errors import ModelError
from srfabric.model.fabric import Fabric
from srfabric.tsn.gates.gcl import PortGcl
from srfabric.tsn.gates.port_lists import PortLists
from srfabric.tsn.model.network import HOST, SWITCH, Link, Network, Stream
from srfabric.tsn.model.schedule import Assignment, Schedule
from srfabric.tsn.model.slots import Problem, SlotModel
from srfabric.tsn.model.solve_options import SolveOptions
from srfabric.tsn.schedulers.slot.batch import BatchResult, admit_batch
from srfabric.tsn.schedulers.slot.incremental import Admission
from srfabric.tsn.schedulers.slot.redundant import RedundantPlan, plan_pair

MAX_LINKS = 14  # a path in one mac-nibble header: 12 switch-to-switch links, plus the two hosts' links


class Refused(ModelError):
    """A stream that is well-formed but does not fit (HTTP 409): the field says why."""


@dataclass(frozen=True)
class CycleConfig:
    """The time grid of the live fabric."""

    base_period_ns: int = 1_000_000
    hyper_cycles: int = 4  # periods of 1, 2 or 4 base periods
    max_frame_bytes: int = 1500
    rate_bps: int = 1_000_000_000
    t_hop_ns: int = 1050  # processing plus propagation per link
    max_links: int = MAX_LINKS
    k_paths: int = 4
    guard_bytes: int = 1500

    @property
    def cycle_ns(self) -> int:
        """The gates' cycle on every port: the whole hyperperiod, whatever the streams."""
        return self.hyper_cycles * self.base_period_ns

    @property
    def slot_model(self) -> SlotModel:
        return SlotModel(diameter=self.max_links)

    @property
    def slot_ns(self) -> int:
        return self.slot_model.slot_ns(self.max_frame_bytes, self.rate_bps, self.t_hop_ns)


def network_from_fabric(fabric: Fabric, config: CycleConfig | None = None) -> Network:
    """The controller's fabric as the scheduler's network, with the switches' real port numbers."""
    config = config or CycleConfig()
    names = {dpid: switch.name for dpid, switch in fabric.switches.items()}
    network = Network(kinds={**{name: SWITCH for name in names.values()}, **{h: HOST for h in fabric.hosts}})
    t_proc = config.t_hop_ns - 50
    done: set[tuple[int, int]] = set()
    for (a, a_port), (b, b_port) in sorted(fabric.links.items()):
        if (b, b_port) in done or a not in names or b not in names:
            continue
        done.add((a, a_port))
        network.add_link(Link(names[a], names[b], config.rate_bps, t_proc, 50, a_port, b_port))
    for host in sorted(fabric.hosts.values(), key=lambda h: h.name):
        if host.dpid in names:
            network.add_link(Link(host.name, names[host.dpid], config.rate_bps, t_proc, 50, 1, host.port))
    network.validate()
    return network


class LivePlanner:
    """The admitted streams of one network and where each one sends."""

    def __init__(self, network: Network, config: CycleConfig | None = None) -> None:
        self.network = network
        self.config = config = config or CycleConfig()
        self.slot_ns = config.slot_ns
        self.slots = config.base_period_ns // self.slot_ns
        if self.slots < 1:
            raise ModelError("base_period_ns", f"{config.base_period_ns} ns is shorter than one slot "
                                               f"({self.slot_ns} ns)")
        self.admission = Admission(network, self.slots, config.hyper_cycles, config.max_links, config.k_paths)
        self.port_lists = PortLists(network, self.slot_ns, config.base_period_ns, config.guard_bytes, config.slot_model)
        self.streams: dict[str, tuple[Stream, int]] = {}
        self.redundant: dict[str, RedundantPlan] = {}  # streams sent along two trees (``tsn.redundant``)
        self.duty_percent: int | None = None

    def window_ns(self, duty_percent: int) -> int:
        return self.config.base_period_ns * duty_percent // 100

    def set_duty(self, duty_percent: int | None) -> None:
        """Open the time-triggered class for ``duty_percent`` of every base period (None: in its slots only);
        raises :class:`Refused` naming a stream whose slot lies outside the window (nothing changes)."""
        if duty_percent is None:
            self.admission.slots, self.duty_percent = self.slots, None
            return
        if not 1 <= duty_percent <= 99:
            raise ModelError("duty_percent", f"must be between 1 and 99, got {duty_percent}")
        window = self.window_ns(duty_percent)
        for name in sorted(self.streams):
            spill = self.redundant[name].spill if name in self.redundant else None
            slot = (spill or self.admission.admitted[name][0]).slot
            if (slot + 1) * self.slot_ns > window:
                raise Refused("duty_percent", f"{duty_percent} % opens {window} ns per period, where stream "
                                              f"{name}'s slot {slot} ends at {(slot + 1) * self.slot_ns} ns")
        self.admission.slots = min(self.slots, window // self.slot_ns)
        self.duty_percent = duty_percent

    def multiple(self, stream: Stream) -> int:
        """The stream's period in base periods; raises naming the field when it does not fit the grid."""
        base, hyper = self.config.base_period_ns, self.config.hyper_cycles
        if stream.period_ns % base or hyper % (stream.period_ns // base):
            allowed = ", ".join(str(base * m) for m in range(1, hyper + 1) if hyper % m == 0)
            raise ModelError("period_ns", f"{stream.period_ns} is not one of the periods the cycle allows: {allowed}")
        if stream.size_bytes > self.config.max_frame_bytes:
            raise ModelError("size_bytes", f"{stream.size_bytes} exceeds the slot's {self.config.max_frame_bytes}")
        return stream.period_ns // base

    def latency_ns(self, stream: Stream, path: Sequence[str]) -> int:
        """Worst case from the slot's start to the last bit at the listener (cut-through switches)."""
        return SlotModel().latency_ns(stream.size_bytes, self.config.rate_bps, self.config.t_hop_ns, len(path) - 1)

    def _candidates(self, stream: Stream, paths: Sequence[tuple[str, ...]] | None) -> list[tuple[str, ...]]:
        for role in ("src", "dst"):
            if self.network.kinds.get(getattr(stream, role)) != HOST:
                raise ModelError("talker" if role == "src" else "listener",
                                 f"{getattr(stream, role)!r} is not a host of the fabric")
        if paths is None:
            paths = self.admission.finder.k_shortest(stream.src, stream.dst, self.config.k_paths)
        if not paths:
            raise Refused("path", f"no path of at most {self.config.max_links} links from {stream.src} "
                                  f"to {stream.dst}")
        if stream.deadline_ns is None:
            return list(paths)
        fitting = [path for path in paths if self.latency_ns(stream, path) <= stream.deadline_ns]
        if not fitting:
            best = min(self.latency_ns(stream, path) for path in paths)
            raise Refused("max_latency_ns", f"{stream.deadline_ns} ns is below the {best} ns a frame needs "
                                            "on its shortest path")
        return fitting

    def admit(self, stream: Stream, paths: Sequence[tuple[str, ...]] | None = None) -> Assignment:
        """Place ``stream`` without moving the admitted ones, or raise :class:`Refused` saying why."""
        if stream.id in self.streams:
            raise ModelError("id", f"stream {stream.id!r} is already admitted")
        multiple = self.multiple(stream)
        candidates = self._candidates(stream, paths)
        placed = self.admission.admit(stream, multiple, candidates)
        if placed is None:
            window = "" if self.duty_percent is None else f" (the {self.duty_percent} % duty cycle's window)"
            raise Refused("slot", f"no slot is free on any of the {len(candidates)} candidate path(s) from "
                                  f"{stream.src} to {stream.dst} in {self.admission.slots} slots of "
                                  f"{self.slot_ns} ns{window}")
        self.streams[stream.id] = (stream, multiple)
        return placed

    def admit_with_repair(self, stream: Stream, paths: Sequence[tuple[str, ...]] | None = None,
                          max_moves: int = 2) -> tuple[Assignment, list[Assignment]]:
        """``admit``, and where that finds no room, room made by moving at most ``max_moves`` admitted
        streams to other free slots or paths of their own candidates; returns the stream's assignment and
        the moved streams' new ones, or raises :class:`Refused` (nothing moved)."""
        try:
            return self.admit(stream, paths), []
        except Refused as refused:
            multiple = self.multiple(stream)
            repaired = self.admission.admit_with_repair(stream, multiple, self._candidates(stream, paths), max_moves)
            if repaired is None:
                raise Refused(refused.field, f"{refused.message}, nor after moving up to {max_moves} admitted "
                                             "streams") from None
            self.streams[stream.id] = (stream, multiple)
            return repaired

    def admit_batch(self, requests: Sequence[tuple[Stream, Sequence[tuple[str, ...]] | None]], max_moves: int = 2
                    ) -> tuple[BatchResult, dict[str, str], Callable[[], None]]:
        """Admit ``requests`` (stream, its paths or None) together
        (:mod:`srfabric.tsn.schedulers.slot.batch`): as many as the
        batch's order, repair and swaps find room for. Returns where they went, why each refused one was
        refused, and how to undo it all. Admitted streams stay admitted (some may move). A request that is
        not one (a period off the grid, a frame too big, an id taken) raises :class:`ModelError` and
        nothing changes."""
        prepared, refused = [], {}
        for stream, paths in requests:
            if stream.id in self.streams:
                raise ModelError("id", f"stream {stream.id!r} is already admitted")
            multiple = self.multiple(stream)
            try:
                prepared.append((stream, multiple, self._candidates(stream, paths)))
            except Refused as reason:
                refused[stream.id] = str(reason)
        before = {name: self.admission.admitted[name][0] for name in self.streams}
        result = admit_batch(self.admission, prepared, max_moves)
        window = "" if self.duty_percent is None else f" in the {self.duty_percent} % duty cycle's window"
        for stream, multiple, candidates in prepared:
            if stream.id in result.placed:
                self.streams[stream.id] = (stream, multiple)
            else:
                refused[stream.id] = (f"slot: no slot{window} on any of the {len(candidates)} candidate path(s) "
                                      f"from {stream.src} to {stream.dst} for this batch, nor after moving up to "
                                      f"{max_moves} admitted streams")

        def undo() -> None:
            for name in result.placed:
                self.remove(name)
            self.admission.replace([(before[a.stream], self.streams[a.stream][1]) for a in result.moved])

        return result, {stream.id: refused[stream.id] for stream, _ in requests if stream.id in refused}, undo

    def admit_redundant(self, stream: Stream, first: tuple[str, ...], second: tuple[str, ...],
                        at: tuple[int, int] | None = None) -> Assignment:
        """Place a redundant stream on both its trees in one slot and phase (``tsn.redundant``), or raise
        :class:`Refused` saying why; ``at``: only that (slot, phase), as when placed again after a restart."""
        if stream.id in self.streams:
            raise ModelError("id", f"stream {stream.id!r} is already admitted")
        multiple = self.multiple(stream)
        for field, tree in (("path", first), ("second_path", second)):
            try:
                self._candidates(stream, [tree])
            except Refused:
                raise
            except ModelError as error:  # a link the tree names is not there: say which tree
                raise ModelError(field, error.message) from None
        latency = self.redundant_latency_ns(stream, first, second)
        if stream.deadline_ns is not None and latency > stream.deadline_ns:
            raise Refused("max_latency_ns", f"{stream.deadline_ns} ns is below the {latency} ns the later copy "
                                            "may need (its tree, and one frame behind the other copy)")
        plan = plan_pair(self.admission, stream.id, multiple, first, second, latency > self.slot_ns, at)
        if plan is None:
            spill = " and the next slot on the listener's link" if latency > self.slot_ns else ""
            raise Refused("slot", f"no slot{spill} is free on both trees of {stream.id} in "
                                  f"{self.admission.slots} slots of {self.slot_ns} ns")
        placed: list[Assignment] = []
        try:
            for piece in (plan.first, *plan.extra):
                self.admission.place(piece, multiple)
                placed.append(piece)
        except ModelError:
            for piece in placed:
                self.admission.remove(piece.stream)
            raise
        self.streams[stream.id] = (stream, multiple)
        self.redundant[stream.id] = plan
        return plan.first

    def redundant_latency_ns(self, stream: Stream, first: Sequence[str], second: Sequence[str]) -> int:
        """A redundant stream's worst case: its slower tree, and one frame behind the other copy on the
        listener's link."""
        frame = SlotModel().frame_ns(stream.size_bytes, self.config.rate_bps)
        return max(self.latency_ns(stream, first), self.latency_ns(stream, second)) + frame

    def keep(self, stream_id: str) -> Callable[[], None]:
        """How to put admitted stream ``stream_id`` back where it is now, once removed."""
        stream, kept = self.streams[stream_id][0], self.admission.admitted[stream_id][0]
        plan = self.redundant.get(stream_id)
        if plan is None:
            return lambda: self.place(stream, kept)
        second = plan.second_path

        def again() -> None:
            self.admit_redundant(stream, kept.path, second, (kept.slot, kept.phase))

        return again

    def place(self, stream: Stream, assignment: Assignment) -> None:
        """Record a stream placed before (after a restart); raises when it collides."""
        multiple = self.multiple(stream)
        self.admission.place(assignment, multiple)
        self.streams[stream.id] = (stream, multiple)

    def remove(self, stream_id: str) -> None:
        plan = self.redundant.pop(stream_id, None)
        for piece in [] if plan is None else plan.extra:
            self.admission.remove(piece.stream)
        if plan is not None:
            self.admission.requests.pop(stream_id, None)  # so that no repair ever takes its first tree alone
        self.admission.remove(stream_id)
        del self.streams[stream_id]

    def move(self, stream_id: str, path: tuple[str, ...]) -> Assignment:
        """Put an admitted stream on ``path`` (any free slot there); on refusal it stays where it was."""
        if stream_id in self.redundant:
            raise ModelError("path", f"stream {stream_id} is redundant: its two trees move together or not at all")
        stream, multiple = self.streams[stream_id]
        old = self.admission.admitted[stream_id][0]
        self.remove(stream_id)
        try:
            return self.admit(stream, [path])
        except ModelError:
            self.place(stream, old)
            raise

    def reoptimise(self, solve: SolveOptions | None = None) -> tuple[list[Assignment], Callable[[], None]]:
        """Re-solve every admitted stream's slot and path with S/PR
        (:mod:`srfabric.tsn.schedulers.slot.reoptimise`): all stay,
        on as few links as they can; returns the streams that moved (their new assignments) and how to put
        them back. A stream keeps to the paths it was admitted with (the one asked for, or its k shortest);
        one placed from the database keeps its path and may change its slot only."""
        from srfabric.tsn.schedulers.slot.reoptimise import (  # NumPy and the solver: not at every start
            reoptimise,
            with_path,
        )

        names = sorted(self.streams)
        if not names:
            return [], lambda: None
        if self.redundant:
            raise Refused("reoptimise", f"redundant time-triggered streams ({', '.join(sorted(self.redundant))}) "
                                        "keep their slots on both trees; re-solving them is not built yet")
        streams = [self.streams[name][0] for name in names]
        multiples = tuple(self.streams[name][1] for name in names)
        problem = Problem(self.network, tuple(streams), self.admission.slots, self.slot_ns,
                          self.config.base_period_ns, multiples, self.config.max_links)
        current = [self.admission.admitted[name][0] for name in names]
        candidates = []
        for stream, now in zip(streams, current, strict=True):
            request = self.admission.requests.get(stream.id)
            if request is None:  # placed from the database: whether its path was asked for is not kept
                candidates.append([now.path])
                continue
            candidates.append(with_path(self._candidates(stream, None if request[2] is None else list(request[2])),
                                        now.path))
        better = reoptimise(problem, candidates, current, solve)
        changed = [(new, old) for new, old in zip(better, current, strict=True) if new != old]
        self.admission.replace([(new, self.streams[new.stream][1]) for new, _ in changed])
        return [new for new, _ in changed], lambda: self.admission.replace(
            [(old, self.streams[old.stream][1]) for _, old in changed])

    def assignments(self) -> list[Assignment]:
        return [self.admission.admitted[name][0] for name in sorted(self.streams)]

    def schedule(self) -> Schedule:
        """The admitted streams as a :class:`Schedule` (for the verifier and the gate control lists)."""
        names = sorted(self.streams)
        problem = Problem(self.network, tuple(self.streams[n][0] for n in names), self.slots, self.slot_ns,
                          self.config.base_period_ns, tuple(self.streams[n][1] for n in names),
                          self.config.max_links)
        return Schedule("incremental", problem, self.assignments(), status="heuristic")

    def offset_ns(self, stream_id: str) -> int:
        """When the talker sends, from the start of the hyperperiod."""
        assignment = self.admission.admitted[stream_id][0]
        return assignment.phase * self.config.base_period_ns + assignment.slot * self.slot_ns

    def gcls(self, base_time_ns: int) -> list[PortGcl]:
        """Every switch egress port's gate control list; the cycle is the full hyperperiod. A port whose list
        did not change since the last call gets the very object again (``PortLists.finished``): not to be
        changed."""
        if not self.streams:
            return []
        admitted = self.admission.admitted
        held: dict[Hashable, tuple[Assignment, int]] = {
            name: (admitted[name][0], multiple) for name, (_, multiple) in self.streams.items()}
        if self.redundant:
            held.update({(name, index): (piece, self.streams[name][1])
                         for name, plan in self.redundant.items() for index, piece in enumerate(plan.extra)})
        self.port_lists.update(held)  # build_gcls's lists, made again only where windows changed
        hyper, duty = self.config.cycle_ns, None
        if self.duty_percent is not None:
            period, window = self.config.base_period_ns, self.window_ns(self.duty_percent)
            guard = self.config.slot_model.frame_ns(self.config.guard_bytes, self.config.rate_bps)
            duty = (tuple((start, start + window) for start in range(0, hyper, period)), min(guard, period - window))
        return self.port_lists.finished(hyper, base_time_ns, duty)
