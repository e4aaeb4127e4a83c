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
FAT_TREE_KS = [4, 8, 12, 16, 24, 32, 40, 48]
SETUP_GOAL_MS = 0.3


def run_setups(rates: tuple[float, ...], seconds: float, codec: str,
               say: Callable[[str], None], advance: Callable[[], None]) -> list[SetupRun]:
    """Every steering at every rate, each on a fabric of its own; about ``seconds`` of new flows per run."""
    runs = []
    for rate_index, rate in enumerate(rates):
        for index, steering in enumerate(STEERINGS):
            # Short prefixes: interface names carry them and Linux allows 15 characters.
            with NetLab(f"s{os.getpid() % 10000}{rate_index}{index}") as lab:
                runs.append(measure_setup(lab, steering, codec, max(100, int(rate * seconds)), rate, 50, say))
            advance()
    return runs


def _headline(runs: list[SetupRun], steering: str) -> SetupRun:
    mine = [run for run in runs if run.steering == steering]
    return min(mine, key=lambda run: abs(run.rate - HEADLINE_RATE))


def control_summary(runs: list[SetupRun]) -> dict[str, Any]:
    sr, rules = _headline(runs, "source-routing"), _headline(runs, "hop-by-hop")
    setup = setup_summary(sr)
    sr_bytes, rule_bytes = bytes_summary(sr), bytes_summary(rules)
    sizes = MessageSizes(sr_bytes["packet_in"], sr_bytes["flow_mod"], sr_bytes["packet_out"], rule_bytes["flow_mod"],
                         rule_bytes["packet_out"])
    return {
        "setup_ms": setup,
        "setup_rules_ms": setup_summary(rules),
        "setup_by_rate": [{"steering": run.steering, **setup_summary(run)} for run in runs],
        "setup_goal": {"ms": setup["median"], "goal": SETUP_GOAL_MS, "met": setup["median"] < SETUP_GOAL_MS,
                       "at_rate_per_s": sr.rate, "paper_ms": 0.89},
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
        rows = [r for r in by_rate if r["steering"] == steering]
        rates = [r["rate_per_s"] for r in rows]
        axes[0].plot(rates, [r["median"] for r in rows], "o-", color=colour, label=f"{steering} median")
        axes[0].plot(rates, [r["p99"] for r in rows], "x--", color=colour, alpha=0.6, label=f"{steering} p99")
    axes[0].axhline(0.89, color="grey", linestyle=":", label="paper (POX), 0.89 ms")
    axes[0].set_xscale("log")
    axes[0].set_yscale("log")
    axes[0].set_xlabel("new flows per second")
    axes[0].set_ylabel("setup time (ms)")
    axes[0].set_title("Fig. 6: setup time per flow")
    axes[0].legend(fontsize=7)
    parts = ("header_ms", "controller_ms", "rtt_ms", "switch_ms")
    labels = ("header", "controller", "channel RTT", "switch")
    ours = summary["setup_ms"]
    paper = {"header_ms": 0.25, "controller_ms": 0.24, "rtt_ms": 0.1, "switch_ms": 0.3}
    for column, values in enumerate((ours, paper)):
        bottom = 0.0
        for part, label, colour in zip(parts, labels, ("tab:green", "tab:blue", "tab:orange", "tab:purple"),
                                       strict=True):
            value = max(values[part], 0.0)
            axes[1].bar(column, value, bottom=bottom, color=colour, label=label if column == 0 else None)
            bottom += value
    axes[1].set_xticks([0, 1], [f"srfabric\n({ours['rate_per_s']:g} flows/s)", "paper"])
    axes[1].set_ylabel("ms")
    axes[1].set_title("Table 2: setup time breakdown")
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
