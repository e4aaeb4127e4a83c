"""The controller half of ``bench dataplane``: reactive setup time (Fig. 6, Table 2), control bytes per
new flow (Fig. 7) extended to fat-trees (Fig. 9), and forwarding state against chain length (Fig. 3)."""

from __future__ import annotations

import os
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from srfabric.model.topo import TopoSpec, fat_tree
from srfabric_tools.bench.control_model import MessageSizes, chain_state, fat_tree_overhead
from srfabric_tools.bench.dataplane_setup import SetupRun, bytes_summary, measure_setup, setup_summary
from srfabric_tools.lab.fabric_topos import line
from srfabric_tools.lab.netlab import NetLab

STEERINGS = ("source-routing", "hop-by-hop")
HEADLINE_RATE = 1000.0  # new flows per second at which ``setup_ms`` is quoted; every rate is in ``setup_by_rate``
HELD_LATENCY_US = 0  # the CPU wake-up latency held for the headline runs (PM QoS, as cyclictest does)
FAT_TREE_KS = [4, 8, 12, 16, 24, 32, 40, 48]
SETUP_GOAL_MS = 0.3
FABRIC = "fat-tree k=4"
LINE = "line-3"  # three switches, one host pair: the setup on a fabric small enough that one OVS process idles
FIG9_SECONDS = 5.0  # of new flows at 1 per host per second, on each measured fat-tree


@dataclass(frozen=True)
class SetupCondition:
    rate: float
    steering: str
    held: int | None  # the CPU wake-up latency held, us; None: idle states as they are
    topology: str = FABRIC
    seconds: float | None = None  # of new flows; None: the plan's


def topology_spec(name: str) -> TopoSpec:
    """``fat-tree k=N`` or ``line-3``."""
    if name == LINE:
        return line(3, 0)
    return fat_tree(int(name.removeprefix("fat-tree k=")))


