"""Changes under traffic, gates over NETCONF (issue 61's hitless goal): Fig. 7's fabric with every switch a
bridge (``srfabric bridge serve``: netconfd, taprio) and the controller in a namespace of its own, reaching them
over TCP only. A probe stream t1 → l1 on the primary path runs at 1,000 frames/s for the whole run, each frame at
a random point of its period; meanwhile a second stream t2 → l2 on the same path is admitted and removed again,
change after change (each one a new list on the path's ports, committed and confirmed on every bridge at one
base time). The probe's stream is never touched.

From frame timestamps: each probe frame's arrival (sent time plus latency, TAI) taken to the cycle is checked
against the open windows of its last hop's time-triggered class in the schedule in force at that time (the API's
schedule, read after every change), within a slack for the listener's processing; a frame outside is one the
change disturbed. From oper state: after each change's base time every bridge's oper lists are read and compared
with what was sent (a bridge running the old list, or a mix, is counted). Run it in the kernel lab:
``srfabric kernel-lab run --ovs -- srfabric lab tsn-netconf-changes``.
"""

from __future__ import annotations

import csv
import time
from functools import partial
from pathlib import Path
from typing import Any

from srfabric.southbound.gates import tai_now_ns
from srfabric.southbound.netconf.gates import NetconfGates
from srfabric.tsn.gates.gcl import GateEntry, PortGcl
from srfabric_tools.lab.core import Context, Experiment, Settings
from srfabric_tools.lab.experiments.tsn_fig9 import taprio_kernel
from srfabric_tools.lab.experiments.tsn_live import PRIMARY, Fig7Fabric, confirm_times, finish

Row = dict[str, Any]
PROBE_PORT, PROBE_PPS, OTHER_PORT = 7101, 1000, 7102
SLACK_NS = 60_000  # the listener's share of a frame's latency after the last gate (taken from the run below)
LEAD_MS = 1500.0


def changes(settings: Settings) -> int:
    return 10 if settings.quick else 100


def count(settings: Settings) -> int:
    return 1


def windows(gates: list[dict[str, Any]], port: str) -> tuple[int, int, list[tuple[int, int]]]:
    """A port's base time, cycle and the time-triggered class's open windows in it (from the schedule view)."""
    gate = next(g for g in gates if g["port"] == port)
    at, open_windows = 0, []
    for mask, duration in gate["entries"]:
        if mask & gate["tt_mask"]:
            open_windows.append((at, at + duration))
        at += duration
    return gate["base_time_ns"], at, open_windows


Windows = tuple[int, int, list[tuple[int, int]]]  # a port's base time, cycle and open windows


def in_force(schedules: list[Windows], at_ns: int) -> Windows:
    """The last hop's schedule running at ``at_ns``: the newest whose base time has come (the first before any)."""
    running = [schedule for schedule in schedules if schedule[0] <= at_ns]
    return max(running, key=lambda schedule: schedule[0]) if running else min(schedules, key=lambda s: s[0])


def outside(csv_path: Path, schedules: list[Windows], after_ns: int, changes_ns: list[int]
            ) -> tuple[list[dict[str, int]], int]:
    """The probe's frames sent after ``after_ns`` that arrived outside their windows in the schedule in force at
    their arrival (each with its phase, its latency, its send lateness and how far it arrived from the nearest
    change's base time), and how many frames were checked."""
    out, checked = [], 0
    with csv_path.open() as rows:
        for row in csv.DictReader(rows):
            sent = int(row["planned_ns"])
            if sent < after_ns:
                continue
            arrived = sent + int(row["latency_ns"])
            base_ns, cycle_ns, open_windows = in_force(schedules, arrived)
            phase = (arrived - base_ns) % cycle_ns
            checked += 1
            if not any(begin <= phase <= end + SLACK_NS for begin, end in open_windows):
                nearest = min(changes_ns, key=lambda change: abs(arrived - change), default=arrived)
                out.append({"phase_ns": phase, "latency_ns": int(row["latency_ns"]), "base_ns": base_ns,
                            "late_send_ns": int(row["sent_ns"]) - sent, "from_change_ns": arrived - nearest})
    return out, checked


def last_hop(fabric: Fig7Fabric) -> Windows:
    """The probe's last hop's schedule as the API shows it now (s4's port towards l1)."""
    gates = fabric.client.get("/v2.0/srfabric/schedule")["schedule"]["gates"]
    return windows(gates, next(g["port"] for g in gates if g["switch"] == "s4"))


def not_switched(fabric: Fig7Fabric, gates: NetconfGates) -> int:
    """Ports whose bridge does not run what the API shows, read after the last change's base time."""
    fabric.wait_for_gates(margin_ns=50_000_000)
    shown = fabric.client.get("/v2.0/srfabric/schedule")["schedule"]["gates"]
    sent = [PortGcl(g["switch"], "", g["port"], sum(d for _, d in g["entries"]), g["base_time_ns"],
                    [GateEntry(m, d) for m, d in g["entries"]]) for g in shown]
    return len(gates.switched(sent))


