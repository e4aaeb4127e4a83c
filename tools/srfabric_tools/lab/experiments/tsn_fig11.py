"""Coupling Source Routing with TSN, Fig. 11: a priority-7 probe while the controller re-routes best effort
and re-schedules the gates, on the live fabric.

Fig. 7's fabric runs under ``srfabric serve --gates taprio``: the probe t1 → l1 is
a stream on the primary path (s1-s2-s4), ten best-effort flows t2 → l2 are one
best-effort flow class pinned to the primary path too, and every gated port
opens priority 7 for 50 % of each 1 ms period. A run has three equal phases:
both on the primary path; the best effort re-routed to the secondary path by
one API call (the talker's edge rewrites its header); the duty cycle raised to
90 % by another (new gates on every port at one base time). The paper made
both changes at once after 100 of 180 s; separate phases show each one's
share. Rates are a tenth of the paper's (probe 1,000 frames/s, best effort
10 × 500 frames/s, 1,400 bytes) as an emulated CPU forwards them; each frame
leaves at a random point of its period. D-ITG, the paper's probe, runs beside
ours as a second stream on the same path (1,000 frames/s, exponential gaps:
``tsn_ditg`` says why not constant ones). Run it in the kernel lab:
``srfabric kernel-lab run --ovs -- srfabric lab tsn-fig11``.
"""

from __future__ import annotations

import time
from functools import partial
from pathlib import Path
from typing import Any

from srfabric.southbound.gates import tai_now_ns
from srfabric_tools.lab.core import Context, Experiment, Settings
from srfabric_tools.lab.experiments import tsn_ditg
from srfabric_tools.lab.experiments.tsn_fig9 import taprio_kernel
from srfabric_tools.lab.experiments.tsn_live import (
    PRIMARY,
    SECONDARY,
    Fig7Fabric,
    confirm_times,
    finish,
    modelled_wait_us,
    phase_lines,
    phase_medians,
    plot_timeline,
    record_phases,
    sleep_until,
)

Row = dict[str, Any]
PROBE_PORT, PROBE_PPS = 7001, 1000
DITG_PORT = 7002  # the paper's probe came from D-ITG: a second probe beside ours, its own stream
LOAD_PORTS, LOAD_PPS = list(range(6001, 6011)), 500
PHASES = ("primary, 50 %", "best effort re-routed, 50 %", "re-routed, 90 %")
# How far ahead a change's base time lies: NETCONF to four bridges under the emulated CPU takes longer than tc.
LEAD_MS = {"taprio": 200.0, "taprio-gptp": 200.0, "netconf": 1500.0, "netconf-no-ptp": 1500.0}


def count(settings: Settings) -> int:
    return 1


