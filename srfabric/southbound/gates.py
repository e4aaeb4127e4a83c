"""The gates adapter: how gate control lists reach the ports that run them (``Gates``), and the common future base
time every port of one change switches at. ``TaprioGates`` (:mod:`srfabric.southbound.taprio`) runs Linux taprio
on this machine's interfaces; ``RecordingGates`` only remembers them, for fabrics without gates.

An adapter checks a whole change before it sends any of it (``check``: a port it cannot gate is named, nothing
changes) and then applies every list with the base time each carries (``apply``). The controller's shell calls it
(:mod:`srfabric.controller.stream_install`); the decisions that make the lists are the core's.

Examples
--------
>>> next_base_time(now_ns=1_234_567, cycle_ns=1_000_000, lead_ns=500_000)
2000000
>>> from srfabric.tsn.gates.gcl import GateEntry
>>> gates = RecordingGates()
>>> gates.apply([PortGcl("s1", "s2", "s1-eth3", 1000, 0, [GateEntry(3, 1000)])])
>>> sorted(gates.ports)
['s1-eth3']
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from srfabric.tsn.gates.gcl import PortGcl


def tai_now_ns() -> int:
    """The TAI clock, as taprio's base times count it."""
    return time.clock_gettime_ns(time.CLOCK_TAI)


def next_base_time(now_ns: int, cycle_ns: int, lead_ns: int) -> int:
    """The first cycle boundary (counted from 0) at least ``lead_ns`` after ``now_ns``."""
    return -(-(now_ns + lead_ns) // cycle_ns) * cycle_ns


class Gates(Protocol):
    """Where gate control lists go: ``check`` refuses (``ModelError`` naming the port) what cannot run, changing
    nothing; ``apply`` installs every list at the base time it carries and frees ports no list names."""

    def check(self, gcls: Sequence[PortGcl]) -> None: ...

    def apply(self, gcls: Sequence[PortGcl]) -> None: ...


@runtime_checkable
class VerifiedGates(Gates, Protocol):
    """Gates that can say what they run: ``switched`` reads it back after the base time and names each port
    that does not run its list (bridges over NETCONF: their oper state)."""

    def switched(self, gcls: Sequence[PortGcl]) -> list[str]: ...


class RecordingGates:
    """Gates that are only remembered: for a fabric without taprio (the schedule is still computed)."""

    def __init__(self) -> None:
        self.ports: dict[str, PortGcl] = {}

    def check(self, gcls: Sequence[PortGcl]) -> None:
        return None

    def apply(self, gcls: Sequence[PortGcl]) -> None:
        self.ports = {gcl.interface: gcl for gcl in gcls}
