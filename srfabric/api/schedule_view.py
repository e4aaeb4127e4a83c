"""The scheduled streams as the schedule view shows them: path, slot, offset, latency bound, and a redundant
stream's second tree."""

from __future__ import annotations

from typing import Any

from srfabric.tsn.live import LivePlanner


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
