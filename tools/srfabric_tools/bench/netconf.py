"""``srfabric bench netconf``: a schedule change pushed to every bridge of a fabric over NETCONF, committed and
confirmed, against real bridges (``srfabric bridge serve``: Debian's netconfd with the pinned 802.1Qcw modules,
srfabric's SIL library and agent, a private sshd each) on this machine, reached over SSH.

Each run starts the bridges afresh and times ``changes`` changes, each a new list on every gated port of every
bridge at one base time 200 ms ahead (``NetconfGates.apply``: edit and confirmed commit on all bridges at once,
then every confirmation); after the last one's base time it reads each bridge's oper state back and counts the
ports not running what was sent. Beside it, on the same servers: a confirmed commit with no edit and its
confirmation (the floor of a change), and one bare NETCONF round trip (``<discard-changes>`` to one bridge).
The host kernel has no taprio: the bridges validate, commit and keep their state leaves; taprio is not run
(the kernel lab's runs apply it). The default fabric is a line of 7 bridges; ``--topology tsn-fig7`` takes
the coupling paper's Fig. 7 as modelled here (4 bridges).
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from srfabric.model.topo import TopoSpec, tsn_fig7
from srfabric.southbound.gates import next_base_time, tai_now_ns
from srfabric.southbound.netconf.gates import NetconfGates
from srfabric.tsn.gates.gcl import GateEntry, PortGcl
from srfabric_tools.bench.calibration import calibrate, finished
from srfabric_tools.bench.netconf_report import plot, summarise
from srfabric_tools.bench.output import machine, provenance, run_folder, write_json, write_runs
from srfabric_tools.netconf_lab.bridges import BridgeLab, topology_ports

CYCLE_NS, LEAD_NS = 1_000_000, 200_000_000


def line(bridges: int) -> TopoSpec:
    """``bridges`` bridges in a line, a talker on the first and a listener on the last."""
    topo = TopoSpec()
    for index in range(1, bridges + 1):
        topo.add_switch(f"s{index}")
    for index in range(1, bridges):
        topo.add_link(f"s{index}", f"s{index + 1}")
    topo.add_host("t1", "s1")
    topo.add_host("l1", f"s{bridges}")
    return topo


def change(ports: dict[str, list[str]], number: int) -> list[PortGcl]:
    """Change ``number``: every port's window moved (so every bridge has an edit), at the next base time."""
    base = next_base_time(tai_now_ns(), CYCLE_NS, LEAD_NS)
    offset = 10_000 + (number % 50) * 1_000
    entries = [GateEntry(1, offset), GateEntry(2, 30_000), GateEntry(1, CYCLE_NS - offset - 30_000)]
    return [PortGcl(bridge, "", port, CYCLE_NS, base, list(entries)) for bridge, names in ports.items()
            for port in names]


def timed(action: Callable[[], Any]) -> float:
    started = time.perf_counter()
    action()
    return (time.perf_counter() - started) * 1e3


def noop_commit(gates: NetconfGates, number: int) -> None:
    """A confirmed commit with nothing to commit, and its confirmation, on every bridge at once."""
    token = f"noop{number}"

    def commit(name: str) -> None:
        gates.sessions[name].call("no-op commit", lambda s: s.commit(confirmed=True, timeout="30", persist=token))

    def confirm(name: str) -> None:
        gates.sessions[name].call("no-op confirm", lambda s: s.commit(persist_id=token))

    for step in (commit, confirm):
        failed = gates.each(gates.sessions, step)
        if failed:
            raise next(iter(failed.values()))


def one_run(ports: dict[str, list[str]], changes: int) -> dict[str, Any]:
    """One run on fresh bridges (in a temporary folder: their keys stay out of the results): every change's time
    and phases, the no-op floor, the bare round trip."""
    with tempfile.TemporaryDirectory(prefix="srfabric-bridges-") as scratch, BridgeLab(ports, Path(scratch)) as lab:
        gates = NetconfGates(lab.access(), confirm_timeout_s=30)
        try:
            capabilities_ms = timed(gates.capabilities)
            gates.apply(change(ports, 0))  # sessions open; not counted
            rows, last = [], []
            for number in range(1, changes + 1):
                last = change(ports, number)
                rows.append({"change_ms": timed(partial(gates.apply, last)), "commit_ms": gates.last.commit_s * 1e3,
                             "confirm_ms": gates.last.confirm_s * 1e3})
            time.sleep(max(0.0, (last[0].base_time_ns - tai_now_ns()) / 1e9) + 0.05)
            problems: list[str] = []
            readback_ms = timed(lambda: problems.extend(gates.switched(last)))
            for number, row in enumerate(rows):
                row["noop_commit_ms"] = timed(partial(noop_commit, gates, number))
            first = gates.sessions[sorted(gates.sessions)[0]]
            for row in rows:
                row["round_trip_ms"] = timed(lambda: first.call("discard-changes", lambda s: s.discard_changes()))
        finally:
            gates.close()
    return {"rows": rows, "capabilities_ms": capabilities_ms, "readback_ms": readback_ms, "not_switched": problems}


def run_netconf(quick: bool, out: str, topology: str, runs: int, changes: int,
                say: Callable[[str], None]) -> tuple[dict[str, Any], Path]:
    runs, changes = (2, 10) if quick else (runs, changes)
    topo = tsn_fig7() if topology == "tsn-fig7" else line(7)
    ports = topology_ports(topo)
    folder = run_folder(out, "netconf")
    measured_on, results, rows = machine(), [], []
    for run in range(1, runs + 1):
        calibration = calibrate()
        result = one_run(ports, changes)
        result["calibration"] = finished(calibration)
        results.append(result)
        rows += [{"run": run, **row} for row in result["rows"]]
        say(f"run {run}: {len(ports)} bridges, {changes} changes, {len(result['not_switched'])} ports not switched")
    write_runs(folder / "changes.csv", rows, measured_on)
    summary = summarise(results, ports, topology, quick) | provenance(measured_on, "srfabric bench netconf")
    write_json(folder / "summary.json", summary)
    plot(rows, folder / "netconf.png")
    return summary, folder
