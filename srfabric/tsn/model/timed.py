"""The fine-grained (no-wait) model beside the slot model: every frame has its own transmission time on
every link of its path, as tsnkit's algorithms and its TAS simulator model it.

A stream's frame is released at ``offset_ns`` into each of its periods and
crosses its path without waiting: it starts on hop k at ``starts[k]`` (relative
to its period), takes ``size * 8 / rate`` on the wire (store-and-forward: again
on every hop), then the link's processing and propagation before the next hop
may start. Every start is on the grid (tsnkit steps in 100 ns), so a window on a
link is the frame's time rounded up to the grid. Two windows of one directed
link never overlap over the hyperperiod (the least common multiple of the
periods); a frame's journey lies within its own period; its latency, from
release to the end of the last hop's processing, meets its deadline.

Examples
--------
>>> from srfabric.tsn.model.network import Network, Stream
>>> net = Network.build([("a", "host"), ("s", "switch"), ("b", "host")], [("a", "s"), ("s", "b")])
>>> problem = TimedProblem.build(net, [Stream("f", "a", "b", period_ns=100_000, size_bytes=100)], grid_ns=100,
...                              overhead_bytes=0)
>>> problem.hop_starts(problem.streams[0], ("a", "s", "b"))  # 800 ns on the wire + 1050 ns at the hop, rounded
(0, 1900)
>>> problem.latency_ns(problem.streams[0], ("a", "s", "b"))
3750
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from srfabric.errors import ModelError
from srfabric.tsn.model.network import Link, Network, Stream, check_streams
from srfabric.tsn.model.slots import DEFAULT_DIAMETER, WIRE_OVERHEAD_BYTES

MAX_FRAMES_PER_HYPERPERIOD = 4096  # frames of the fastest stream in one hyperperiod: the GCLs grow with it


def ceil_to(value: int, grid: int) -> int:
    return -(-value // grid) * grid


def _wire_ns(wire_bytes: int, link: Link) -> int:
    return math.ceil(wire_bytes * 8 * 1_000_000_000 / link.rate_bps)


@dataclass(frozen=True)
class TimedProblem:
    """Streams on a network with the timing every frame takes on every link."""

    network: Network
    streams: tuple[Stream, ...]
    grid_ns: int = 1
    overhead_bytes: int = WIRE_OVERHEAD_BYTES
    max_hops: int = DEFAULT_DIAMETER
    hyperperiod_ns: int = 0
    _timings: dict[tuple[int, tuple[str, ...]], tuple[tuple[int, ...], int, tuple[int, ...]]] = field(
        default_factory=dict, compare=False, repr=False)
    _hops: dict[tuple[str, ...], tuple[int, ...]] = field(default_factory=dict, compare=False, repr=False)
    # filled by timed_heuristic.listed_paths: the paths, packed for the C loop, each path's hop starts
    _candidates: dict[tuple[str, str, int, int, int], tuple[list[tuple[str, ...]], bytes, list[tuple[int, ...]]]] = (
        field(default_factory=dict, compare=False, repr=False))
    _listed: dict[int, Any] = field(default_factory=dict, compare=False, repr=False)  # by k: listed_problem's

    @classmethod
    def build(cls, network: Network, streams: Sequence[Stream], grid_ns: int = 1,
              overhead_bytes: int = WIRE_OVERHEAD_BYTES, max_hops: int = DEFAULT_DIAMETER) -> TimedProblem:
        """Check the input and work out the hyperperiod; errors name the field and the limit."""
        network.validate()
        check_streams(network, streams)
        if not streams:
            raise ModelError("flows", "there are no flows to schedule")
        if grid_ns < 1:
            raise ModelError("grid_ns", f"must be >= 1, got {grid_ns}")
        if overhead_bytes < 0:
            raise ModelError("overhead_bytes", f"must be >= 0, got {overhead_bytes}")
        for index, stream in enumerate(streams):
            if stream.period_ns % grid_ns:
                raise ModelError(f"flows[{index}].period_ns",
                                 f"{stream.period_ns} is not a multiple of the {grid_ns} ns grid")
        hyperperiod = math.lcm(*(stream.period_ns for stream in streams))
        fastest = min(stream.period_ns for stream in streams)
        if hyperperiod // fastest > MAX_FRAMES_PER_HYPERPERIOD:
            raise ModelError("flows", f"the periods make a hyperperiod of {hyperperiod} ns, {hyperperiod // fastest} "
                                      f"periods of the fastest stream (at most {MAX_FRAMES_PER_HYPERPERIOD})")
        return cls(network, tuple(streams), grid_ns, overhead_bytes, max_hops, hyperperiod)

    def wire_ns(self, stream: Stream, u: str, v: str) -> int:
        """The frame's time on the wire of link u→v."""
        return _wire_ns(stream.size_bytes + self.overhead_bytes, self.network.link_of(self.network.edge_index[u, v]))

    def window_ns(self, stream: Stream, u: str, v: str) -> int:
        """How long the frame holds link u→v: its wire time on the grid."""
        return ceil_to(self.wire_ns(stream, u, v), self.grid_ns)

    def hop_ns(self, u: str, v: str) -> int:
        link = self.network.link_of(self.network.edge_index[u, v])
        return link.t_proc_ns + link.t_prop_ns

    def hop_starts(self, stream: Stream, path: Sequence[str]) -> tuple[int, ...]:
        """When the frame starts on each hop, relative to its release (no waiting, every start on the grid)."""
        return self.timing(stream.size_bytes, tuple(path))[0]

    def latency_ns(self, stream: Stream, path: Sequence[str]) -> int:
        """From release to the end of the last hop's processing (tsnkit's end-to-end delay)."""
        return self.timing(stream.size_bytes, tuple(path))[1]

    def timing(self, size_bytes: int, path: tuple[str, ...]) -> tuple[tuple[int, ...], int, tuple[int, ...]]:
        """(hop starts, latency, window on each hop) of a frame of ``size_bytes`` on ``path``, worked out once
        per size and path."""
        key = (size_bytes, path)
        found = self._timings.get(key)
        if found is None:
            starts, windows, at, latency = [], [], 0, 0
            for u, v in zip(path, path[1:], strict=False):
                link = self.network.link_of(self.network.edge_index[u, v])
                wire = _wire_ns(size_bytes + self.overhead_bytes, link)
                starts.append(at)
                windows.append(ceil_to(wire, self.grid_ns))
                latency = at + wire + link.t_proc_ns + link.t_prop_ns
                at = ceil_to(latency, self.grid_ns)
            found = self._timings[key] = (tuple(starts), latency, tuple(windows))
        return found

    def hops(self, path: tuple[str, ...]) -> tuple[int, ...]:
        """The directed link indices of ``path``, worked out once per path."""
        found = self._hops.get(path)
        if found is None:
            index = self.network.edge_index
            found = self._hops[path] = tuple(index[hop] for hop in zip(path, path[1:], strict=False))
        return found


