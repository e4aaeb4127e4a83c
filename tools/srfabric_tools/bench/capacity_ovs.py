"""``srfabric bench capacity-ovs``: new flows per second set up with p99 under 5 ms on real Open vSwitch, srfabric
(source routing and hop-by-hop rules) and os-ken's ``simple_switch_13`` on the same fabric, offered rates and
frames, in one run.

Every switch is a userspace Open vSwitch bridge that installs what it is sent and forwards later packets by
it; the fabric is Mininet's ``tree,depth=3,fanout=2`` (7 switches, 8 hosts; paths of up to 5 switches) because
``simple_switch_13`` floods and cannot run on a fabric with loops. Each new flow is one UDP frame from a random
host to a random other one with a source MAC and a 5-tuple of its own, so it is new to both kinds of controller:
srfabric sets it up at its ingress switch (source routing) or on every switch of its path (hop-by-hop), and
``simple_switch_13`` learns its source and installs a MAC-pair entry hop by hop. Its setup time is the frame's
arrival at the source host's switch port to its leaving on the destination host's port, both stamped by the
kernel on the same clock, so it holds the whole way across the fabric for every contender.

A repetition runs every contender in turn on a fresh fabric (the order rotates), offering rising rates until a
step misses: fewer than 99 % of its flows across, or a p99 at or over the goal. A contender's capacity is the
highest rate before its first miss; each repetition's ratios come from the same repetition's capacities, and
the goal (source routing at least 3 times os-ken's) is judged on the ratios' lower quartile. A step lasts 4 s
or until it has 200 flows, whichever is longer, and every CPU is held awake meanwhile (as ``bench dataplane``
does for its setup times), so that a low rate does not time CPUs waking from sleep.
"""

from __future__ import annotations

import contextlib
import os
import select
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from srfabric.errors import SrfabricError
from srfabric.model.topo import TopoSpec, tree
from srfabric_tools.bench.capacity_ovs_faucet import FAUCET, faucet_fabric
from srfabric_tools.bench.cpu_latency import cpu_latency_held
from srfabric_tools.bench.dataplane_setup import PortTap, first_seen, send_flows
from srfabric_tools.bench.new_flows import FIRST_SOURCE_PORT as FIRST_SPORT
from srfabric_tools.bench.new_flows import PlannedFlow, flow_plan
from srfabric_tools.bench.process_cpu import process_cpu_s
from srfabric_tools.lab.fabric import LabFabric
from srfabric_tools.lab.netlab import NetLab
from srfabric_tools.lab.stats import percentile

PEER = "os-ken simple_switch_13"
STEERINGS = ("source-routing", "hop-by-hop")
RATES = (10.0, 25.0, 50.0, 100.0, 150.0, 200.0, 300.0, 400.0, 600.0, 800.0, 1200.0, 1600.0, 2400.0)
QUICK_RATES = (10.0, 100.0)
STEP_SECONDS, QUICK_STEP_SECONDS = 4.0, 1.0
# A step lasts until it has this many flows at least: a p99 of 40 flows is their slowest one, and one stall of
# the machine would make a step miss on its own.
MIN_FLOWS, QUICK_MIN_FLOWS = 200, 10
CPU_LATENCY_US = 0  # every CPU held awake, as in bench dataplane's setup times: a low rate finds no CPU asleep
REPEATS, QUICK_REPEATS = 5, 1
JOBS = {"fresh": "every flow from a source MAC and 5-tuple of its own: new to every controller",
        "learned": "every flow between hosts learned beforehand (each pair met once before the steps), a 5-tuple "
                   "of its own: new to srfabric's reactive steering; a learning switch forwards it by the entries "
                   "of its host pair"}
