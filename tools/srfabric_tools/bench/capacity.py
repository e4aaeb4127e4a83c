"""``srfabric bench capacity``: how many new flows per second the controller sets up, reactive, while the
99th percentile of setup time stays under 5 ms, under source routing and under hop-by-hop rules.

The controller runs in a process of its own (``capacity_controller``), pinned
to one CPU; this process emulates every switch of a k=4 fat-tree over real TCP
OpenFlow channels (``of_emulator``), pinned to the other. It offers new flows
between random host pairs at rising rates, open-loop, and times each from its
packet-in to its packet-out. Under source routing a flow costs the controller a
packet-in, one flow-mod and a packet-out; under hop-by-hop rules, a flow-mod for
every switch on the path and a barrier round trip to each one past the first.
The emulated switches act on nothing, so the figure is the controller's own
limit (as ``cbench`` measures it); both processes' CPU time is reported, so a
step where the generator, not the controller, ran out of CPU shows. Where the
bootstrap installed them, os-ken's ``simple_switch_13`` and faucet 1.10
(``capacity_faucet``, which sets up no flow of its own: its messages per new
flow and its CPU are reported) run under the same generator in the same run.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import uvloop

from srfabric.controller.heap import freeze_heap
from srfabric.errors import SrfabricError
from srfabric.model.topo import fat_tree
from srfabric_tools.bench.of_emulator import EmulatedFabric, Tally
from srfabric_tools.bench.output import machine, provenance, run_folder, write_json, write_runs
from srfabric_tools.bench.process_cpu import own_cpu_s, pin, process_cpu_s
from srfabric_tools.lab.stats import percentile

STEERINGS = ("source-routing", "hop-by-hop")
PEER = "os-ken simple_switch_13"
PEER_RATES = (50.0, 100.0, 200.0, 300.0, 500.0, 750.0, 1000.0, 1500.0, 2000.0)
QUICK_PEER_RATES = (50.0, 200.0)
FAUCET_RATES, QUICK_FAUCET_RATES = (1000.0, 10000.0), (500.0,)
FAUCET_SECONDS = 3.0
FULL_RATES = (500.0, 1000.0, 1500.0, 2000.0, 3000.0, 4000.0, 5000.0, 6000.0, 7000.0, 8000.0, 10000.0, 12000.0,
              15000.0, 20000.0)
QUICK_RATES = (500.0, 2000.0)
P99_GOAL_MS = 5.0
STEP_SECONDS = 10.0  # per offered rate: a stall of the machine of a few ms then delays under 1 % of a step's flows
GOAL_FLOWS_PER_S = 10_000.0
GOAL_RATIO = 3.0
SET_UP_SHARE = 0.99  # a step counts only if this share of its flows was set up
SATURATED_P99_MS = 100.0  # past this the sweep stops: higher rates only queue more
CONTROLLER_CPU, GENERATOR_CPU = 1, 0
Measure = Callable[[EmulatedFabric, int, str, float, float], Awaitable[Any]]  # fabric, pid, name, rate, seconds


@dataclass(frozen=True)
class Step:
    """One offered rate, held for ``seconds``."""

    steering: str
    offered: float
    seconds: float
    sent: int
    set_up: int
    achieved: float  # flows set up per second of load
    p50_ms: float
    p99_ms: float
    max_ms: float
    controller_cpu: float  # busy share of one CPU over the step
    generator_cpu: float
    flow_mods_per_flow: float
    barriers_per_flow: float

    @property
    def within_goal(self) -> bool:
        return self.set_up >= SET_UP_SHARE * self.sent and self.p99_ms <= P99_GOAL_MS


async def _line(process: asyncio.subprocess.Process, timeout: float) -> dict[str, Any]:
    assert process.stdout is not None
    raw = await asyncio.wait_for(process.stdout.readline(), timeout)
    if not raw:
        raise SrfabricError("controller", f"the controller under test exited ({await process.wait()})")
    line: dict[str, Any] = json.loads(raw)
    return line


async def _step(fabric: EmulatedFabric, pid: int, steering: str, rate: float, seconds: float) -> Step:
    fabric.tally = tally = Tally()
    controller_before, own_before, begin = process_cpu_s(pid), own_cpu_s(), time.perf_counter()
    await fabric.load(rate, seconds)
    sent = len(tally.sent) + len(tally.setup_ns)
    waited = time.perf_counter()
    while tally.sent and time.perf_counter() - waited < 2.0:  # stragglers, queued behind the rest
        await asyncio.sleep(0.01)
    wall = time.perf_counter() - begin
    set_up = len(tally.setup_ns)
    return Step(steering, rate, seconds, sent, set_up, round(set_up / seconds, 1),
                round(percentile(tally.setup_ns, 0.5) / 1e6, 3), round(percentile(tally.setup_ns, 0.99) / 1e6, 3),
                round(max(tally.setup_ns, default=0) / 1e6, 3),
                round((process_cpu_s(pid) - controller_before) / wall, 3),
                round((own_cpu_s() - own_before) / wall, 3),
                round(tally.flow_mods / max(set_up, 1), 2), round(tally.barriers / max(set_up, 1), 2))


@dataclass(frozen=True)
class Contender:
    """A controller under the generator: its process (``argv``, printing its OpenFlow port first), whether it
    prints a second line once it knows the fabric (srfabric's), and whether it decides switch by switch, so
    its packet-outs are followed hop by hop (``peer_following``)."""

    name: str
    argv: tuple[str, ...]
    says_ready: bool = True
    following: bool = False


def srfabric_contender(steering: str, k: int = 4, codec: str = "mac-nibble") -> Contender:
    return Contender(steering, (sys.executable, "-m", "srfabric_tools.bench.capacity_controller", str(k), steering,
                                codec))


def peer_contenders() -> list[Contender]:
    """os-ken's ``simple_switch_13`` (Ryu's successor's reactive learning switch), when bootstrap fetched it."""
    from srfabric_tools.bench.peer_controller import SIMPLE_SWITCH_13

    if not SIMPLE_SWITCH_13.exists():
        return []
    return [Contender(PEER, (sys.executable, "-m", "srfabric_tools.bench.peer_controller", str(SIMPLE_SWITCH_13)),
                      says_ready=False, following=True)]


async def sweep(contender: Contender, rates: tuple[float, ...], seconds: float, k: int = 4,
                say: Any = print, fabric: EmulatedFabric | None = None, measure: Measure | None = None
                ) -> list[Any]:
    """Start a controller, connect the emulated fat-tree, then offer each rate in turn until saturated.
    ``fabric``: the emulated switches (by default ones that act on no flow-mod, following a peer's packet-outs);
    ``measure``: one step on it (by default :func:`_step`)."""
    from srfabric_tools.bench.peer_following import FollowingFabric

    spec = fat_tree(k)
    process = await asyncio.create_subprocess_exec(
        *contender.argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL)
    pin(process.pid, CONTROLLER_CPU)
    pin(0, GENERATOR_CPU)
    if fabric is None:
        fabric = FollowingFabric(spec) if contender.following else EmulatedFabric(spec)
    measure = measure or _step
    steps: list[Any] = []
    try:
        port = (await _line(process, 30))["port"]
        await fabric.connect(port)
        await asyncio.sleep(0.3)  # links first: a host's port must not look like a fabric port
        fabric.announce_hosts()
        if contender.says_ready:
            await _line(process, 30)  # every link and host known, first sync done
        else:
            await asyncio.sleep(1.0)  # the hosts' announcements flooded and learned
        freeze_heap()  # no full collection of this process's heap in a step: it would show as slow setups
        say(f"capacity {contender.name}: warming up")
        await measure(fabric, process.pid, contender.name, rates[0], 1.0)
        for rate in rates:
            say(f"capacity {contender.name}: {rate:g} new flows/s for {seconds:g} s")
            step = await measure(fabric, process.pid, contender.name, rate, seconds)
            steps.append(step)
            if step.p99_ms > SATURATED_P99_MS or step.set_up < 0.9 * step.sent:
                break
    finally:
        fabric.close()
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(process.wait(), 10)
        except TimeoutError:
            process.kill()
            await process.wait()
        with contextlib.suppress(OSError):
            os.sched_setaffinity(0, set(range(os.cpu_count() or 1)))
    return steps


def capacity(steps: list[Step], steering: str) -> float:
    """The highest offered rate up to which ``steering`` set up 99 % of its flows with p99 within the goal at
    every step: a rate above one that missed does not count, however it did.

    >>> from dataclasses import replace
    >>> ok = Step("sr", 1000.0, 3, 3000, 3000, 1000.0, 0.2, 1.0, 2.0, 0.3, 0.1, 1, 0)
    >>> late = Step("sr", 2000.0, 3, 6000, 6000, 2000.0, 0.2, 9.0, 12.0, 0.9, 0.2, 1, 0)
    >>> capacity([ok, late, replace(ok, offered=3000.0)], "sr")
    1000.0
    """
    reached = 0.0
    for step in sorted((s for s in steps if s.steering == steering), key=lambda s: s.offered):
        if not step.within_goal:
            break
        reached = step.offered
    return reached


def over_hop_by_hop(steps: list[Step]) -> dict[str, Any]:
    """Source routing's capacity over hop-by-hop rules' against the goal. Where hop-by-hop held no rate, its
    capacity lies below the lowest rate it was offered, so the ratio is only known to be at least source routing's
    over that rate, and the goal is met only if that bound meets it.

    >>> from dataclasses import replace
    >>> ok = Step("source-routing", 1500.0, 3, 4500, 4500, 1500.0, 0.2, 1.0, 2.0, 0.3, 0.1, 1, 0)
    >>> late = Step("hop-by-hop", 500.0, 3, 1500, 1500, 500.0, 0.2, 9.0, 12.0, 0.9, 0.2, 1, 0)
    >>> over_hop_by_hop([ok, late])
    {'ratio_at_least': 3.0, 'goal': 3.0, 'met': True}
    >>> over_hop_by_hop([ok, replace(late, offered=1000.0)])
    {'ratio_at_least': 1.5, 'goal': 3.0, 'met': False}
    """
    sr, rules = capacity(steps, "source-routing"), capacity(steps, "hop-by-hop")
    if rules:
        return {"ratio": round(sr / rules, 2), "goal": GOAL_RATIO, "met": sr / rules >= GOAL_RATIO}
    lowest = min((s.offered for s in steps if s.steering == "hop-by-hop"), default=0.0)
    bound = sr / lowest if lowest else 0.0
    return {"ratio_at_least": round(bound, 2), "goal": GOAL_RATIO, "met": bound >= GOAL_RATIO}


def summarise(steps: list[Step], quick: bool, measured_on: dict[str, Any] | None = None,
              faucet: dict[str, Any] | str | None = None) -> dict[str, Any]:
    sr, rules = capacity(steps, "source-routing"), capacity(steps, "hop-by-hop")
    measured_peer = any(s.steering == PEER for s in steps)
    peer = capacity(steps, PEER) if measured_peer else None
    busy = [s for s in steps if s.generator_cpu > 0.9]
    return {
        **provenance(measured_on or machine(), "srfabric bench capacity"),
        "quick": quick,
        "topology": "fat-tree k=4 (20 emulated switches, 16 hosts)",
        "p99_goal_ms": P99_GOAL_MS,
        "capacity_flows_per_s": {"source_routing": sr, "hop_by_hop": rules, "os_ken_simple_switch_13": peer},
        "sr_over_rules": round(sr / rules, 2) if rules else None,
        "sr_over_os_ken": round(sr / peer, 1) if peer else None,
        "peer_rule": ("os-ken 1.4.0's simple_switch_13, unchanged, under os-ken's AppManager: its packet-outs are "
                      "followed hop by hop and a flow is set up when one leaves on its destination host's port "
                      "(bench/peer_following.py)") if measured_peer else "not measured (make bootstrap fetches it)",
        "generator_bound_steps": [(s.steering, s.offered) for s in busy],
        "faucet": faucet or "not measured (make bootstrap makes .venv-faucet)",
        "goals": {
            "capacity": {"flows_per_s": sr, "goal": GOAL_FLOWS_PER_S, "met": sr >= GOAL_FLOWS_PER_S},
            "over_hop_by_hop": over_hop_by_hop(steps),
        },
        "steps": [asdict(s) for s in steps],
        "median_p50_ms": {steering: statistics.median([s.p50_ms for s in steps if s.steering == steering] or [0])
                          for steering in (*STEERINGS, PEER)},
    }


def plot(steps: list[Step], path: Path) -> None:
    from srfabric_tools.lab.plot import pyplot, save

    plt = pyplot()
    figure, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    for steering, colour in zip((*STEERINGS, PEER), ("tab:blue", "tab:red", "tab:green"), strict=True):
        mine = [s for s in steps if s.steering == steering]
        if not mine:
            continue
        offered = [s.offered for s in mine]
        left.plot(offered, [s.achieved for s in mine], "o-", color=colour, label=steering)
        right.plot(offered, [s.p99_ms for s in mine], "o-", color=colour, label=f"{steering} p99")
        right.plot(offered, [s.p50_ms for s in mine], "x--", color=colour, alpha=0.6, label=f"{steering} median")
    top = max((s.offered for s in steps), default=1.0)
    left.plot([0, top], [0, top], ":", color="grey", label="all set up")
    left.set_xlabel("new flows offered per second")
    left.set_ylabel("new flows set up per second")
    left.set_title("Controller capacity, k=4 fat-tree of emulated switches")
    left.legend()
    right.axhline(P99_GOAL_MS, color="grey", linestyle=":", label=f"goal: p99 under {P99_GOAL_MS:g} ms")
    right.set_yscale("log")
    left.set_xscale("log")
    right.set_xscale("log")
    right.set_xlabel("new flows offered per second")
    right.set_ylabel("setup time, packet-in to packet-out (ms)")
    right.set_title("Setup time")
    right.legend(fontsize=7)
    save(figure, path, "Measured: the controller under test on one CPU, the emulated switches (real TCP OpenFlow "
                       "channels) on the other; os-ken's packet-outs followed hop by hop.")


def run_bench(quick: bool, out: str, say: Any = print) -> tuple[dict[str, Any], Path]:
    measured_on = machine()
    rates, seconds = (QUICK_RATES, 1.0) if quick else (FULL_RATES, STEP_SECONDS)
    peer_rates = QUICK_PEER_RATES if quick else PEER_RATES

    async def every() -> tuple[list[Step], dict[str, Any] | str | None]:
        from srfabric_tools.bench.capacity_faucet import measure_faucet

        steps: list[Step] = []
        for steering in STEERINGS:
            steps += await sweep(srfabric_contender(steering), rates, seconds, say=say)
        for peer in peer_contenders():  # the same generator and fat-tree, in the same run
            steps += await sweep(peer, peer_rates, seconds, say=say)
        pin(0, GENERATOR_CPU)
        faucet: dict[str, Any] | str | None
        try:  # a faucet that fails is reported; the sweeps before it stand
            faucet = await measure_faucet(fat_tree(4), QUICK_FAUCET_RATES if quick else FAUCET_RATES,
                                          1.0 if quick else FAUCET_SECONDS, CONTROLLER_CPU, say)
        except SrfabricError as error:
            faucet = f"failed: {error}"
        finally:
            with contextlib.suppress(OSError):
                os.sched_setaffinity(0, set(range(os.cpu_count() or 1)))
        return steps, faucet

    steps, faucet = uvloop.run(every())
    folder = run_folder(out, "capacity")
    write_runs(folder / "steps.csv", [asdict(s) for s in steps], measured_on)
    summary = summarise(steps, quick, measured_on, faucet)
    write_json(folder / "summary.json", summary)
    plot(steps, folder / "capacity.png")
    return summary, folder
