"""The soak's faults, drawn from its seed, and the judgement of its frames: pure, so a seed's timeline can be
printed and checked without a fabric.

Faults come at random times (exponential gaps) and each lasts a while, so they overlap: a link can be down while
the leader is killed. Every fault is undone when its time is up (a link comes back up, a killed instance is
started again as systemd would, a stopped one is continued).

Examples
--------
>>> faults = plan(7, 60.0, Targets(links=("s1-s2",), functions=("v1",), bridges=("s2",)))
>>> faults == plan(7, 60.0, Targets(links=("s1-s2",), functions=("v1",), bridges=("s2",)))  # the seed decides
True
>>> all(0 <= f.at_s < 60.0 for f in faults) and {f.kind for f in faults} <= set(KINDS)
True
>>> unexplained([Gap(5000, 1, 9, 10.2, 10.4)], [Window(10.0, 11.0, ("s1-s2",))])
[]
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

# What a fault does, and whether it can cut a chain's path (frames may be lost only then).
KINDS = {
    "link": True,  # a fabric link down, then up
    "bridge": True,  # a switch's bridge deleted, then made again with its ports
    "function": True,  # a function's port down in its namespace, then up
    "leader_kill": False,  # the leading instance SIGKILLed, started again as a follower
    "api_stop": False,  # an instance SIGSTOPped, then continued (a leader stopped too long steps down)
    "postgres_restart": False,  # the database restarted (a leader that loses it steps down)
    "hostile": False,  # peers that connect to the OpenFlow port and misbehave
}
MEAN_GAP_S = 6.0  # between the starts of two faults
HOLD_S = (1.0, 5.0)  # how long a fault lasts, drawn uniformly


@dataclass(frozen=True)
class Targets:
    """What faults can hit: fabric links ("a-b"), functions, bridges."""

    links: tuple[str, ...]
    functions: tuple[str, ...]
    bridges: tuple[str, ...]
    kinds: tuple[str, ...] = tuple(KINDS)


@dataclass(frozen=True)
class Fault:
    at_s: float  # from the start of the load
    kind: str
    target: str  # a link, a function, a bridge, or "" (the leader, the database, the peers)
    hold_s: float

    @property
    def cuts(self) -> bool:
        return KINDS[self.kind]

    def as_dict(self) -> dict[str, object]:
        return {"at_s": round(self.at_s, 3), "kind": self.kind, "target": self.target, "hold_s": round(self.hold_s, 3)}


def plan(seed: int, seconds: float, targets: Targets, first_s: float = 3.0) -> list[Fault]:
    """The faults of a run of ``seconds``: the same seed, the same faults."""
    rng = random.Random(seed)
    faults: list[Fault] = []
    at = first_s
    while True:
        at += rng.expovariate(1.0 / MEAN_GAP_S)
        if at >= seconds:
            return faults
        kind = rng.choice(targets.kinds)
        pool = {"link": targets.links, "function": targets.functions, "bridge": targets.bridges}.get(kind, ("",))
        faults.append(Fault(at, kind, rng.choice(pool), rng.uniform(*HOLD_S)))


@dataclass(frozen=True)
class Gap:
    """Frames a receiver lacks on one chain: numbers ``first`` to ``last``, between the frames sent at
    ``after_s`` and ``before_s`` (the sender's clock, seconds from the load's start)."""

    port: int
    first: int
    last: int
    after_s: float
    before_s: float

    @property
    def frames(self) -> int:
        return self.last - self.first + 1


@dataclass(frozen=True)
class Window:
    """When a fault that can cut paths may lose frames: from its start to its repair's measured end."""

    start_s: float
    end_s: float
    what: tuple[str, ...] = field(default=())


def unexplained(gaps: list[Gap], windows: list[Window], slack_s: float = 0.25,
                affects: Callable[[Gap, Window], bool] = lambda gap, window: True) -> list[Gap]:
    """The gaps that the windows of the faults that ``affects`` their chain, joined where they overlap, do not
    cover (``slack_s`` either side for the frames in flight).

    >>> unexplained([Gap(1, 0, 9, 1.0, 5.0)], [Window(1.0, 3.0), Window(2.5, 5.0)])  # two overlapping faults
    []
    """
    out = []
    for gap in gaps:
        spans = sorted((w.start_s - slack_s, w.end_s + slack_s) for w in windows if affects(gap, w))
        joined: list[list[float]] = []
        for start, end in spans:
            if joined and start <= joined[-1][1]:
                joined[-1][1] = max(joined[-1][1], end)
            else:
                joined.append([start, end])
        if not any(start <= gap.after_s and gap.before_s <= end for start, end in joined):
            out.append(gap)
    return out


def percentile(values: list[float], fraction: float) -> float | None:
    """The nearest-rank percentile (None when there is nothing).

    >>> percentile([0.1, 0.2, 0.3, 0.4], 0.99)
    0.4
    """
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(round(fraction * len(ordered) + 0.5)) - 1))]