class TimedAssignment(NamedTuple):
    """Where one stream goes: its path, its release offset in its period, its start on every hop (absolute
    within the period, so ``starts[0] == offset_ns``). A named tuple: a schedule makes one per stream, and a
    frozen dataclass costs several times as much to make."""

    stream: str
    path: tuple[str, ...]
    offset_ns: int
    starts: tuple[int, ...]


@dataclass
class TimedSchedule:
    """The assignments a method found, the streams it left out with their reasons, and what it cost."""

    method: str
    problem: TimedProblem
    assignments: list[TimedAssignment] = field(default_factory=list)
    reasons: dict[str, str] = field(default_factory=dict)
    solve_s: float = 0.0
    status: str = "heuristic"

    @property
    def scheduled_ids(self) -> set[str]:
        return {a.stream for a in self.assignments}

    def windows(self) -> dict[tuple[str, str], list[tuple[int, int, str]]]:
        """Every directed link's windows (start, end, stream) over one hyperperiod, sorted."""
        streams = {s.id: s for s in self.problem.streams}
        out: dict[tuple[str, str], list[tuple[int, int, str]]] = {}
        for assignment in self.assignments:
            stream = streams[assignment.stream]
            for (u, v), start in zip(zip(assignment.path, assignment.path[1:], strict=False), assignment.starts,
                                     strict=True):
                length = self.problem.window_ns(stream, u, v)
                for frame in range(self.problem.hyperperiod_ns // stream.period_ns):
                    at = start + frame * stream.period_ns
                    out.setdefault((u, v), []).append((at, at + length, stream.id))
        for spans in out.values():
            spans.sort()
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "method": self.method, "status": self.status, "solve_s": round(self.solve_s, 6),
            "hyperperiod_ns": self.problem.hyperperiod_ns, "grid_ns": self.problem.grid_ns,
            "streams": [{"id": a.stream, "path": list(a.path), "offset_ns": a.offset_ns, "starts_ns": list(a.starts)}
                        for a in self.assignments],
            "unscheduled": [{"id": name, "reason": reason} for name, reason in sorted(self.reasons.items())],
        }
