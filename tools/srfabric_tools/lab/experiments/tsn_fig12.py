"""Coupling Source Routing with TSN, Fig. 12: a priority-7 probe while ten interfering priority-7 flows join its
path and are then re-routed away, on the live fabric.

Fig. 7's fabric under ``srfabric serve --gates taprio``, every gated port open to
priority 7 for 70 % of each 1 ms period. A run has three equal phases: the
probe t1 → l1 alone on the primary path; ten priority-7 streams t2 → l2 requested
through the API on the primary path too, sending (in-class interference); the
ten re-routed to the secondary path, one API call each (only s1, their ingress
edge, changes). The paper's phases were 30, 30 and 120 s; ours are equal.
Rates are scaled down as an emulated CPU forwards them: the probe sends 1,000
frames/s (a tenth of the paper's), each interfering flow 1,000 frames/s (a fifth),
1,400 bytes each, every frame at a random point of its period; a D-ITG probe
runs beside ours as a second stream (as in Fig. 11). A veth has no
line rate, and one emulated CPU forwards every bridge's frames whichever path
they take, so the priority-7 class of every gated port drains at an emulated
250 Mbit/s (a token bucket under taprio): the ten flows (115 Mbit/s) load the
primary path's priority-7 windows (175 Mbit/s at 70 %) to about 0.7, and a
frame queued ahead of the probe costs its serialisation (46 µs).
Run it in the kernel lab: ``srfabric kernel-lab run --ovs -- srfabric lab tsn-fig12``.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from srfabric.southbound.gates import tai_now_ns
from srfabric_tools.lab.core import Context, Experiment, Settings
from srfabric_tools.lab.experiments import tsn_ditg
from srfabric_tools.lab.experiments.tsn_fig9 import taprio_kernel
from srfabric_tools.lab.experiments.tsn_fig11 import DITG_PORT, PROBE_PORT, PROBE_PPS
from srfabric_tools.lab.experiments.tsn_live import (
    PRIMARY,
    SECONDARY,
    Fig7Fabric,
    confirm_times,
    finish,
    phase_lines,
    phase_medians,
    plot_timeline,
    record_phases,
    sleep_until,
)

Row = dict[str, Any]
FLOW_PORTS, FLOW_PPS = list(range(6001, 6011)), 1000
DUTY = 70
LINE_MBIT = 250
PHASES = ("probe alone", "ten priority-7 flows on its path", "the ten re-routed")


def count(settings: Settings) -> int:
    return 1


def run(ctx: Context) -> None:
    taprio_kernel("tsn-fig12")
    third = ctx.settings.seconds
    with Fig7Fabric(pairs=2, line_mbit=LINE_MBIT) as fabric:
        fabric.stream("t1", "l1", PROBE_PORT, path=PRIMARY, name="probe")
        fabric.stream("t1", "l1", DITG_PORT, path=PRIMARY, name="probe-ditg")
        fabric.reschedule(DUTY)
        rep = 0

        def sample() -> dict[str, float]:
            nonlocal rep
            rep += 1
            csv_path = fabric.folder / f"probe-{rep}.csv"
            listener = fabric.listen("l1", [PROBE_PORT], int(3 * third * PROBE_PPS), csv_path, timeout_s=3)
            sink = fabric.listen("l2", FLOW_PORTS, int(2 * third * FLOW_PPS), fabric.folder / "flows.csv", 3)
            time.sleep(1.0)  # the re-schedule's gates run from its base time on
            ditg = tsn_ditg.DitgFlow(fabric, "t1", "l1", DITG_PORT, PROBE_PPS, 3 * third + 0.5).start()
            offset = tsn_ditg.tai_offset_ns()
            start_ns, begin = tai_now_ns(), time.monotonic()
            probe = fabric.talk("t1", fabric.ip("l1"), [PROBE_PORT], PROBE_PPS, 3 * third, seed=rep)
            sleep_until(begin + third)
            joined_ns = tai_now_ns()
            flows = [fabric.stream("t2", "l2", port, path=PRIMARY, name=f"flow-{port}") for port in FLOW_PORTS]
            sending_ns = tai_now_ns()
            load = fabric.talk("t2", fabric.ip("l2"), FLOW_PORTS, FLOW_PPS, begin + 3 * third - time.monotonic(),
                               seed=100 + rep)
            sleep_until(begin + 2 * third)
            moving_ns = tai_now_ns()
            for flow in flows:
                fabric.reroute(flow["id"], SECONDARY, flow["name"])
            moved_ns = tai_now_ns()
            for process in (probe, load, listener, sink):
                finish(process, timeout_s=6 * third + 60)
            packets = ditg.packets(timeout_s=6 * third + 60)
            for flow in flows:
                fabric.client.delete("streams", flow["id"])
            skip = int(0.1 * third * 1e9)  # the first frames take Open vSwitch's slow path
            bounds = [(start_ns + skip, joined_ns), (sending_ns + skip, moving_ns), (moved_ns, 2**63)]
            return (record_phases(ctx, csv_path, start_ns, third, bounds, (sending_ns, moved_ns))
                    | tsn_ditg.record_phases(ctx, packets, bounds, start_ns, third, offset))

        ctx.repeat({"duty_percent": DUTY, "flows": len(FLOW_PORTS), "line_mbit": LINE_MBIT}, sample)
        ctx.extra["api_calls"] = fabric.calls
        ctx.extra["confirm"] = confirm_times(fabric.calls)


def plot(rows: list[Row], extra: dict[str, Any], path: Path) -> None:
    plot_timeline(extra, path, ("ten flows join", "the ten re-routed"),
                  f"Fig. 12: in-class interference and its re-route (duty {DUTY} %)",
                  "paper: latency rises when ten priority-7 flows join, falls (not to the start) when they are "
                  "re-routed")


def compare(rows: list[Row], extra: dict[str, Any]) -> list[str]:
    means = phase_medians(rows, "mean_us")
    out = phase_lines(rows, extra, PHASES)
    out.append(f"interference raises the probe's mean: {'yes' if means[1] > means[0] else 'no'} "
               f"({means[1] - means[0]:+.0f} µs); re-routing it lowers it again: "
               f"{'yes' if means[2] < means[1] else 'no'} ({means[2] - means[1]:+.0f} µs)")
    return out


EXPERIMENT = Experiment(
    name="tsn-fig12",
    title="Coupling Source Routing with TSN, Fig. 12: interfering priority-7 flows re-routed, probe latency",
    paper="the probe's mean latency rises when ten priority-7 flows join its path and falls when the controller "
          "re-routes them, staying above where it started",
    count=count,
    measure=run,
    plot=plot,
    compare=compare,
)