def setup_conditions(rates: tuple[float, ...], fig9_ks: tuple[int, ...] = ()) -> list[SetupCondition]:
    """Every setup run: each steering at each rate on the k=4 fat-tree with idle states as they are, at the
    headline rate also with the CPU latency held (right after its unheld twin) and, for source routing, on a
    3-switch line; then, for Fig. 9, each steering on each fat-tree of ``fig9_ks`` beyond k=4 at one new flow
    per host per second (k=4's bytes come from the headline runs).

    >>> for c in setup_conditions((300.0, 1000.0), (4, 6))[1:]:
    ...     print(c.rate, c.steering, c.held, c.topology, c.seconds)
    300.0 hop-by-hop None fat-tree k=4 None
    1000.0 source-routing None fat-tree k=4 None
    1000.0 source-routing 0 fat-tree k=4 None
    1000.0 source-routing 0 line-3 None
    1000.0 hop-by-hop None fat-tree k=4 None
    1000.0 hop-by-hop 0 fat-tree k=4 None
    54.0 source-routing None fat-tree k=6 5.0
    54.0 hop-by-hop None fat-tree k=6 5.0
    """
    conditions: list[SetupCondition] = []
    for rate in rates:
        for steering in STEERINGS:
            conditions.append(SetupCondition(rate, steering, None))
            if rate == HEADLINE_RATE:
                conditions.append(SetupCondition(rate, steering, HELD_LATENCY_US))
                if steering == "source-routing":
                    conditions.append(SetupCondition(rate, steering, HELD_LATENCY_US, LINE))
    for k in fig9_ks:
        if k != 4:
            for steering in STEERINGS:
                conditions.append(SetupCondition(float(k**3 // 4), steering, None, f"fat-tree k={k}", FIG9_SECONDS))
    return conditions


def run_setups(conditions: list[SetupCondition], seconds: float, codec: str,
               say: Callable[[str], None], advance: Callable[[], None]) -> list[SetupRun]:
    """Every run of ``conditions`` (``setup_conditions``), each on a fabric of its own; about ``seconds`` of
    new flows per run unless the condition says."""
    runs = []
    for index, condition in enumerate(conditions):
        flows = max(100, int(condition.rate * (condition.seconds or seconds)))
        # Short prefixes: interface names carry them and Linux allows 15 characters.
        with NetLab(f"s{os.getpid() % 10000}{index:02d}") as lab:
            runs.append(measure_setup(lab, condition.steering, codec, flows, condition.rate, 50, say,
                                      condition.held, topology_spec(condition.topology), condition.topology))
        advance()
    return runs


def _headline(runs: list[SetupRun], steering: str, held: bool, topology: str = FABRIC) -> SetupRun:
    mine = [run for run in runs if run.steering == steering and run.topology == topology]
    mine = [run for run in mine if (run.cpu_latency_us is not None) == held] or mine
    return min(mine, key=lambda run: abs(run.rate - HEADLINE_RATE))


def fig9_measured(runs: list[SetupRun], sizes: MessageSizes) -> list[dict[str, Any]]:
    """Fig. 9 measured: control traffic of each emulated fat-tree when every host starts one new flow per
    second (the mean bytes its flows put on the channel, times the hosts), beside the model from ``sizes``
    for the same k. k=4 comes from its headline runs (the same random pairs; bytes do not depend on rate)."""
    rows = []
    for topology in sorted({run.topology for run in runs if run.topology.startswith("fat-tree")},
                           key=lambda name: int(name.removeprefix("fat-tree k="))):
        k = int(topology.removeprefix("fat-tree k="))
        measured: dict[str, float] = {}
        for steering, key in (("source-routing", "sr"), ("hop-by-hop", "rules")):
            run = _headline(runs, steering, False, topology)
            if run.timings:
                measured[key] = statistics.fmean(t.bytes_up + t.bytes_down for t in run.timings)
        if len(measured) < 2:
            continue
        hosts = k**3 // 4
        model = fat_tree_overhead(sizes, [k])[0]
        row: dict[str, Any] = {"k": k, "hosts": hosts, "switches": 5 * k * k // 4}
        for key in ("sr", "rules"):
            mbps = measured[key] * hosts * 8 / 1e6
            row[f"{key}_bytes_per_flow"] = round(measured[key], 1)
            row[f"{key}_total_mbps"] = round(mbps, 4)
            row[f"{key}_model_mbps"] = model[f"{key}_total_mbps"]
            row[f"{key}_model_error"] = round(model[f"{key}_total_mbps"] / mbps - 1, 4)
        row["rules_over_sr"] = round(measured["rules"] / measured["sr"], 2)
        rows.append(row)
    return rows


def control_summary(runs: list[SetupRun]) -> dict[str, Any]:
    """``setup_ms`` and the goal come from the headline runs on the k=4 fat-tree with the CPU latency held;
    ``setup_default_idle_ms`` is the same run with idle states as they are."""
    sr, rules = _headline(runs, "source-routing", True), _headline(runs, "hop-by-hop", True)
    sr_idle = _headline(runs, "source-routing", False)
    setup, idle = setup_summary(sr), setup_summary(sr_idle)
    sr_bytes, rule_bytes = bytes_summary(sr), bytes_summary(rules)
    sizes = MessageSizes(sr_bytes["packet_in"], sr_bytes["flow_mod"], sr_bytes["packet_out"], rule_bytes["flow_mod"],
                         rule_bytes["packet_out"])
    lines = [run for run in runs if run.topology == LINE]
    controller_ms = round(setup["header_ms"] + setup["controller_ms"], 4)
    return {
        "setup_ms": setup,
        "setup_default_idle_ms": idle,
        "setup_rules_ms": setup_summary(rules),
        "setup_line_ms": setup_summary(lines[0]) if lines else None,
        "setup_by_rate": [{"steering": run.steering, **setup_summary(run)} for run in runs
                          if run.topology == FABRIC],
        "setup_goal": {"ms": setup["median"], "goal": SETUP_GOAL_MS, "met": setup["median"] < SETUP_GOAL_MS,
                       "at_rate_per_s": sr.rate, "cpu_latency_us": sr.cpu_latency_us, "paper_ms": 0.89,
                       "topology": sr.topology, "default_idle_ms": idle["median"],
                       "default_idle_met": idle["median"] < SETUP_GOAL_MS,
                       "controller_share_ms": controller_ms,
                       "line_ms": setup_summary(lines[0])["median"] if lines else None},
        "control_bytes_per_flow": {"source_routing": sr_bytes, "hop_by_hop": rule_bytes},
        "fig9_measured": fig9_measured(runs, sizes),
        "fig9_fat_tree": fat_tree_overhead(sizes, FAT_TREE_KS),
        "fig3_chain_state": chain_state(list(range(1, 11))),
    }


def plot_control(summary: dict[str, Any], path: Path) -> None:
    from srfabric_tools.lab.plot import pyplot, save

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
    axes[0].set_title("Fig. 6: setup time per flow, k=4 fat-tree")
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
    _plot_overhead_and_state(axes[2], axes[3], summary)
    save(figure, path, "Setup time and control bytes measured on Open vSwitch (userspace, one process for every "
                       "bridge) with the srfabric controller, new flows between random host pairs; Fig. 9 measured "
                       "on k = 4, 6, 8, modelled beyond; Fig. 3 counts compiled entries.")


def _plot_overhead_and_state(overhead: Any, state_axes: Any, summary: dict[str, Any]) -> None:
    """Fig. 9's control overhead (modelled and measured) and Fig. 3's entries for one chain."""
    rows = summary["fig9_fat_tree"]
    ks = [r["k"] for r in rows]
    overhead.plot(ks, [r["sr_total_mbps"] for r in rows], "o-", alpha=0.5, label="source routing, modelled")
    overhead.plot(ks, [r["rules_total_mbps"] for r in rows], "s-", alpha=0.5, label="rule-based, modelled")
    measured = summary.get("fig9_measured", [])
    overhead.plot([r["k"] for r in measured], [r["sr_total_mbps"] for r in measured], "*", color="tab:blue",
                 markersize=12, label="source routing, measured")
    overhead.plot([r["k"] for r in measured], [r["rules_total_mbps"] for r in measured], "*", color="tab:orange",
                 markersize=12, label="rule-based, measured")
    overhead.set_yscale("log")
    overhead.set_xlabel("fat-tree k (ports per switch)")
    overhead.set_ylabel("control traffic, Mb/s (1 new flow/s per host)")
    overhead.set_title("Fig. 9: control overhead")
    overhead.legend()
    state = summary["fig3_chain_state"]
    n = [r["functions"] for r in state]
    for key, label in (("sr_mac_nibble", "SR mac-nibble"), ("sr_mac_vlan_mpls", "SR mac-vlan-mpls"),
                       ("hop_by_hop", "rule-based")):
        state_axes.plot(n, [r[key] for r in state], "o-", label=label)
    state_axes.set_xlabel("service functions in the chain")
    state_axes.set_ylabel("flow entries for one chain")
    state_axes.set_title("Fig. 3: forwarding state")
    state_axes.legend()
