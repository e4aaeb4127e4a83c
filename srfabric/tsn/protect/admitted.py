"""The protections of every stream a live planner holds: each admitted stream's filter, gate and meter at its
talker's edge, on the planner's grid and the port gates' base time.

Examples
--------
>>> from srfabric.model.topo import tsn_fig1
>>> from srfabric.tsn.model.network import Stream
>>> from srfabric.tsn.runtime.live import LivePlanner, network_from_fabric
>>> planner = LivePlanner(network_from_fabric(tsn_fig1().to_fabric()))
>>> _ = planner.admit(Stream("cam", "h1", "h3", period_ns=1_000_000, size_bytes=200))
>>> [plan] = admitted_protections(planner, 0, {"cam": Identity("10.0.0.1", "10.0.0.3")}, {"cam": 1})
>>> plan.bridge, plan.gate.cycle_ns, len(plan.gate.open_windows())  # open once in each of the four periods
('s1', 4000000, 4)
"""

from __future__ import annotations

from collections.abc import Mapping

from srfabric.errors import ModelError
from srfabric.tsn.protect.psfp import DEFAULT_BURST_FRAMES, Identity, StreamProtection, Timing, protection
from srfabric.tsn.runtime.live import LivePlanner


def admitted_protections(planner: LivePlanner, base_time_ns: int, identities: Mapping[str, Identity],
                         handles: Mapping[str, int], tolerance_ns: int = 0,
                         burst_frames: int = DEFAULT_BURST_FRAMES) -> list[StreamProtection]:
    """One protection per stream ``identities`` names, each admitted by ``planner``; a redundant stream's talker
    sends once, in its first tree's slot (its edge replicates). ``ModelError`` naming a stream the planner does not
    hold or that has no handle."""
    config = planner.config
    timing = Timing(planner.slot_ns, config.base_period_ns, config.hyper_cycles, base_time_ns, tolerance_ns,
                    burst_frames)
    plans = []
    for name in sorted(identities):
        if name not in planner.streams or name not in handles:
            raise ModelError(f"stream {name}", "is not admitted into a slot, or has no handle to protect it by")
        stream = planner.streams[name][0]
        first = planner.admission.admitted[name][0]
        plans.append(protection(handles[name], stream, first, timing, identities[name]))
    return plans
