"""The OpenFlow meters a switch's entries use (``Meter``, an entry's first action): the meters a sync sets before
those entries and deletes once nothing uses them. Pure: no I/O.

Examples
--------
>>> from srfabric.rules.entries import FlowEntry, Meter, Output, match
>>> metered = FlowEntry(1, 300, match(in_port=1), (Meter(12, 1000, 2), Output(2)))
>>> plain = FlowEntry(1, 100, match(in_port=2), (Output(1),))
>>> meters_of([metered, plain])
{12: Meter(meter_id=12, rate_pps=1000, burst=2)}
>>> meter_changes({12, 40}, [metered], [metered, plain])  # 12 is held: changed; 40 is used by none: deleted
MeterChanges(setting=[Meter(meter_id=12, rate_pps=1000, burst=2)], modify={12}, deleted=[40], wanted={12})
"""

from __future__ import annotations

from collections.abc import Iterable, Set
from dataclasses import dataclass

from srfabric.rules.entries import FlowEntry, Meter


def meter_of(entry: FlowEntry) -> Meter | None:
    """The meter ``entry`` sends its frames through, if any."""
    first = entry.actions[0] if entry.actions else None
    return first if isinstance(first, Meter) else None


def meters_of(entries: Iterable[FlowEntry]) -> dict[int, Meter]:
    """Every meter the entries use, by id."""
    return {meter.meter_id: meter for entry in entries if (meter := meter_of(entry)) is not None}


@dataclass(frozen=True)
class MeterChanges:
    """What a sync does to a switch's meters: ``setting`` before the entries (``modify``: those it holds already),
    ``deleted`` after them; ``wanted``: the ids it holds once done."""

    setting: list[Meter]
    modify: set[int]
    deleted: list[int]
    wanted: set[int]


def meter_changes(held: Set[int], added: Iterable[FlowEntry], desired: Iterable[FlowEntry]) -> MeterChanges:
    """The meters of the ``added`` entries (each set again: an entry added again may carry new settings) and the
    held ones no ``desired`` entry uses. ``desired`` is read only when something is held or set."""
    setting = list(meters_of(added).values())
    if not held and not setting:
        return MeterChanges([], set(), [], set())
    wanted = set(meters_of(desired))
    return MeterChanges(setting, {m.meter_id for m in setting} & held, sorted(held - wanted), wanted)
