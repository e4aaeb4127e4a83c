"""``srfabric bench ...``: benchmarks that print figures and write CSV, JSON and PNG."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from srfabric.errors import ModelError


def benchmark(sub: argparse._SubParsersAction, name: str, help: str, quick: str) -> argparse.ArgumentParser:
    """A benchmark's parser with the options every one takes: ``--quick`` (what ``quick`` says), ``--out``,
    ``--json``."""
    parser = sub.add_parser(name, help=help)
    parser.add_argument("--quick", action="store_true", help=quick)
    parser.add_argument("--out", default="results", help="results root folder")
    parser.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    return parser


def add_parsers(commands: argparse._SubParsersAction) -> None:
    bench = commands.add_parser("bench", help="benchmarks (results under results/)")
    sub = bench.add_subparsers(dest="bench_command", required=True)
    tsn = benchmark(sub, "tsn", "TSSDN Fig. 4c-4f: schedule quality and runtimes", "a few points only (under a minute)")
    tsn.add_argument("--time-limit", type=float, default=120.0, help="seconds per solver call")
    tsn.add_argument("--seed", type=int, default=0)
    benchmark(sub, "dataplane", "XDP data plane: cost per packet and forwarding rate (root)",
              "short runs, 64-byte frames only (under a minute)")
    benchmark(sub, "capacity", "controller capacity: new flows/s with p99 setup under 5 ms, emulated switches over "
                               "TCP", "two low rates, one second each")
    kit = benchmark(sub, "tsnkit", "fine-grained scheduling against tsnkit's algorithms on its generator's "
                                   "instances, every schedule through its simulator",
                    "one small instance, two tsnkit algorithms")
    kit.add_argument("--time-limit", type=float, default=None, help="seconds per tsnkit run (default 20, quick 10)")
    kit.add_argument("--seed", type=int, default=1)
    kit.add_argument("--sizes", default=None, metavar="SWxST,...",
                     help="only these instance sizes of the full plan, e.g. 32x200 (default: all of them)")
    kit.add_argument("--summarise", metavar="FOLDER", default=None,
                     help="make a run's summary.json and tsnkit.png again from its runs.csv (a run stopped early)")
    failover = benchmark(sub, "failover", "outage and flow-mods when a fabric link is cut, source routing and "
                                          "hop-by-hop rules side by side (root)", "two cuts per steering")
    failover.add_argument("--switch", choices=("ovs", "xdp"), default="ovs")
    failover.add_argument("--part", choices=("all", "cuts", "takeover"), default="all",
                          help="link cuts, the controller pair's leader take-over (10 kills; Open vSwitch), or both")
    failover.add_argument("--frer", action="store_true", help="instead: cuts under a redundant stream (IEEE 802.1CB) "
                                                               "beside a single-path one (Open vSwitch)")
    benchmark(sub, "deploy", "SFC study Fig. 5: chain deployment time through the REST API (root)",
              "N = 1, 5, 10, three times each, 100 chains for the rate")
    benchmark(sub, "neutron", "chains made through a real OpenStack Neutron reaching the fabric: latency, concurrent "
                              "clients, an outage of srfabric (root)", "3 chains, 2 clients, a 5 s outage")
    hostile = benchmark(sub, "hostile", "the hostile-input table: OpenFlow, REST and data-plane attacks with TLS on, "
                                        "and what holds after each (root)", "a tenth of the floods' counts")
    hostile.add_argument("--only", metavar="TEXT", help="only the rows whose attack names TEXT")
    benchmark(sub, "reconnect", "a 20-switch fabric reconnecting over TLS after a controller restart (root)",
              "3 restarts instead of 20")
    ab = benchmark(sub, "ab", "the controller's CPU per new flow here against a base commit, capacity's quick form "
                              "run alternately at each", "(its rounds are quick runs already)")
    ab.add_argument("--base", required=True, help="the commit to compare with (a worktree of it under build/ab/)")
    ab.add_argument("--rounds", type=int, default=6, help="rounds, each one run per side, the order flipped")
    ab.add_argument("--within-percent", type=float, default=5.0, help="the goal: at most this much more CPU")
    index = sub.add_parser("index", help="write the results index (index.md) from every summary.json under a "
                                         "results folder")
    index.add_argument("--out", default="docs/results", help="the results folder (default docs/results)")


def _index(args: argparse.Namespace) -> int:
    from srfabric_tools.bench.index import write_index

    root = Path(args.out)
    if not root.is_dir():
        raise ModelError("--out", f"{root} is not a results folder")
    print(f"results index: {write_index(root)}")
    return 0


def _capacity(args: argparse.Namespace) -> int:
    from srfabric_tools.bench.capacity import run_bench as run_capacity

    summary, folder = run_capacity(args.quick, args.out, print if not args.json else (lambda _: None))
    return report(args, summary, folder, print_capacity, "steps.csv, summary.json, capacity.png")


def _tsnkit(args: argparse.Namespace) -> int:
    from srfabric_tools.bench.tsnkit_compare import run_bench as run_tsnkit

    if args.summarise is not None:
        from srfabric_tools.bench.tsnkit_compare import summarise_folder

        folder = Path(args.summarise)
        return report(args, summarise_folder(folder), folder, print_tsnkit, "summary.json, tsnkit.png")
    if args.time_limit is not None and args.time_limit <= 0:
        raise ModelError("time-limit", f"must be > 0, got {args.time_limit}")
    summary, folder = run_tsnkit(args.quick, args.out, args.time_limit, args.seed,
                                 print if not args.json else (lambda _: None), args.sizes)
    return report(args, summary, folder, print_tsnkit, "runs.csv, summary.json, tsnkit.png")


def _failover(args: argparse.Namespace) -> int:
    from srfabric_tools.bench.failover import run_bench as run_failover
    from srfabric_tools.demo import check_host

    check_host(args.switch)
    if args.frer:
        from srfabric_tools.bench.failover_frer import print_frer, run_frer_cuts

        summary, folder = run_frer_cuts(args.quick, args.out, print if not args.json else (lambda _: None))
        return report(args, summary, folder, print_frer, "cuts.csv, summary.json")
    summary, folder = run_failover(args.quick, args.out, args.switch, print if not args.json else (lambda _: None),
                                   args.part)
    return report(args, summary, folder, print_failover, "runs.csv, takeover.csv, summary.json, failover.png, "
                                                          "takeover.png")


def _neutron(args: argparse.Namespace) -> int:
    from srfabric_tools.bench.neutron import run_neutron
    from srfabric_tools.bench.neutron_report import print_neutron
    from srfabric_tools.testbed.net import ovs_running

    if not ovs_running():
        raise ModelError("neutron", "ovs-vswitchd is not running; run `make bootstrap` to start it")
    summary, folder = run_neutron(args.quick, args.out, print if not args.json else (lambda _: None))
    return report(args, summary, folder, print_neutron, "latency.csv, summary.json, neutron.png")


def _hostile(args: argparse.Namespace) -> int:
    from srfabric_tools.bench.hostile import print_hostile, run_hostile
    from srfabric_tools.testbed.net import ovs_running

    if not ovs_running():
        raise ModelError("hostile", "ovs-vswitchd is not running; run `make bootstrap` to start it")
    summary, folder = run_hostile(args.quick, args.out, print if not args.json else (lambda _: None), args.only)
    return report(args, summary, folder, print_hostile, "rows.csv, summary.json, table.md")


def _reconnect(args: argparse.Namespace) -> int:
    from srfabric_tools.bench.reconnect import print_reconnect, run_reconnect
    from srfabric_tools.testbed.net import ovs_running

    if not ovs_running():
        raise ModelError("reconnect", "ovs-vswitchd is not running; run `make bootstrap` to start it")
    summary, folder = run_reconnect(args.quick, args.out, print if not args.json else (lambda _: None))
    return report(args, summary, folder, print_reconnect, "restarts.csv, summary.json, reconnect.png")


def _deploy(args: argparse.Namespace) -> int:
    from srfabric_tools.bench.deploy import print_deploy, run_deploy
    from srfabric_tools.testbed.net import ovs_running

    if not ovs_running():
        raise ModelError("deploy", "ovs-vswitchd is not running; run `make bootstrap` to start it")
    summary, folder = run_deploy(args.quick, args.out)
    return report(args, summary, folder, print_deploy, "deploy.csv, summary.json, deploy.png")


def _ab(args: argparse.Namespace) -> int:
    from srfabric_tools.bench.ab import run_ab

    summary, folder = run_ab(args.base, args.rounds, args.out, args.within_percent,
                             print if not args.json else (lambda _: None))
    if args.json:
        print(json.dumps(summary))
        return 0
    for name, series in summary["series"].items():
        print(f"{name}: base {series['base_us']['median']:.1f} us, new {series['new_us']['median']:.1f} us per flow "
              f"(new/base {series['new_over_base']:.3f})")
    print(f"goal (within {args.within_percent:g} %): {'met' if summary['goal']['met'] else 'NOT met'}; {folder}")
    return 0 if summary["goal"]["met"] else 1


def _tsn(args: argparse.Namespace) -> int:
    from srfabric_tools.bench.tsn import run_bench

    if args.time_limit <= 0:
        raise ModelError("time-limit", f"must be > 0, got {args.time_limit}")
    summary, folder = run_bench(args.quick, args.out, args.time_limit, args.seed)
    return report(args, summary, folder, print_summary, "runs.csv, summary.json, fig4.png")




def run(args: argparse.Namespace) -> int:
    return BENCHES[args.bench_command](args)  # the table ends the module, after every benchmark's runner


def report(args: argparse.Namespace, summary: dict[str, Any], folder: Path,
           show: Callable[[dict[str, Any]], None], files: str) -> int:
    """The summary as one JSON object (``--json``) or as tables, and where the files went."""
    if args.json:
        print(json.dumps(summary | {"folder": str(folder)}))
    else:
        show(summary)
        print(f"results: {folder} ({files})")
    return 0


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


def print_capacity(summary: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    table = Table(title=f"controller capacity, {summary['topology']}: setup = packet-in written to packet-out read")
    for column in ("steering", "offered/s", "set up/s", "lost", "median ms", "p99 ms", "max ms", "controller CPU",
                   "generator CPU", "flow-mods/flow"):
        table.add_column(column)
    for row in summary["steps"]:
        table.add_row(row["steering"], f"{row['offered']:,.0f}", f"{row['achieved']:,.0f}",
                      str(row["sent"] - row["set_up"]), f"{row['p50_ms']:.3f}", f"{row['p99_ms']:.3f}",
                      f"{row['max_ms']:.1f}", f"{row['controller_cpu']:.0%}", f"{row['generator_cpu']:.0%}",
                      f"{row['flow_mods_per_flow']:.2f}")
    console.print(table)
    for name, goal in summary["goals"].items():
        console.print(f"goal {name}: {'met' if goal['met'] else 'NOT met'} {goal}")


def run_dataplane(args: argparse.Namespace) -> int:
    from srfabric_tools.bench.dataplane import run_bench

    summary, folder = run_bench(args.quick, args.out)
    return report(args, summary, folder, print_dataplane,
                  "costs.csv, rates.csv, setup.csv, summary.json, dataplane.png, control.png")


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


BENCHES: dict[str, Callable[[argparse.Namespace], int]] = {
    "index": _index,
    "dataplane": run_dataplane,
    "capacity": _capacity,
    "tsnkit": _tsnkit,
    "failover": _failover,
    "neutron": _neutron,
    "hostile": _hostile,
    "reconnect": _reconnect,
    "deploy": _deploy,
    "tsn": _tsn,
    "ab": _ab,
}
