"""``srfabric bench capacity-ovs``'s summary, figure and run folder (the sweeps are ``capacity_ovs``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from srfabric_tools.bench.capacity_faucet import faucet_version
from srfabric_tools.bench.capacity_ovs import (
    CPU_LATENCY_US,
    GOAL_RATIO,
    JOBS,
    MIN_FLOWS,
    P99_GOAL_MS,
    PEER,
    QUICK_MIN_FLOWS,
    QUICK_RATES,
    RATES,
    SATURATED_P99_MS,
    STEERINGS,
    TOPOLOGY,
    OvsStep,
    capacity,
    run_steps,
)
from srfabric_tools.bench.capacity_ovs_faucet import FAUCET
from srfabric_tools.bench.output import machine, provenance, run_folder, write_json, write_runs
from srfabric_tools.lab.stats import quartiles


def ratio(steps: list[OvsStep], over: str, under: str, repeat: int) -> tuple[float, bool]:
    """``over``'s capacity over ``under``'s in one repetition, unrounded, and whether it is only a lower bound
    (``under`` held no rate, so its capacity lies below the lowest it was offered).

    >>> a = OvsStep(0, "a", 100.0, 1, 100, 100, 1.0, 2.0, 3.0)
    >>> b = OvsStep(0, "b", 25.0, 1, 25, 25, 1.0, 2.0, 3.0)
    >>> ratio([a, b], "a", "b", 0)
    (4.0, False)
    >>> ratio([a, OvsStep(0, "b", 25.0, 1, 25, 25, 1.0, 9.0, 9.0)], "a", "b", 0)
    (4.0, True)
    """
    top, bottom = capacity(steps, over, repeat), capacity(steps, under, repeat)
    if bottom:
        return top / bottom, False
    lowest = min((s.offered for s in steps if s.contender == under and s.repeat == repeat), default=0.0)
    return (top / lowest if lowest else 0.0), True


def spread(values: list[float]) -> dict[str, Any]:
    low, middle, high = quartiles(values) if values else (0.0, 0.0, 0.0)
    return {"median": middle, "lower_quartile": low, "upper_quartile": high, "runs": values}


def summarise(steps: list[OvsStep], quick: bool, measured_on: dict[str, Any], seconds: float,
              job: str = "fresh", command: str = "srfabric bench capacity-ovs", goal: str = "over_os_ken_on_ovs"
              ) -> dict[str, Any]:
    repeats = sorted({s.repeat for s in steps})
    names = [name for name in (*STEERINGS, PEER, FAUCET) if any(s.contender == name for s in steps)]
    capacities = {name: spread([capacity(steps, name, r) for r in repeats]) for name in names}
    loose = {name: spread([capacity(steps, name, r, SATURATED_P99_MS) for r in repeats]) for name in names}
    ratios: dict[str, Any] = {}
    for over, under in (("source-routing", PEER), ("hop-by-hop", PEER), ("source-routing", "hop-by-hop"),
                        ("source-routing", FAUCET)):
        if over in names and under in names:
            each = [ratio(steps, over, under, r) for r in repeats]
            ratios[f"{over} over {under}"] = {**spread([value for value, _ in each]),
                                              "lower_bounds": sum(bound for _, bound in each)}
    goals: dict[str, Any] = {}
    peer = ratios.get(f"source-routing over {PEER}")
    if peer is not None and job == "fresh":  # the goal's job: every flow needs both controllers
        goals[goal] = {"ratio": peer["median"], "lower_quartile": peer["lower_quartile"], "goal": GOAL_RATIO,
                      "runs": len(repeats), "met": peer["lower_quartile"] >= GOAL_RATIO and len(repeats) >= 5}
    return {
        **provenance(measured_on, command),
        "quick": quick,
        "topology": TOPOLOGY,
        "switches": "real Open vSwitch: every flow-mod installed, later packets forwarded by it",
        "job": job,
        "frames": f"one UDP frame per new flow, random host pair; {JOBS[job]}",
        "setup_time": "kernel stamps: in on the source host's switch port -> out on the destination host's port",
        "p99_goal_ms": P99_GOAL_MS,
        "rates_offered": list(QUICK_RATES if quick else RATES),
        "step_seconds": seconds,
        "step_flows_at_least": QUICK_MIN_FLOWS if quick else MIN_FLOWS,
        "cpu_latency_us": CPU_LATENCY_US,
        "repetitions": len(repeats),
        "capacity_flows_per_s": capacities,
        f"capacity_flows_per_s_p99_under_{SATURATED_P99_MS:g}_ms": loose,
        "ratios": ratios,
        "peer": (f"{PEER}: os-ken 1.4.0's application, unchanged, under os-ken's AppManager in its own process"
                 if PEER in names else "not measured (make bootstrap fetches os-ken's simple_switch_13)"),
        "faucet": (f"{FAUCET} {faucet_version()}: its real pipeline, the tree's links as its stack, every host "
                   "learned before the steps; its eth_src table's miss goes on to eth_dst, so a frame to a learned "
                   "destination is not held for the controller, which learns a new source from a packet-in beside "
                   "it (frames its pipeline drops count as not across)"
                   if FAUCET in names else "not measured (make bootstrap makes .venv-faucet)"),
        "goals": goals,
        "steps": [s.row() for s in steps],
    }


def plot(steps: list[OvsStep], path: Path, title: str = "Real Open vSwitch, tree depth 3 fanout 2",
         note: str = "Measured: kernel timestamps on the hosts' switch ports; every contender on a fresh fabric of "
                     "the same bridges, offered the same rates and frames.") -> None:
    from srfabric_tools.lab.plot import pyplot, save

    plt = pyplot()
    figure, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    for name, colour in zip((*STEERINGS, PEER, FAUCET), ("tab:blue", "tab:red", "tab:green", "tab:purple"),
                            strict=True):
        for repeat in sorted({s.repeat for s in steps}):
            mine = sorted((s for s in steps if s.contender == name and s.repeat == repeat), key=lambda s: s.offered)
            if not mine:
                continue
            label = name if repeat == 0 else None
            offered = [s.offered for s in mine]
            left.plot(offered, [s.set_up / s.sent for s in mine], "o-", color=colour, alpha=0.6, label=label)
            right.plot(offered, [s.p99_ms for s in mine], "o-", color=colour, alpha=0.6, label=label)
    left.set_xlabel("new flows offered per second")
    left.set_ylabel("share of new flows across the fabric")
    left.set_title(title)
    left.set_xscale("log")
    left.legend(fontsize=8)
    right.axhline(P99_GOAL_MS, color="grey", linestyle=":", label=f"goal: p99 under {P99_GOAL_MS:g} ms")
    right.set_xscale("log")
    right.set_yscale("log")
    right.set_xlabel("new flows offered per second")
    right.set_ylabel("p99 setup across the fabric (ms)")
    right.set_title("Setup time, one line per repetition")
    right.legend(fontsize=8)
    save(figure, path, note)


def run_bench(quick: bool, out: str, say: Callable[[str], None] = print, job: str = "fresh",
              repeats: int | None = None) -> tuple[dict[str, Any], Path]:
    from srfabric_tools.bench.capacity_ovs import QUICK_STEP_SECONDS, STEP_SECONDS

    measured_on = machine()
    steps = run_steps(quick, say, job, repeats)
    folder = run_folder(out, "capacity-ovs" if job == "fresh" else "capacity-ovs-learned")
    write_runs(folder / "steps.csv", [s.row() for s in steps], measured_on)
    summary = summarise(steps, quick, measured_on, QUICK_STEP_SECONDS if quick else STEP_SECONDS, job)
    write_json(folder / "summary.json", summary)
    plot(steps, folder / "capacity-ovs.png")
    return summary, folder