P99_GOAL_MS = 5.0
SATURATED_P99_MS = 50.0  # past this, or under 90 % across, the sweep stops: higher rates only queue more
SET_UP_SHARE = 0.99
GOAL_RATIO = 3.0
WARM_DPORT = 5999  # the learned job's warm-up: one flow per host pair
FIRST_DPORT = 6000  # each step's flows go to a port of their own: no step's entries serve another's flows
FIRST_MAC = 0x02_00_00_00_00_01  # locally administered, counting up one per flow
STRAGGLERS_S = 1.0  # a frame not across this long after the last was sent counts as not set up
VSWITCHD_PID = "/var/run/openvswitch/ovs-vswitchd.pid"
TOPOLOGY = "tree depth=3 fanout=2 (7 Open vSwitch bridges, userspace datapath; 8 hosts)"


def topology() -> TopoSpec:
    return tree(3, 2)


@dataclass(frozen=True)
class OvsStep:
    """One offered rate held for ``seconds`` on one contender's fabric."""

    repeat: int
    contender: str
    offered: float
    seconds: float
    sent: int
    set_up: int  # frames that left on their destination's port within the step and its stragglers' wait
    p50_ms: float  # over every flow sent, one not across counted as the step and its wait
    p99_ms: float
    max_ms: float  # of the flows across
    controller_cpu: float = 0.0  # busy share of one CPU over the step and its stragglers' wait
    switches_cpu: float = 0.0  # ovs-vswitchd's, every bridge's datapath and OpenFlow handling

    @property
    def within_goal(self) -> bool:
        return self.within(P99_GOAL_MS)

    def within(self, p99_ms: float) -> bool:
        """99 % of the step's flows across, with p99 under ``p99_ms``."""
        return self.set_up >= SET_UP_SHARE * self.sent and self.p99_ms < p99_ms

    def row(self) -> dict[str, Any]:
        return {**{name: getattr(self, name) for name in self.__dataclass_fields__}, "within_goal": self.within_goal}


def setup_times_ms(frames: dict[tuple[str, int], list[tuple[int, int, bytes]]], spec: TopoSpec,
                   destination_of: dict[tuple[str, int], str], dport: int) -> list[float]:
    """Each planned flow's time across the fabric, in ms: its first frame in on its source host's switch port to
    its first frame out on its destination host's port. ``frames`` are the taps' captures by (switch, port);
    ``destination_of`` maps each flow's (source address, source port) to its destination host."""
    port_of = {host.ip: (host.switch, host.port) for host in spec.hosts.values()}
    arrived: dict[tuple[str, int], int] = {}
    left: dict[tuple[str, int], int] = {}
    for where, seen in frames.items():
        for key, stamp in first_seen(seen, False, dport).items():
            if port_of.get(key[0]) == where:
                arrived[key] = stamp
        for key, stamp in first_seen(seen, True, dport).items():
            destination = destination_of.get(key)
            if destination is not None and port_of[spec.hosts[destination].ip] == where:
                left[key] = stamp
    return [(left[key] - arrived[key]) / 1e6 for key in destination_of if key in arrived and key in left]


class Taps:
    """A kernel-stamped capture on the switch port of every host."""

    def __init__(self, fabric: LabFabric) -> None:
        self.taps: dict[tuple[str, int], PortTap] = {}
        try:
            for host in fabric.spec.hosts.values():
                self.taps[(host.switch, host.port)] = PortTap(fabric.port_name(host.switch, host.port))
        except OSError:
            self.close()  # the taps opened before the one that failed
            raise

    def drain(self) -> dict[tuple[str, int], list[tuple[int, int, bytes]]]:
        return {where: tap.drain() for where, tap in self.taps.items()}

    def close(self) -> None:
        for tap in self.taps.values():
            tap.close()


@dataclass
class Offer:
    """A contender's fabric under load: its controller's process, and the next destination port and source MAC."""

    controller_pid: int
    fresh: bool = True  # each flow from a source MAC of its own; else from its host's (learned) MAC
    dport: int = FIRST_DPORT
    mac: int = FIRST_MAC


