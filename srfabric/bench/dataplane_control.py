"""The controller half of ``bench dataplane``: reactive setup time (Fig. 6, Table 2), control bytes per
new flow (Fig. 7) extended to fat-trees (Fig. 9), and forwarding state against chain length (Fig. 3)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from srfabric.bench.control_model import MessageSizes, chain_state, fat_tree_overhead
from srfabric.bench.dataplane_setup import SetupRun, bytes_summary, measure_setup, setup_summary
from srfabric.lab.netlab import NetLab

STEERINGS = ("source-routing", "hop-by-hop")
HEADLINE_RATE = 1000.0  # new flows per second at which ``setup_ms`` is quoted; every rate is in ``setup_by_rate``
HELD_LATENCY_US = 0  # the CPU wake-up latency held for the headline runs (PM QoS, as cyclictest does)
FAT_TREE_KS = [4, 8, 12, 16, 24, 32, 40, 48]
SETUP_GOAL_MS = 0.3


def setup_conditions(rates: tuple[float, ...]) -> list[tuple[float, str, int | None]]:
    """(rate, steering, CPU latency held) of every setup run: each steering at each rate with idle states as
    they are, and at the headline rate also with the CPU latency held, each right after its unheld twin.

    >>> for condition in setup_conditions((300.0, 1000.0))[1:]:
    ...     print(condition)
    (300.0, 'hop-by-hop', None)
    (1000.0, 'source-routing', None)
    (1000.0, 'source-routing', 0)
    (1000.0, 'hop-by-hop', None)
    (1000.0, 'hop-by-hop', 0)
    """
    conditions: list[tuple[float, str, int | None]] = []
    for rate in rates:
        for steering in STEERINGS:
            conditions.append((rate, steering, None))
            if rate == HEADLINE_RATE:
                conditions.append((rate, steering, HELD_LATENCY_US))
    return conditions


def run_setups(conditions: list[tuple[float, str, int | None]], seconds: float, codec: str,
               say: Callable[[str], None], advance: Callable[[], None]) -> list[SetupRun]:
    """Every run of ``conditions`` (``setup_conditions``), each on a fabric of its own; about ``seconds`` of
    new flows per run."""
    runs = []
    for index, (rate, steering, held) in enumerate(conditions):
        # Short prefixes: interface names carry them and Linux allows 15 characters.
        with NetLab(f"s{os.getpid() % 10000}{index:02d}") as lab:
            runs.append(measure_setup(lab, steering, codec, max(100, int(rate * seconds)), rate, 50, say, held))
        advance()
    return runs


def _headline(runs: list[SetupRun], steering: str, held: bool) -> SetupRun:
    mine = [run for run in runs if run.steering == steering and (run.cpu_latency_us is not None) == held] or \
        [run for run in runs if run.steering == steering]
    return min(mine, key=lambda run: abs(run.rate - HEADLINE_RATE))


def control_summary(runs: list[SetupRun]) -> dict[str, Any]:
    """``setup_ms`` and the goal come from the headline runs with the CPU latency held;
    ``setup_default_idle_ms`` is the same run with idle states as they are."""
    sr, rules = _headline(runs, "source-routing", True), _headline(runs, "hop-by-hop", True)
    sr_idle = _headline(runs, "source-routing", False)
    setup, idle = setup_summary(sr), setup_summary(sr_idle)
    sr_bytes, rule_bytes = bytes_summary(sr), bytes_summary(rules)
    sizes = MessageSizes(sr_bytes["packet_in"], sr_bytes["flow_mod"], sr_bytes["packet_out"], rule_bytes["flow_mod"],
                         rule_bytes["packet_out"])
    return {
        "setup_ms": setup,
        "setup_default_idle_ms": idle,
        "setup_rules_ms": setup_summary(rules),
        "setup_by_rate": [{"steering": run.steering, **setup_summary(run)} for run in runs],
        "setup_goal": {"ms": setup["median"], "goal": SETUP_GOAL_MS, "met": setup["median"] < SETUP_GOAL_MS,
                       "at_rate_per_s": sr.rate, "cpu_latency_us": sr.cpu_latency_us, "paper_ms": 0.89,
                       "default_idle_ms": idle["median"], "default_idle_met": idle["median"] < SETUP_GOAL_MS},
        "control_bytes_per_flow": {"source_routing": sr_bytes, "hop_by_hop": rule_bytes},
        "fig9_fat_tree": fat_tree_overhead(sizes, FAT_TREE_KS),
        "fig3_chain_state": chain_state(list(range(1, 11))),
    }


def plot_control(summary: dict[str, Any], path: Path) -> None:
    from srfabric.lab.plot import pyplot, save

    plt = pyplot()
    figure, axes = plt.subplots(1, 4, figsize=(19, 4.5))
    by_rate = summary["setup_by_rate"]
    for steering, colour in zip(STEERINGS, ("tab:blue", "tab:red"), strict=True):
        rows = [r for r in by_rate if r["steering"] == steering and r["cpu_latency_us"] is None]
        rates = [r["rate_per_s"] for r in rows]
        axes[0].plot(rates, [r["median"] for r in rows], "o-", color=colour, label=f"{steering} median")
        axes[0].plot(rates, [r["p99"] for r in rows], "x--", color=colour, alpha=0.6, label=f"{steering} p99")
        held = [r for r in by_rate if r["steering"] == steering and r["cpu_latency_us"] is not None]
        axes[0].plot([r["rate_per_s"] for r in held], [r["median"] for r in held], "*", color=colour, markersize=11,
                     label=f"{steering} median, CPU latency held")
    axes[0].axhline(0.89, color="grey", linestyle=":", label="paper (POX), 0.89 ms")
    axes[0].set_xscale("log")
    axes[0].set_yscale("log")
    axes[0].set_xlabel("new flows per second")
    axes[0].set_ylabel("setup time (ms)")
    axes[0].set_title("Fig. 6: setup time per flow")
    axes[0].legend(fontsize=7)
    parts = ("header_ms", "controller_ms", "rtt_ms", "switch_ms")
    labels = ("header", "controller", "channel RTT", "switch")
    ours, idle = summary["setup_ms"], summary["setup_default_idle_ms"]
    paper = {"header_ms": 0.25, "controller_ms": 0.24, "rtt_ms": 0.1, "switch_ms": 0.3}
    for column, values in enumerate((ours, idle, paper)):
        bottom = 0.0
        for part, label, colour in zip(parts, labels, ("tab:green", "tab:blue", "tab:orange", "tab:purple"),
                                       strict=True):
            value = max(values[part], 0.0)
            axes[1].bar(column, value, bottom=bottom, color=colour, label=label if column == 0 else None)
            bottom += value
    axes[1].axhline(SETUP_GOAL_MS, color="grey", linestyle=":", label=f"goal, {SETUP_GOAL_MS} ms")
    axes[1].set_xticks([0, 1, 2], [f"srfabric, CPU latency\nheld at {ours['cpu_latency_us']} us",
                                   "srfabric, idle\nstates as they are", "paper (POX)"])
    axes[1].set_ylabel("ms")
    axes[1].set_title(f"Table 2: setup time breakdown ({ours['rate_per_s']:g} flows/s)")
    axes[1].legend(fontsize=7)
    rows = summary["fig9_fat_tree"]
    ks = [r["k"] for r in rows]
    axes[2].plot(ks, [r["sr_total_mbps"] for r in rows], "o-", label="source routing")
    axes[2].plot(ks, [r["rules_total_mbps"] for r in rows], "s-", label="rule-based")
    axes[2].set_yscale("log")
    axes[2].set_xlabel("fat-tree k (ports per switch)")
    axes[2].set_ylabel("control traffic, Mb/s (1 new flow/s per host)")
    axes[2].set_title("Fig. 9: control overhead")
    axes[2].legend()
    state = summary["fig3_chain_state"]
    n = [r["functions"] for r in state]
    for key, label in (("sr_mac_nibble", "SR mac-nibble"), ("sr_mac_vlan_mpls", "SR mac-vlan-mpls"),
                       ("hop_by_hop", "rule-based")):
        axes[3].plot(n, [r[key] for r in state], "o-", label=label)
    axes[3].set_xlabel("service functions in the chain")
    axes[3].set_ylabel("flow entries for one chain")
    axes[3].set_title("Fig. 3: forwarding state")
    axes[3].legend()
    save(figure, path, "Setup time and control bytes measured on Open vSwitch (userspace) with the srfabric "
                       "controller; Fig. 9 scales the measured message sizes; Fig. 3 counts compiled entries.")
