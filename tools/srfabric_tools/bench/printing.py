"""How ``srfabric bench`` prints each benchmark's summary as tables (``--json`` prints it whole instead)."""

from __future__ import annotations

import json
from statistics import median
from typing import Any


def print_summary(summary: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    console.print(f"machine: {summary['machine']['cpus']} cores; paper: CPLEX, 16 cores (4c, 4d), 2 cores (4e, 4f)")
    table = Table(title="4c: scheduled flows relative to S/UR")
    for column in ("method", "mean", "100%", ">=98%", "min", "paper mean", "paper 100%"):
        table.add_column(column)
    paper = summary["paper"]
    for variant, q in summary["quality_vs_sur"].items():
        table.add_row(variant, f"{q['mean']:.1%}", f"{q['share_full']:.0%}", f"{q['share_98']:.0%}", f"{q['min']:.1%}",
                      f"{paper['quality_mean'].get(variant, paper['incremental_quality']):.0%}"
                      if variant in ("spr", "sfr", "incremental") else "-",
                      f"{paper['quality_full'][variant]:.0%}" if variant in paper["quality_full"] else "-")
    console.print(table)
    for key, title in (("runtime_vs_flows", "4d: runtime vs flows"), ("runtime_vs_slots", "4e: runtime vs slots"),
                       ("runtime_vs_links", "4f: runtime vs links"), ("sur_forms", "S/UR formulations, whole ILP")):
        rows = summary[key]
        if not rows:
            continue
        axis = next(k for k in rows[0] if k not in ("variant", "scheduled", "seconds", "per_flow_ms", "status"))
        table = Table(title=title)
        variants = list(dict.fromkeys(r["variant"] for r in rows))
        table.add_column(axis)
        for variant in variants:
            table.add_column(f"{variant} s (flows)")
        for value in dict.fromkeys(r[axis] for r in rows):
            cells = []
            for variant in variants:
                hit = [r for r in rows if r[axis] == value and r["variant"] == variant]
                cells.append(f"{hit[0]['seconds']:.4f} ({hit[0]['scheduled']})" if hit else "-")
            table.add_row(str(value), *cells)
        console.print(table)
    for name, goal in summary["goals"].items():
        console.print(f"goal {name}: {'met' if goal['met'] else 'NOT met'} {goal}")


def print_tsnkit(summary: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    table = Table(title="srfabric against tsnkit: streams scheduled (mean share), instances fully scheduled, "
                        "median solve s, schedules clean in tsnkit's simulator and on deadlines")
    for column in ("size", "method", "instances", "scheduled", "full", "median solve s", "clean / with a schedule"):
        table.add_column(column)
    for size, methods in summary["by_size"].items():
        for method, row in methods.items():
            table.add_row(size, method, str(row["instances"]), f"{row['scheduled_share']:.1%}",
                          str(row["fully_scheduled"]), f"{row['median_solve_s']:.4f}",
                          f"{row['clean']} / {row['with_schedule']}")
    console.print(table)
    for name, goal in summary["goals"].items():
        console.print(f"goal {name}: {goal}")


def steps_table(title: str, columns: tuple[str, ...], rows: list[tuple[str, ...]]) -> Any:
    """A rich table of a benchmark's steps, one row each."""
    from rich.table import Table

    table = Table(title=title)
    for column in columns:
        table.add_column(column)
    for row in rows:
        table.add_row(*row)
    return table


def print_capacity(summary: dict[str, Any]) -> None:
    from rich.console import Console

    console = Console()
    console.print(steps_table(
        f"controller capacity, {summary['topology']}: setup = packet-in written to packet-out read",
        ("steering", "offered/s", "set up/s", "lost", "median ms", "p99 ms", "max ms", "controller CPU",
         "generator CPU", "flow-mods/flow"),
        [(row["steering"], f"{row['offered']:,.0f}", f"{row['achieved']:,.0f}", str(row["sent"] - row["set_up"]),
          f"{row['p50_ms']:.3f}", f"{row['p99_ms']:.3f}", f"{row['max_ms']:.1f}", f"{row['controller_cpu']:.0%}",
          f"{row['generator_cpu']:.0%}", f"{row['flow_mods_per_flow']:.2f}") for row in summary["steps"]]))
    for name, goal in summary["goals"].items():
        console.print(f"goal {name}: {'met' if goal['met'] else 'NOT met'} {goal}")


def print_capacity_ovs(summary: dict[str, Any]) -> None:
    from rich.console import Console

    console = Console()
    console.print(steps_table(
        f"new flows on {summary['switches'].split(':')[0]}, {summary['topology']}: setup across the fabric",
        ("run", "contender", "offered/s", "across", "median ms", "p99 ms", "max ms", "controller CPU", "switches CPU",
         "within goal"),
        [(str(row["repeat"]), row["contender"], f"{row['offered']:,.0f}", f"{row['set_up']}/{row['sent']}",
          f"{row['p50_ms']:.3f}", f"{row['p99_ms']:.3f}", f"{row['max_ms']:.2f}", f"{row['controller_cpu']:.0%}",
          f"{row['switches_cpu']:.0%}", "yes" if row["within_goal"] else "no") for row in summary["steps"]]))
    for name, figures in summary["capacity_flows_per_s"].items():
        console.print(f"capacity {name}: median {figures['median']:g}/s (quartiles {figures['lower_quartile']:g}-"
                      f"{figures['upper_quartile']:g}) over {figures['runs']}")
    for name, figures in summary["ratios"].items():
        console.print(f"{name}: median {figures['median']:.3g} (quartiles {figures['lower_quartile']:.3g}-"
                      f"{figures['upper_quartile']:.3g}), {figures['lower_bounds']} lower bounds")


def print_scale(summary: dict[str, Any]) -> None:
    from rich.console import Console

    console = Console()
    if "two_instances_cpu_per_flow_ratio" in summary:
        two = summary["two_instances"]
        console.print(f"two instances sharing the fabric: CPU per new flow {two['cpu_per_flow_ms_two']['median']:.3f} "
                      f"ms against {two['cpu_per_flow_ms_one']['median']:.3f} ms alone (ratio "
                      f"{summary['two_instances_cpu_per_flow_ratio']['median']:.3f}); edges taken "
                      f"{summary['takeover_s']['median'] * 1e3:.0f} ms after a SIGKILL (median); "
                      f"{two['frames_lost_not_owned']} of {two['frames_sent_not_owned']} frames lost elsewhere")
    if not summary["runs"]:
        return
    console.print(steps_table(
        f"how the controller's cost grows ({summary['codec']}, emulated switches with flow tables)",
        ("k", "switches", "chains", "cold start s", "add ms", "update ms", "remove ms", "RSS MiB", "entries by role"),
        [(str(r["k"]), str(r["switches"]), str(r["chains"]), f"{r['cold_start_s']:.2f}",
          f"{median(r['add_ms']):.1f}", f"{median(r['update_ms']):.1f}", f"{median(r['remove_ms']):.1f}",
          f"{r['rss_mib']:.0f}", ", ".join(f"{role} {e['max']}" for role, e in r["entries_by_role"].items()))
         for r in summary["runs"]]))
    for metric, slope in summary["growth_exponent_by_switches"].items():
        console.print(f"{metric} grows as switches^{slope:.2f}" if slope is not None else f"{metric}: one size only")


def print_datapaths(summary: dict[str, Any]) -> None:
    print(f"where: {summary['where']}; kernel datapath: {summary['kernel_datapath']}")
    print(f"{summary['frame_bytes']} B frames to {summary['destinations']:,} destinations, "
          f"{summary['routes']:,} routes")
    if "rates_refused" in summary:
        print(f"  no rates: {summary['rates_refused']}")
    for switch, pps in summary["rate_pps"].items():
        print(f"  {switch:18} {pps:>12,} packets/s (median)")
    for name, value in summary["ratios"].items():
        print(f"  {name}: {value:.3g}")


def print_dataplane(summary: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    paper = summary["paper"]
    console.print(f"machine: {summary['machine']['cpus']} cores, kernel {summary['machine']['kernel']}; "
                  f"timer floor (empty program, single run) {summary['floor_ns']} ns")
    table = Table(title="cost per packet, ns (paper Table 1: SourceRouter element "
                        f"{paper['table1_cycles_per_packet']['source_router_element']} of "
                        f"{paper['table1_cycles_per_packet']['click_total']} cycles)")
    for column in ("program", "ns per packet", "minus the empty program"):
        table.add_column(column)
    for row in summary["costs"]:
        table.add_row(row["program"], f"{row['ns_per_packet']:.1f}", f"{row['net_ns_per_packet']:.1f}")
    console.print(table)
    table = Table(title=f"forwarding rate, delivered packets/s (paper: SR > {paper['sr_faster_than_lpm_380k']}x LPM)")
    for column in ("switch", "mode", "frame bytes", "destinations", "offered pps", "delivered pps"):
        table.add_column(column)
    for row in summary["rates"]:
        table.add_row(row["switch"], row["mode"], str(row["frame_bytes"]), f"{row['destinations']:,}",
                      f"{row['offered_pps']:,}", f"{row['delivered_pps']:,}")
    console.print(table)
    if "rates_refused" in summary:
        console.print(f"no rates: {summary['rates_refused']}")
    print_control(console, summary)
    for name, goal in summary["goals"].items():
        console.print(f"goal {name}: {'met' if goal['met'] else 'NOT met'} {goal}")


def print_control(console: Any, summary: dict[str, Any]) -> None:
    from rich.table import Table

    table = Table(title="reactive flow setup on the k=4 fat-tree, random pairs, ms (paper Table 2, POX: header "
                        "0.25, POX + kernel 0.24, RTT 0.1, switch 0.3, total 0.89)")
    for column in ("steering", "flows/s", "CPU latency", "flows", "lost", "median", "p99", "up", "header",
                   "controller", "down", "channel RTT", "searched", "searched median"):
        table.add_column(column)
    for row in summary["setup_by_rate"]:
        held = "idle states" if row["cpu_latency_us"] is None else f"held {row['cpu_latency_us']} us"
        table.add_row(row["steering"], f"{row['rate_per_s']:g}", held, str(row["flows"]), str(row["lost"]),
                      f"{row['median']:.3f}", f"{row['p99']:.3f}", f"{row['up_ms']:.3f}", f"{row['header_ms']:.3f}",
                      f"{row['controller_ms']:.3f}", f"{row['down_ms']:.3f}", f"{row['rtt_ms']:.3f}",
                      str(row["searched_flows"]), f"{row['searched_median']:.3f}")
    console.print(table)
    line = summary.get("setup_line_ms")
    if line:
        console.print(f"the same on a 3-switch line (one pair, CPU latency held): median {line['median']:.3f} ms, "
                      f"up {line['up_ms']:.3f}, down {line['down_ms']:.3f}")
    table = Table(title="control bytes per new flow (measured on the channel)")
    for column in ("steering", "uplink", "downlink", "switches told", "packet-in", "flow-mod", "packet-out"):
        table.add_column(column)
    for name, row in summary["control_bytes_per_flow"].items():
        table.add_row(name, str(row["up"]), str(row["down"]), str(row["switches"]), str(row["packet_in"]),
                      str(row["flow_mod"]), str(row["packet_out"]))
    console.print(table)
    table = Table(title="Fig. 9 measured: emulated fat-trees, 1 new flow/s per host, random pairs")
    for column in ("k", "hosts", "SR B/flow", "rules B/flow", "SR Mb/s", "rules Mb/s", "rules/SR",
                   "model SR error", "model rules error"):
        table.add_column(column)
    for row in summary.get("fig9_measured", []):
        table.add_row(str(row["k"]), str(row["hosts"]), f"{row['sr_bytes_per_flow']:.0f}",
                      f"{row['rules_bytes_per_flow']:.0f}", f"{row['sr_total_mbps']:.4f}",
                      f"{row['rules_total_mbps']:.4f}", f"{row['rules_over_sr']:.2f}",
                      f"{row['sr_model_error']:+.1%}", f"{row['rules_model_error']:+.1%}")
    console.print(table)
    table = Table(title="Fig. 9 modelled: fat-trees, 1 new flow/s per host (measured message sizes times the path "
                        "mix)")
    for column in ("k", "switches", "hosts", "SR Mb/s", "rules Mb/s", "rules/SR"):
        table.add_column(column)
    for row in summary["fig9_fat_tree"]:
        table.add_row(str(row["k"]), str(row["switches"]), str(row["hosts"]), f"{row['sr_total_mbps']:.3f}",
                      f"{row['rules_total_mbps']:.3f}", f"{row['rules_over_sr']:.2f}")
    console.print(table)
    table = Table(title="Fig. 3: entries that steer one chain")
    for column in ("functions", "SR mac-nibble", "SR mac-vlan-mpls", "rule-based"):
        table.add_column(column)
    for row in summary["fig3_chain_state"]:
        table.add_row(str(row["functions"]), str(row["sr_mac_nibble"]), str(row["sr_mac_vlan_mpls"]),
                      str(row["hop_by_hop"]))
    console.print(table)


def print_failover(summary: dict[str, Any]) -> None:
    if summary.get("takeover"):
        found = summary["takeover"]
        print(f"leader take-over: {found['kills']} kills, writes taken again after {found['takeover_s_median']} s "
              f"(median; max {found['takeover_s_max']} s); {found['frames_lost']} of {found['frames_sent']} frames "
              f"lost; tables as before: {found['tables_as_before']}; entries sent again: "
              f"{found['entries_sent_again']}")
    for steering, values in summary["steerings"].items():
        print(f"{steering}: {values['cuts']} cuts, outage median {values['outage_ms_median']} ms, p99 "
              f"{values['outage_ms_p99']} ms; flow-mods per cut {values['flow_mods_per_cut']} "
              f"(by kind {values['flow_mods_per_cut_by_kind']}); chains in order after: {values['in_order']}; "
              f"tables as before after the link's return: {values['tables_as_before_after_restore']}")
    print("goals:", json.dumps(summary["goals"]))


def print_soak(summary: dict[str, Any]) -> None:
    print(f"soak of {summary['minutes']:g} min, seed {summary['seed']}: {summary['faults']} faults, "
          f"{summary['restarts']} restarts")
    print(f"  frames: {summary['frames_sent']} sent, {summary['frames_lost']} lost "
          f"({summary['unexplained_frames']} outside a repair window), {summary['misdelivered']} misdelivered")
    print(f"  writes: {summary['writes']} ({summary['writes_failed']} unanswered), {summary['lost_writes']} "
          f"acknowledged and lost")
    print(f"  convergence after a fault: median {summary['convergence_median_s']} s, p99 "
          f"{summary['convergence_p99_s']} s, {summary['convergence_timeouts']} timeouts")
    print(f"  tracebacks {summary['tracebacks']}, RSS growth {summary['rss_growth']}")
    for line in summary["violations"]:
        print(f"  VIOLATION: {line}")