def vswitchd_pid() -> int:
    return int(Path(VSWITCHD_PID).read_text().strip())


def offer(lab: NetLab, fabric: LabFabric, taps: Taps, plan_of: Offer, rate: float, seconds: float, seed: int,
          repeat: int, contender: str) -> OvsStep:
    """``rate`` new flows per second for ``seconds``; what the taps saw of them."""
    names = sorted(fabric.spec.hosts)
    count = max(1, round(rate * seconds))
    flows = flow_plan(names, count, rate, seed, macs_from=plan_of.mac if plan_of.fresh else 0)
    dport = plan_of.dport
    plan_of.dport += 1
    plan_of.mac += count
    taps.drain()
    pids = (plan_of.controller_pid, vswitchd_pid())
    before, begin = [process_cpu_s(pid) for pid in pids], time.monotonic()
    send_flows(lab, fabric, flows, dport)  # returns once the last frame is sent, and half a second more
    time.sleep(STRAGGLERS_S)
    wall = time.monotonic() - begin
    busy = [round((process_cpu_s(pid) - used) / wall, 3) for pid, used in zip(pids, before, strict=True)]
    ips = {name: host.ip for name, host in fabric.spec.hosts.items()}
    destination_of = {(ips[flow.source], flow.sport): flow.destination for flow in flows}
    times = setup_times_ms(taps.drain(), fabric.spec, destination_of, dport)
    # Percentiles over every flow sent: one not across took at least the whole wait (a lost 1 % is the p99).
    everything = times + [(seconds + STRAGGLERS_S) * 1e3] * (count - len(times))
    return OvsStep(repeat, contender, rate, seconds, count, len(times), round(percentile(everything, 0.5), 4),
                   round(percentile(everything, 0.99), 4), round(max(times, default=0.0), 4), *busy)


@contextmanager
def contender_fabric(lab: NetLab, contender: str, spec: TopoSpec) -> Iterator[tuple[LabFabric, int]]:
    """A fresh fabric for ``contender`` and its controller's process: srfabric's controller (reactive) in a thread
    of this one, or a peer in a process of its own."""
    if contender in STEERINGS:
        with LabFabric(lab, spec, "mac-nibble", contender, reactive=True) as fabric:
            yield fabric, os.getpid()
        return
    if contender == FAUCET:
        with faucet_fabric(lab, spec) as (fabric, pid):
            yield fabric, pid
        return
    from srfabric_tools.bench.peer_controller import SIMPLE_SWITCH_13

    process = lab.spawn([sys.executable, "-m", "srfabric_tools.bench.peer_controller", str(SIMPLE_SWITCH_13)])
    assert process.stderr is not None  # NetLab.spawn pipes it: read all along, so that a full pipe never holds it
    threading.Thread(target=process.stderr.read, name="os-ken stderr", daemon=True).start()
    try:
        port = _port_line(process)
        with LabFabric(lab, spec, peer=f"tcp:127.0.0.1:{port}") as fabric:
            yield fabric, process.pid
    finally:
        lab.stop(process)


def _port_line(process: Any, timeout_s: float = 30.0) -> int:
    import json

    ready, _, _ = select.select([process.stdout], [], [], timeout_s)
    line = process.stdout.readline() if ready else b""
    if not line:
        raise SrfabricError("peer", f"os-ken printed no port within {timeout_s:g} s (exit {process.poll()})")
    return int(json.loads(line)["port"])


def contenders() -> tuple[str, ...]:
    """srfabric's two steerings, and os-ken's application and faucet where bootstrap installed them."""
    from srfabric_tools.bench.capacity_faucet import faucet_version
    from srfabric_tools.bench.peer_controller import SIMPLE_SWITCH_13

    return (*STEERINGS, *((PEER,) if SIMPLE_SWITCH_13.exists() else ()),
            *((FAUCET,) if faucet_version() is not None else ()))