def run(ctx: Context, gates: str = "taprio") -> None:
    taprio_kernel("tsn-fig11")
    third = ctx.settings.seconds
    with Fig7Fabric(pairs=2, gates=gates, lead_ms=LEAD_MS[gates]) as fabric:
        probe = fabric.stream("t1", "l1", PROBE_PORT, path=PRIMARY, name="probe")
        fabric.stream("t1", "l1", DITG_PORT, path=PRIMARY, name="probe-ditg")
        load = fabric.stream("t2", "l2", 0, priority=0, path=PRIMARY, name="best-effort")
        rep = 0

        def sample() -> dict[str, float]:
            nonlocal rep
            rep += 1
            if rep > 1:  # back to the start: best effort on the primary path
                fabric.reroute(load["id"], PRIMARY, "best-effort")
            fabric.reschedule(50)
            csv_path = fabric.folder / f"probe-{rep}.csv"
            frames = int(3 * third * PROBE_PPS)
            listener = fabric.listen("l1", [PROBE_PORT], frames, csv_path, timeout_s=3)
            sink = fabric.listen("l2", LOAD_PORTS, int(3 * third * LOAD_PPS), fabric.folder / "load.csv", 3)
            time.sleep(1.0)  # the re-schedule's gates run from its base time on (200 ms after the call with tc)
            fabric.wait_for_gates()  # (later over NETCONF: its base time lies further ahead)
            ditg = tsn_ditg.DitgFlow(fabric, "t1", "l1", DITG_PORT, PROBE_PPS, 3 * third + 0.5).start()
            offset = tsn_ditg.tai_offset_ns()
            start_ns, begin = tai_now_ns(), time.monotonic()
            talkers = [fabric.talk("t1", fabric.ip("l1"), [PROBE_PORT], PROBE_PPS, 3 * third, seed=rep),
                       fabric.talk("t2", fabric.ip("l2"), LOAD_PORTS, LOAD_PPS, 3 * third, seed=100 + rep)]
            sleep_until(begin + third)
            rerouted_ns = tai_now_ns()
            fabric.reroute(load["id"], SECONDARY, "best-effort")
            moved_ns = tai_now_ns()
            sleep_until(begin + 2 * third)
            fabric.reschedule(90)
            switched_ns = fabric.client.get("/v2.0/srfabric/schedule")["schedule"]["last_change"]["base_time_ns"]
            for process in (*talkers, listener, sink):
                finish(process, timeout_s=6 * third + 60)
            packets = ditg.packets(timeout_s=6 * third + 60)
            skip = int(0.1 * third * 1e9)  # the first frames take Open vSwitch's slow path
            bounds = [(start_ns + skip, rerouted_ns), (moved_ns, switched_ns), (switched_ns, 2**63)]
            return (record_phases(ctx, csv_path, start_ns, third, bounds, (rerouted_ns, switched_ns))
                    | tsn_ditg.record_phases(ctx, packets, bounds, start_ns, third, offset))

        ctx.repeat({"probe_pps": PROBE_PPS, "load_pps": LOAD_PPS * len(LOAD_PORTS)}, sample)
        ctx.extra["probe_stream"] = {k: probe[k] for k in ("path", "slot", "priority")}
        ctx.extra["api_calls"] = fabric.calls
        ctx.extra["gptp"] = fabric.clocks_at_end()
        ctx.extra["confirm"] = confirm_times(fabric.calls)


def plot(rows: list[Row], extra: dict[str, Any], path: Path) -> None:
    plot_timeline(extra, path, ("best effort re-routed", "duty 50 → 90 %"),
                  "Fig. 11: re-routing best effort, then re-scheduling (1 ms cycle)",
                  "paper: latency falls after the controller re-routes best effort and raises the duty to 90 %")


def compare(rows: list[Row], extra: dict[str, Any]) -> list[str]:
    means = phase_medians(rows, "mean_us")
    out = phase_lines(rows, extra, PHASES)
    out.append(f"re-routing best effort lowers the probe's mean: {'yes' if means[1] < means[0] else 'no'} "
               f"({means[1] - means[0]:+.0f} µs); re-scheduling lowers it further: "
               f"{'yes' if means[2] < means[1] else 'no'} ({means[2] - means[1]:+.0f} µs; modelled gate wait "
               f"{modelled_wait_us(50):.0f} → {modelled_wait_us(90):.0f} µs)")
    return out


EXPERIMENT = Experiment(
    name="tsn-fig11",
    title="Coupling Source Routing with TSN, Fig. 11: re-routing best effort and re-scheduling, probe latency",
    paper="the probe's mean latency falls once best effort is re-routed to the secondary path and the duty "
          "cycle is raised from 50 to 90 %",
    count=count,
    measure=run,
    plot=plot,
    compare=compare,
)

NETCONF = EXPERIMENT.variant(
    "tsn-fig11-netconf",
    "Fig. 11 with the gates over NETCONF: the controller in a namespace of its own, each switch a bridge "
    "(netconfd, taprio) it reaches over SSH",
    "as Fig. 11; the gate latencies within the local-taprio runs' run-to-run spread",
    partial(run, gates="netconf"),
)

NO_PTP = EXPERIMENT.variant(
    "tsn-fig11-netconf-no-ptp",
    "Fig. 11 with the gates over NETCONF and no ptp4l: what the clocks' own processes cost on the emulated CPU",
    "as tsn-fig11-netconf; its difference from it is ptp4l's",
    partial(run, gates="netconf-no-ptp"),
)

GPTP = EXPERIMENT.variant(
    "tsn-fig11-gptp",
    "Fig. 11 with the gates through local tc and ptp4l on every bridge and station, the controller gating on "
    "it: the local reference with the same clocks as tsn-fig11-netconf",
    "as tsn-fig11; tsn-fig11-netconf's gate latencies within this reference's run-to-run spread",
    partial(run, gates="taprio-gptp"),
)
