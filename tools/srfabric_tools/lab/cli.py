"""``srfabric lab <experiment>``: the container-chaining and OpenStack SFC studies, reproduced here."""

from __future__ import annotations

import argparse
import os
import shutil

from srfabric.errors import ModelError

NAMES = ("calibration", "ovs-chain", "ns-chain", "firewall", "shaper", "sfc-throughput", "sr-vs-rules", "sr-proxy",
         "tsn-fig9, tsn-fig10, tsn-fig11, tsn-fig12, tsn-tables23, tsn-frer and tsn-protect (in the kernel lab)")


def add_parsers(commands: argparse._SubParsersAction) -> None:
    lab = commands.add_parser("lab", help="service-chain performance experiments (results under results/)")
    lab.add_argument("experiment", help=f"one of {', '.join(NAMES)}, or all")
    lab.add_argument("--quick", action="store_true", help="few points, 1 x 2 s each (under a minute)")
    lab.add_argument("--paper", action="store_true", help="the papers' 10 x 30 s per point")
    lab.add_argument("--reps", type=int, help="repetitions per point (default 5)")
    lab.add_argument("--seconds", type=float, help="seconds per repetition (default 10)")
    lab.add_argument("--out", default="results", help="results root folder")
    lab.add_argument("--json", action="store_true", help="print one summary object per experiment")


def check_environment() -> None:
    if os.geteuid() != 0:
        raise ModelError("user", "the lab builds namespaces and links: run it as root")
    for tool in ("ip", "iperf3", "ovs-vsctl", "tc", "ethtool"):
        if shutil.which(tool) is None:
            raise ModelError("environment", f"{tool} is not installed (run `make bootstrap`)")
    from srfabric_tools.testbed.net import ovs_running

    if not ovs_running():
        raise ModelError("environment", "ovs-vswitchd is not running (run `make bootstrap` to start it)")


def run(args: argparse.Namespace) -> int:
    from srfabric_tools.lab.core import Settings
    from srfabric_tools.lab.run import json_summary, lookup, print_summary, registry, run_experiment

    settings = Settings.choose(args.quick, args.paper, args.reps, args.seconds)
    names = list(registry()) if args.experiment == "all" else [lookup(args.experiment).name]
    check_environment()
    for name in names:
        summary, folder = run_experiment(lookup(name), settings, args.out, show=not args.json)
        if args.json:
            print(json_summary(summary | {"folder": str(folder)}))
        else:
            print_summary(summary, folder)
    return 0