def sweep(lab: NetLab, contender: str, rates: tuple[float, ...], seconds: float, least: int, repeat: int,
          say: Callable[[str], None], job: str = "fresh") -> list[OvsStep]:
    """Rising rates on a fresh fabric until a step is saturated (that step is kept)."""
    spec = topology()
    steps: list[OvsStep] = []
    say(f"capacity-ovs #{repeat} {contender}: building the fabric")
    with contender_fabric(lab, contender, spec) as (fabric, pid), contextlib.closing(Taps(fabric)) as taps:
        offered = Offer(pid, fresh=job == "fresh")
        offer(lab, fabric, taps, offered, rates[0], 2.0, 1000 + repeat, repeat, contender)  # warm-up
        if not offered.fresh:  # every host pair has met once: a learning switch holds all their entries
            send_flows(lab, fabric, every_pair(sorted(fabric.spec.hosts), rates[0] * 4), WARM_DPORT)
        for index, rate in enumerate(rates):
            held = max(seconds, least / rate)
            step = offer(lab, fabric, taps, offered, rate, held, 100 * repeat + index, repeat, contender)
            say(f"  {rate:g}/s: {step.set_up} of {step.sent} across, p50 {step.p50_ms:.3f} ms, "
                f"p99 {step.p99_ms:.3f} ms, CPU controller {step.controller_cpu:.0%} switches "
                f"{step.switches_cpu:.0%}")
            steps.append(step)
            if step.p99_ms > SATURATED_P99_MS or step.set_up < 0.9 * step.sent:
                break
    return steps


def every_pair(hosts: list[str], rate: float) -> list[PlannedFlow]:
    """One flow from each host to each other one, at ``rate``.

    >>> [(f.source, f.destination) for f in every_pair(["a", "b"], 10.0)]
    [('a', 'b'), ('b', 'a')]
    """
    pairs = [(a, b) for a in hosts for b in hosts if a != b]
    return [PlannedFlow(int(index * 1e9 / rate), a, b, FIRST_SPORT) for index, (a, b) in enumerate(pairs)]


def capacity(steps: list[OvsStep], contender: str, repeat: int, p99_ms: float = P99_GOAL_MS) -> float:
    """The highest rate before ``contender``'s first step in repetition ``repeat`` over ``p99_ms`` or under 99 %
    across (0 when the first was).

    >>> ok, late = OvsStep(0, "a", 10.0, 1, 10, 10, 1.0, 2.0, 3.0), OvsStep(0, "a", 20.0, 1, 20, 20, 6.0, 9.0, 9.0)
    >>> capacity([ok, late], "a", 0), capacity([ok, late], "a", 0, 50.0)
    (10.0, 20.0)
    """
    reached = 0.0
    for step in sorted((s for s in steps if s.contender == contender and s.repeat == repeat),
                       key=lambda s: s.offered):
        if not step.within(p99_ms):
            break
        reached = step.offered
    return reached


def run_steps(quick: bool, say: Callable[[str], None], job: str = "fresh",
              repeats: int | None = None) -> list[OvsStep]:
    """Every repetition (``repeats``, else the form's), every contender, the order rotating each repetition.
    ``job``: "fresh", each flow from a source MAC never seen; "learned", each between hosts learned before."""
    rates, seconds = (QUICK_RATES, QUICK_STEP_SECONDS) if quick else (RATES, STEP_SECONDS)
    least = QUICK_MIN_FLOWS if quick else MIN_FLOWS
    names = contenders()
    steps: list[OvsStep] = []
    with cpu_latency_held(CPU_LATENCY_US):
        for repeat in range(repeats or (QUICK_REPEATS if quick else REPEATS)):
            order = names[repeat % len(names):] + names[:repeat % len(names)]
            for contender in order:
                with NetLab() as lab:
                    steps += sweep(lab, contender, rates, seconds, least, repeat, say, job)
    return steps
