"""``srfabric bench capacity-tables``: new flows per second set up with p99 under 5 ms on emulated switches that
keep what they are sent (``table_fabric``), at rates real Open vSwitch cannot take on this machine
(``bench capacity-ovs`` holds the real switches' figure), srfabric beside os-ken's ``simple_switch_13`` in one run.

The fabric is a k=4 fat-tree (20 switches, 16 hosts), every switch a TCP OpenFlow channel from this process
with flow tables (match, priority, idle timeout and flow-removed), groups, and frames crossing by them. The
controller runs in its own process on one CPU, the switches on the other. Each new flow is one UDP frame from a
random host to a random other one, with a 5-tuple of its own and (job "fresh") a source MAC of its own, so it is
new to both kinds of controller. A flow is set up when its frame leaves on its destination host's port, so
srfabric's one ingress entry and a learning switch's entry at every hop both count to the end of the path.
Percentiles are over every flow sent: a flow not across by the end of the step's wait counts as that wait.
Steps, capacities and verdicts follow ``bench capacity-ovs``: a step lasts 4 s and at least 200 flows; a
contender's capacity is the highest rate before its first step with under 99 % across or a p99 at or over the
goal; the contenders' order rotates each repetition, and the goal is judged on the ratios' lower quartile.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import uvloop

from srfabric.model.topo import fat_tree
from srfabric_tools.bench.capacity import Contender, peer_contenders, srfabric_contender, sweep
from srfabric_tools.bench.capacity_ovs import OvsStep
from srfabric_tools.bench.cpu_latency import cpu_latency_held
from srfabric_tools.bench.of_emulator import EmulatedFabric, Tally
from srfabric_tools.bench.process_cpu import own_cpu_s, process_cpu_s
from srfabric_tools.bench.table_fabric import TableFabric
from srfabric_tools.lab.stats import percentile

STEERINGS = ("source-routing", "hop-by-hop")
RATES = (100.0, 200.0, 500.0, 1000.0, 1500.0, 2000.0, 3000.0, 4000.0, 5000.0, 7000.0, 10000.0, 15000.0, 20000.0)
QUICK_RATES = (100.0, 500.0)
STEP_SECONDS, QUICK_STEP_SECONDS = 4.0, 1.0
MIN_FLOWS, QUICK_MIN_FLOWS = 200, 10
REPEATS, QUICK_REPEATS = 5, 1
WAIT_S = 2.0  # after a step's last flow, for its stragglers
TOPOLOGY = "fat-tree k=4: 20 emulated switches with flow tables, 16 hosts"
JOBS = {"fresh": "every flow from a source MAC and 5-tuple of its own: new to every controller",
        "learned": "every flow from its host's own MAC and a 5-tuple of its own: new to srfabric's reactive "
                   "steering; a learning switch forwards it by the MAC-pair entries earlier flows left"}


async def table_step(fabric: EmulatedFabric, pid: int, name: str, rate: float, seconds: float, repeat: int = 0,
                     least: int = MIN_FLOWS) -> OvsStep:
    """One offered rate for ``seconds`` (longer if that makes under ``least`` flows), then the stragglers' wait."""
    fabric.tally = tally = Tally()
    held = max(seconds, least / rate)
    controller_before, own_before, begin = process_cpu_s(pid), own_cpu_s(), time.perf_counter()
    await fabric.load(rate, held)
    waited = time.perf_counter()
    while tally.sent and time.perf_counter() - waited < WAIT_S:
        await asyncio.sleep(0.01)
    wall, now = time.perf_counter() - begin, time.perf_counter_ns()
    lost = [now - sent for sent in tally.sent.values()]  # each counted as its whole wait
    every = tally.setup_ns + lost
    return OvsStep(repeat, name, rate, round(held, 2), len(every), len(tally.setup_ns),
                   round(percentile(every, 0.5) / 1e6, 3), round(percentile(every, 0.99) / 1e6, 3),
                   round(max(tally.setup_ns, default=0) / 1e6, 3),
                   round((process_cpu_s(pid) - controller_before) / wall, 3),
                   round((own_cpu_s() - own_before) / wall, 3))


def contenders() -> list[Contender]:
    return [srfabric_contender(steering) for steering in STEERINGS] + peer_contenders()


async def run_steps(quick: bool, say: Callable[[str], None], job: str = "fresh",
                    repeats: int | None = None) -> list[OvsStep]:
    """Every repetition, every contender on a fresh emulated fabric, the order rotating each repetition."""
    rates, seconds = (QUICK_RATES, QUICK_STEP_SECONDS) if quick else (RATES, STEP_SECONDS)
    least = QUICK_MIN_FLOWS if quick else MIN_FLOWS
    names = contenders()
    steps: list[OvsStep] = []
    with cpu_latency_held(cpu_latency_us()):  # a low rate must not time CPUs waking from sleep
        for repeat in range(repeats or (QUICK_REPEATS if quick else REPEATS)):
            for contender in names[repeat % len(names):] + names[:repeat % len(names)]:
                fabric = TableFabric(fat_tree(4))
                fabric.fresh_macs = job == "fresh"
                steps += await sweep(contender, rates, seconds, say=say, fabric=fabric,
                                     measure=partial(table_step, repeat=repeat, least=least))
    return steps


def cpu_latency_us() -> int | None:
    """Every CPU held awake (0 us), as ``bench capacity-ovs`` does, where this process may (root); else None."""
    return 0 if os.geteuid() == 0 else None


def run_bench(quick: bool, out: str, say: Callable[[str], None] = print, job: str = "fresh",
              repeats: int | None = None) -> tuple[dict[str, Any], Path]:
    from srfabric_tools.bench.capacity_ovs_report import plot, summarise
    from srfabric_tools.bench.output import machine, run_folder, write_json, write_runs

    measured_on = machine()
    steps = uvloop.run(run_steps(quick, say, job, repeats))
    folder = run_folder(out, "capacity-tables" if job == "fresh" else "capacity-tables-learned")
    write_runs(folder / "steps.csv", [s.row() for s in steps], measured_on)
    seconds = QUICK_STEP_SECONDS if quick else STEP_SECONDS
    summary = summarise(steps, quick, measured_on, seconds, job, "srfabric bench capacity-tables",
                        "over_os_ken_on_tables")
    summary.update(topology=TOPOLOGY, switches=SWITCHES,
                   frames=f"one UDP frame per new flow, random host pair; {JOBS[job]}", setup_time=SETUP_TIME,
                   rates_offered=list(QUICK_RATES if quick else RATES),
                   step_flows_at_least=QUICK_MIN_FLOWS if quick else MIN_FLOWS,
                   faucet="not run here: bench capacity-ovs runs its real pipeline on real switches")
    summary["cpu_latency_us"] = cpu_latency_us()
    write_json(folder / "summary.json", summary)
    plot(steps, folder / "capacity-tables.png", "Emulated switches with flow tables, fat-tree k=4",
         "Measured on emulated switches that keep their flow tables; every contender on a fresh fabric, offered "
         "the same rates and frames.")
    return summary, folder


SWITCHES = ("emulated (bench/table_fabric.py): every flow-mod kept in a flow table (match, priority, idle "
            "timeout, flow-removed), frames forwarded by the tables hop by hop, a table miss dropped; the "
            "switches' CPU is the emulator's process")
SETUP_TIME = ("the flow's packet-in written on its source host's switch to its frame leaving on its destination "
              "host's port, on the emulator's clock")
