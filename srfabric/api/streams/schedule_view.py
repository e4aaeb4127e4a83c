"""The schedule as the API shows it: the slot grid, the scheduled streams (path, slot, offset, latency bound, and a
redundant stream's second tree), every gated port's gates (taprio and YANG), and what the last change sent."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from srfabric.southbound.gates import Gates
from srfabric.tsn.gates.capabilities import PortCapabilities
from srfabric.tsn.gates.gcl import PortGcl
from srfabric.tsn.gates.render import to_taprio, to_yang
from srfabric.tsn.runtime.live import CycleConfig, LivePlanner


@dataclass
class LastChange:
    """What the last stream change sent: flow-mods per switch name, the gated ports, the change's base time and
    the ports whose lists changed at it (the others run on, as they were)."""

    entries: dict[str, int] = field(default_factory=dict)
    gated: list[str] = field(default_factory=list)
    base_time_ns: int | None = None
    moved: list[str] = field(default_factory=list)  # admitted streams moved to make room (new slot or path)
    regated: list[str] = field(default_factory=list)


def schedule_view(planner: LivePlanner, cycle: CycleConfig, gcls: list[PortGcl], last: LastChange
                  ) -> dict[str, Any]:
    """The schedule, as ``GET /v2.0/srfabric/schedule`` answers it."""
    return {
        "base_period_ns": cycle.base_period_ns, "cycle_ns": cycle.cycle_ns, "duty_percent": planner.duty_percent,
        "slot_ns": planner.slot_ns, "slots": planner.slots, "streams": scheduled_streams(planner),
        "gates": [{"port": g.interface, "switch": g.node, "base_time_ns": g.base_time_ns,
                   "entries": [[e.mask, e.duration_ns] for e in g.entries], "tt_mask": 1 << g.tt_class,
                   "taprio": to_taprio(g)} for g in gcls],
        "yang": to_yang(gcls),
        "last_change": {"entries_sent": last.entries, "gated_ports": last.gated, "base_time_ns": last.base_time_ns,
                        "moved_streams": last.moved, "regated_ports": last.regated},
    }


def scheduled_streams(planner: LivePlanner) -> list[dict[str, Any]]:
    """Every stream holding a slot, by id: its tree (or both), slot, phase, period, offset and latency bound."""
    streams = []
    for ident, (stream, _multiple) in sorted(planner.streams.items()):
        placed = planner.admission.admitted[ident][0]
        view: dict[str, Any] = {"id": ident, "path": list(placed.path), "slot": placed.slot, "phase": placed.phase,
                                "period_ns": stream.period_ns, "offset_ns": planner.offset_ns(ident),
                                "latency_bound_ns": planner.latency_ns(stream, placed.path)}
        redundant = planner.redundant.get(ident)
        if redundant is not None:
            view["second_path"] = list(redundant.second_path)
            view["latency_bound_ns"] = planner.redundant_latency_ns(stream, placed.path, redundant.second_path)
        streams.append(view)
    return streams


def bridges_view(capabilities: dict[str, PortCapabilities], gates: Gates) -> dict[str, Any]:
    """By bridge: its capabilities (the 802.1Qcw leaves, tick granularity included) and, over NETCONF, its
    address and user, and whether it waits for a schedule it lost."""
    from srfabric.southbound.netconf.gates import NetconfGates

    sessions = gates.sessions if isinstance(gates, NetconfGates) else {}
    stale = gates.stale if isinstance(gates, NetconfGates) else set()
    return {name: {"capabilities": capabilities[name].to_yang(state=True) if name in capabilities else None,
                   "management": sessions[name].access.public() if name in sessions else None,
                   "lost_schedule": name in stale}
            for name in sorted(set(capabilities) | set(sessions))}
