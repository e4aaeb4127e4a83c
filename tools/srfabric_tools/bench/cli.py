"""``srfabric bench ...``: benchmarks that print figures and write CSV, JSON and PNG."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from srfabric.errors import ModelError
from srfabric_tools.bench.printing import (
    print_capacity,
    print_dataplane,
    print_failover,
    print_summary,
    print_tsnkit,
)

QUICK_SOAK_MINUTES = 2.0  # the soak's quick form (make test runs it)


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
    ovs = benchmark(sub, "capacity-ovs", "new flows/s with p99 setup under 5 ms on real Open vSwitch, srfabric, "
                                         "os-ken's simple_switch_13 and faucet on one fabric and offered load, 5 "
                                         "repetitions (root)", "two low rates, one repetition")
    ovs.add_argument("--job", choices=("fresh", "learned"), default="fresh",
                     help="fresh: each flow from a source MAC never seen (the goal's job); learned: each between "
                          "hosts learned beforehand")
    ovs.add_argument("--repeats", type=int, default=None, help="repetitions (default 5, quick 1)")
    tables = benchmark(sub, "capacity-tables", "new flows/s with p99 setup under 5 ms on emulated switches that "
                                               "keep their flow tables, srfabric and os-ken's simple_switch_13 on "
                                               "one fat-tree and offered load, 5 repetitions",
                       "two low rates, one repetition")
    tables.add_argument("--job", choices=("fresh", "learned"), default="fresh",
                        help="fresh: each flow from a source MAC never seen (the goal's job); learned: from its "
                             "host's own MAC")
    tables.add_argument("--repeats", type=int, default=None, help="repetitions (default 5, quick 1)")
    scale = benchmark(sub, "scale", "how the controller's cost grows: fat-trees k=4, 8, 16 and 24 of emulated switches "
                                    "with flow tables holding 10 to 1,000 chains; cold start, one chain's changes, RSS "
                                    "and entries by role; two instances sharing a fabric of Open vSwitch (root)",
                      "k=4 with 10 chains, two changes of each kind; no two-instance part")
    scale.add_argument("--chains-only", action="store_const", const="chains", dest="only",
                       help="only the fabrics' sizes with their chains: fat-trees, the leaf-spine, 10,000 chains")
    scale.add_argument("--shares-only", action="store_const", const="shares", dest="only",
                       help="only the two instances sharing a fabric beside one alone (root; one repetition with "
                            "--quick)")
    scale.add_argument("--database-only", action="store_const", const="database", dest="only",
                       help="only the API's database as chains are made through it (k=4 and 16, 10 to 1,000 chains)")
    scale.add_argument("--streams-only", action="store_const", const="streams", dest="only",
                       help="only one stream's admission beside 10, 100 and 1,000 streams (k=8; k=4 and 10 streams "
                            "with --quick)")
    benchmark(sub, "datapaths", "one switch's forwarding rate: Open vSwitch's kernel and userspace datapaths beside "
                                "the XDP switches, in one run (root; the kernel datapath in the kernel lab)",
              "one second per switch, one run, 20,000 routes")
    kit = benchmark(sub, "tsnkit", "fine-grained scheduling against tsnkit's algorithms on its generator's "
                                   "instances, every schedule through its simulator",
                    "one small instance, two tsnkit algorithms")
    kit.add_argument("--time-limit", type=float, default=None, help="seconds per tsnkit run (default 20, quick 10)")
    kit.add_argument("--seed", type=int, default=1)
    kit.add_argument("--sizes", default=None, metavar="SWxST,...",
                     help="only these instance sizes of the full plan, e.g. 32x200 (default: all of them)")
    kit.add_argument("--summarise", metavar="FOLDER", default=None,
                     help="make a run's summary.json and tsnkit.png again from its runs.csv (a run stopped early)")
    soak = benchmark(sub, "soak", "faults that overlap under load on a Mininet fabric of Open vSwitch with the "
                                  "controller pair on PostgreSQL, with invariant checkers (root)",
                     f"{QUICK_SOAK_MINUTES:g} minutes")
    soak.add_argument("--minutes", type=float, default=30.0, help="how long the load runs (default 30)")
    soak.add_argument("--seed", type=int, default=1, help="draws the faults: the same seed, the same timeline")
    soak.add_argument("--faults", default=None, metavar="KIND,...",
                      help="only these kinds of fault (default all: link, bridge, function, leader_kill, api_stop, "
                           "postgres_restart, hostile)")
    soak.add_argument("--switches-connect", action="store_true",
                      help="the switches connect to the instances (default: they listen and the instances dial them)")
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
    netconf = benchmark(sub, "netconf", "a gate schedule change over NETCONF to every bridge, committed and confirmed, "
                                        "on real netconfd bridges reached over SSH (root)", "2 runs of 10 changes")
    netconf.add_argument("--topology", choices=("line7", "tsn-fig7"), default="line7",
                         help="7 bridges in a line, or the coupling paper's Fig. 7 as modelled here (4 bridges)")
    netconf.add_argument("--runs", type=int, default=5, help="runs, each on freshly started bridges")
    netconf.add_argument("--changes", type=int, default=100, help="changes timed per run")
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


def _capacity_tables(args: argparse.Namespace) -> int:
    from srfabric_tools.bench.capacity_tables import run_bench as run_capacity_tables
    from srfabric_tools.bench.printing import print_capacity_ovs

    if args.repeats is not None and not 1 <= args.repeats <= 20:
        raise ModelError("--repeats", f"must be in 1..20, got {args.repeats}")
    summary, folder = run_capacity_tables(args.quick, args.out, print if not args.json else (lambda _: None),
                                          args.job, args.repeats)
    return report(args, summary, folder, print_capacity_ovs, "steps.csv, summary.json, capacity-tables.png")


def _scale(args: argparse.Namespace) -> int:
    from srfabric_tools.bench.printing import print_scale
    from srfabric_tools.bench.scale import run_bench as run_scale

    summary, folder = run_scale(args.quick, args.out, print if not args.json else (lambda _: None), args.only)
    return report(args, summary, folder, print_scale, "runs.csv, summary.json, scale.png")


def _soak(args: argparse.Namespace) -> int:
    from srfabric_tools.bench.printing import print_soak
    from srfabric_tools.bench.soak import run_bench as run_soak
    from srfabric_tools.bench.soak_plan import KINDS

    minutes = QUICK_SOAK_MINUTES if args.quick else args.minutes
    if not 0.5 <= minutes <= 24 * 60:
        raise ModelError("--minutes", f"must be in 0.5..1440, got {minutes:g}")
    kinds = tuple(args.faults.split(",")) if args.faults else None
    unknown = sorted(set(kinds or ()) - set(KINDS))
    if unknown:
        raise ModelError("--faults", f"{', '.join(unknown)}: not a kind of fault ({', '.join(KINDS)})")
    summary, folder = run_soak(minutes, args.seed, args.out, print if not args.json else (lambda _: None),
                               args.quick, kinds, not args.switches_connect)
    return report(args, summary, folder, print_soak, "summary.json, samples.json, timeline.png")


def _capacity_ovs(args: argparse.Namespace) -> int:
    from srfabric_tools.bench.capacity_ovs_report import run_bench as run_capacity_ovs
    from srfabric_tools.bench.printing import print_capacity_ovs

    if args.repeats is not None and not 1 <= args.repeats <= 20:
        raise ModelError("--repeats", f"must be in 1..20, got {args.repeats}")
    summary, folder = run_capacity_ovs(args.quick, args.out, print if not args.json else (lambda _: None), args.job,
                                       args.repeats)
    return report(args, summary, folder, print_capacity_ovs, "steps.csv, summary.json, capacity-ovs.png")


def _datapaths(args: argparse.Namespace) -> int:
    from srfabric_tools.bench.datapaths import run_bench as run_datapaths
    from srfabric_tools.bench.printing import print_datapaths

    summary, folder = run_datapaths(args.quick, args.out, print if not args.json else (lambda _: None))
    return report(args, summary, folder, print_datapaths, "rates.csv, summary.json")


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
        base, new = series["base"], series["new"]
        if new is None:
            print(f"{name}: base {base['median']:.2f}, new: nothing measured  REGRESSED")
            continue
        print(f"{name}: base {base['median']:.2f} ({base['q1']:.2f}-{base['q3']:.2f}), new {new['median']:.2f} "
              f"({new['q1']:.2f}-{new['q3']:.2f}), new/base {series['new_over_base']:.3f}"
              + ("  REGRESSED" if series["regressed"] else ""))
    print(f"guard (within {args.within_percent:g} % or the spread): "
          f"{'no regression' if summary['goal']['met'] else 'regressed: ' + ', '.join(summary['regressed'])}; {folder}")
    return 0 if summary["goal"]["met"] else 1


def _netconf(args: argparse.Namespace) -> int:
    from srfabric_tools.bench.netconf import run_netconf
    from srfabric_tools.bench.netconf_report import print_netconf

    if not 1 <= args.runs <= 50 or not 1 <= args.changes <= 10_000:
        raise ModelError("--runs/--changes", f"runs in 1..50 and changes in 1..10000, got {args.runs}, {args.changes}")
    summary, folder = run_netconf(args.quick, args.out, args.topology, args.runs, args.changes,
                                  print if not args.json else (lambda _: None))
    return report(args, summary, folder, print_netconf, "changes.csv, summary.json, netconf.png")


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


def run_dataplane(args: argparse.Namespace) -> int:
    from srfabric_tools.bench.dataplane import run_bench

    summary, folder = run_bench(args.quick, args.out)
    return report(args, summary, folder, print_dataplane,
                  "costs.csv, rates.csv, setup.csv, summary.json, dataplane.png, control.png")


BENCHES: dict[str, Callable[[argparse.Namespace], int]] = {
    "index": _index,
    "dataplane": run_dataplane,
    "capacity": _capacity,
    "capacity-ovs": _capacity_ovs,
    "capacity-tables": _capacity_tables,
    "scale": _scale,
    "soak": _soak,
    "datapaths": _datapaths,
    "tsnkit": _tsnkit,
    "failover": _failover,
    "neutron": _neutron,
    "hostile": _hostile,
    "reconnect": _reconnect,
    "deploy": _deploy,
    "tsn": _tsn,
    "ab": _ab,
    "netconf": _netconf,
}