def run(ctx: Context, gates: str = "netconf") -> None:
    taprio_kernel(f"tsn-{gates}-changes")
    total = changes(ctx.settings)
    ctx.repeat({"changes": total}, lambda: one_run(ctx, total, gates))


def one_run(ctx: Context, total: int, gates: str = "netconf") -> dict[str, float]:
    """A fresh fabric, the probe, ``total`` changes under it; the run's counts. ``gates="taprio"``: the same
    changes through local tc (no oper state to read: its count stays 0)."""
    with Fig7Fabric(pairs=2, gates=gates, lead_ms=LEAD_MS) as fabric:
        reader = NetconfGates(fabric.bridges.lab.access(), confirm_timeout_s=120) if fabric.bridges else None
        probe = fabric.stream("t1", "l1", PROBE_PORT, path=PRIMARY, name="probe")
        fabric.wait_for_gates()
        seconds = total * (LEAD_MS / 1000 + 1.5) + 10
        csv_path = fabric.folder / "probe.csv"
        listener = fabric.listen("l1", [PROBE_PORT], int(seconds * PROBE_PPS), csv_path, timeout_s=5)
        talker = fabric.talk("t1", fabric.ip("l1"), [PROBE_PORT], PROBE_PPS, seconds)
        time.sleep(2.0)
        started_ns, mismatched, other = tai_now_ns(), 0, None
        schedules = [last_hop(fabric)]
        for number in range(total):
            if other is None:
                other = fabric.stream("t2", "l2", OTHER_PORT, path=PRIMARY, name=f"other-{number}")
            else:
                fabric.remove(other["id"], f"other-{number}")
                other = None
            schedules.append(last_hop(fabric))
            mismatched += not_switched(fabric, reader) if reader else 0
        finish(talker, timeout_s=seconds * 3 + 120)
        finish(listener, timeout_s=seconds * 3 + 120)
        changes_ns = [call["base_time_ns"] for call in fabric.calls if call.get("base_time_ns")]
        out, checked = outside(csv_path, schedules, started_ns, changes_ns)
        if reader:
            reader.close()
        ctx.extra["api_calls"] = fabric.calls
        ctx.extra["gptp"] = fabric.clocks_at_end()
        ctx.extra["confirm"] = confirm_times(fabric.calls)
        ctx.extra["probe_stream"] = {k: probe[k] for k in ("path", "slot")}
        ctx.extra["probe_windows_ns"] = sorted({(cycle, tuple(map(tuple, w))) for _, cycle, w in schedules})
        ctx.extra.setdefault("outside", []).append(out[:100])
    return {"frames_outside_windows": float(len(out)), "frames_checked": float(checked),
            "ports_not_switched": float(mismatched)}


def plot(rows: list[Row], extra: dict[str, Any], path: Path) -> None:
    from srfabric_tools.lab.plot import pyplot, save

    plt = pyplot()
    figure, ax = plt.subplots(figsize=(7, 4))
    calls = [call["ms"] for call in extra.get("api_calls", []) if call["call"].split()[0] in ("create", "delete")]
    ax.plot(range(1, len(calls) + 1), calls, "o", markersize=3)
    ax.set_xlabel("change")
    ax.set_ylabel("API call until confirmed on every bridge (ms)")
    ax.set_title("Changes over NETCONF under traffic")
    save(figure, path, "each point: one admission or removal, answered once every bridge confirmed its commit")


def compare(rows: list[Row], extra: dict[str, Any]) -> list[str]:
    by = {r["metric"]: r["median"] for r in rows}
    return [f"probe frames outside their windows: {by.get('frames_outside_windows', 0):.0f} of "
            f"{by.get('frames_checked', 0):.0f}; ports not running what was sent after a change: "
            f"{by.get('ports_not_switched', 0):.0f}; goal 0 and 0"]


EXPERIMENT = Experiment(
    name="tsn-netconf-changes",
    title="Changes over NETCONF under traffic: an untouched probe's frames against its windows, every bridge's "
          "oper state after every change",
    paper="(issue 61) every change lands whole on every bridge; 0 frames of untouched streams outside their windows",
    count=count,
    measure=run,
    plot=plot,
    compare=compare,
)

TAPRIO = EXPERIMENT.variant(
    "tsn-taprio-changes",
    "The same changes under traffic with the gates through local tc (taprio), the controller beside the "
    "switches: what Linux taprio itself does at a switch-over",
    "(issue 61) the local-taprio reference for tsn-netconf-changes",
    partial(run, gates="taprio"),
)

TAPRIO_GPTP = EXPERIMENT.variant(
    "tsn-taprio-gptp-changes",
    "The same changes through local tc with ptp4l on every bridge and station, as in tsn-netconf-changes: "
    "whether the clocks' processes, not NETCONF, move frames at a switch-over",
    "(issue 61) the local-taprio reference for tsn-netconf-changes, with its clocks",
    partial(run, gates="taprio-gptp"),
)

NO_PTP = EXPERIMENT.variant(
    "tsn-netconf-no-ptp-changes",
    "The same changes over NETCONF without ptp4l: NETCONF's share of tsn-netconf-changes' frames apart "
    "from the clocks'",
    "(issue 61) as tsn-netconf-changes",
    partial(run, gates="netconf-no-ptp"),
)
