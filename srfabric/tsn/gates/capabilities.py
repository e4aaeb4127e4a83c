"""What a bridge port's scheduler can run (IEEE 802.1Qcw ``gate-parameter-table``'s capability leaves), and the
check of a gate control list against them, before anything is sent: ``supported-list-max`` (entries),
``supported-cycle-max`` (a rational number of seconds), ``supported-interval-max`` (ns, one entry's interval) and
``tick-granularity`` (tenths of a nanosecond: every interval a whole number of ticks).

Examples
--------
>>> from srfabric.tsn.gates.gcl import GateEntry, PortGcl
>>> caps = PortCapabilities(list_max=2, cycle_max=(1, 1000), interval_max_ns=600_000, tick_tenths_ns=10)
>>> gcl = PortGcl("s2", "s5", "s2-eth2", 1_000_000, 0, [GateEntry(2, 27_036), GateEntry(1, 972_964)])
>>> over(gcl, caps)
'supported-interval-max: an interval of 972964 ns, over the 600000 ns the port supports'
>>> over(gcl, PortCapabilities(list_max=8, cycle_max=(1, 1000), interval_max_ns=1_000_000, tick_tenths_ns=10))
>>> caps.to_yang()["supported-cycle-max"]
{'numerator': 1, 'denominator': 1000}
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from srfabric.errors import ModelError
from srfabric.tsn.gates.gcl import U32, PortGcl


@dataclass(frozen=True)
class PortCapabilities:
    """One port's limits, as the bridge reports them."""

    list_max: int
    cycle_max: tuple[int, int]  # seconds, as numerator and denominator
    interval_max_ns: int
    tick_tenths_ns: int = 10  # 1 ns

    def __post_init__(self) -> None:
        for name, value in (("supported-list-max", self.list_max), ("supported-interval-max", self.interval_max_ns),
                            ("supported-cycle-max.numerator", self.cycle_max[0]),
                            ("supported-cycle-max.denominator", self.cycle_max[1]),
                            ("tick-granularity", self.tick_tenths_ns)):
            if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= U32:
                raise ModelError(name, f"must be an integer in 1..{U32}, got {value!r}")

    @property
    def cycle_max_ns(self) -> Fraction:
        return Fraction(self.cycle_max[0] * 1_000_000_000, self.cycle_max[1])

    def to_yang(self, state: bool = False) -> dict[str, Any]:
        """The capability leaves as they stand in ``gate-parameter-table`` (RFC 7951 JSON): the three the
        module makes configuration (a bridge may hold them read-only), and with ``state`` the tick granularity,
        which is state only."""
        leaves: dict[str, Any] = {
            "supported-list-max": self.list_max,
            "supported-cycle-max": {"numerator": self.cycle_max[0], "denominator": self.cycle_max[1]},
            "supported-interval-max": self.interval_max_ns}
        return leaves | ({"tick-granularity": self.tick_tenths_ns} if state else {})

    @classmethod
    def from_yang(cls, table: Any, where: str) -> PortCapabilities:
        """Read the leaves from a bridge's ``gate-parameter-table`` (RFC 7951 JSON); ``ModelError`` names the
        port (``where``) and the leaf missing or malformed."""
        if not isinstance(table, dict):
            raise ModelError(where, "gate-parameter-table is not an object")
        try:
            cycle = table["supported-cycle-max"]
            return cls(int(table["supported-list-max"]), (int(cycle["numerator"]), int(cycle["denominator"])),
                       int(table["supported-interval-max"]), int(table.get("tick-granularity", 10)))
        except (KeyError, TypeError, ValueError) as missing:
            raise ModelError(where, f"capability leaf {missing} is missing or not a number") from None


def over(gcl: PortGcl, caps: PortCapabilities) -> str | None:
    """Why ``gcl`` cannot run on a port with ``caps``, naming the leaf and the limit; None when it can."""
    return list_over([entry.duration_ns for entry in gcl.entries], gcl.cycle_ns, caps)


def list_over(durations: Sequence[int], cycle_ns: int, caps: PortCapabilities, holder: str = "the port",
              entries: str = "gate control entries") -> str | None:
    """Why a gate list of ``durations`` over ``cycle_ns`` cannot run where ``caps`` hold (a port's gates, or a
    bridge's stream gates: ``holder``), naming the leaf and the limit; None when it can."""
    if len(durations) > caps.list_max:
        return f"supported-list-max: {len(durations)} {entries}, over the {caps.list_max} {holder} supports"
    if cycle_ns > caps.cycle_max_ns:
        return f"supported-cycle-max: a {cycle_ns} ns cycle, over the {float(caps.cycle_max_ns):g} ns supported"
    longest = max(durations, default=0)
    if longest > caps.interval_max_ns:
        return (f"supported-interval-max: an interval of {longest} ns, over the {caps.interval_max_ns} ns {holder} "
                "supports")
    coarse = next((d for d in durations if (d * 10) % caps.tick_tenths_ns), None)
    if coarse is not None:
        return (f"tick-granularity: an interval of {coarse} ns is not a whole number of {holder}'s "
                f"{caps.tick_tenths_ns / 10:g} ns ticks")
    return None
