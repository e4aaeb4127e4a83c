"""The tools' commands on ``srfabric``'s command line: ``demo``, ``neutron-demo``, ``up``, ``host``, ``bench``,
``lab`` and ``kernel-lab``, registered through the ``srfabric.commands`` entry point."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from srfabric.codecs import CODEC_NAMES
from srfabric_tools.testbed.kinds import SWITCH_KINDS

Runner = Callable[[argparse.Namespace], int]


def _demo(args: argparse.Namespace) -> int:
    from srfabric_tools.demo import run_demo

    return run_demo(args)


def _bench(args: argparse.Namespace) -> int:
    from srfabric_tools.bench.cli import run

    return run(args)


def _kernel_lab(args: argparse.Namespace) -> int:
    from srfabric_tools.kernel_lab.cli import run

    return run(args)


def _up(args: argparse.Namespace) -> int:
    from srfabric_tools.testbed.up import run_up

    return run_up(args)


def _host(args: argparse.Namespace) -> int:
    from srfabric_tools.testbed.up import run_host

    return run_host(args)


def _neutron_demo(args: argparse.Namespace) -> int:
    from srfabric_tools.neutron_demo import run

    return run(args)


def _lab(args: argparse.Namespace) -> int:
    from srfabric_tools.lab.cli import run

    return run(args)


def add_demo(commands: argparse._SubParsersAction) -> None:
    demo = commands.add_parser("demo", help="three service chains on an emulated k=4 fat-tree, with a report")
    demo.add_argument("--json", action="store_true", help="print the report as one JSON object")
    demo.add_argument("--codec", choices=CODEC_NAMES, default="mac-nibble")
    demo.add_argument("--switch", choices=SWITCH_KINDS, default="ovs",
                      help="ovs: Open vSwitch (userspace datapath); xdp: srfabric's XDP programs via its agent")
    demo.add_argument("--k", type=int, default=4, help="fat-tree arity (even)")
    demo.add_argument("--duration", type=float, default=4.0, help="seconds of traffic per chain")
    demo.add_argument("--rate", default="2M", help="iperf3 UDP rate per chain")


def register(commands: argparse._SubParsersAction) -> dict[str, Runner]:
    """Add the tools' commands to ``commands``; returns how to run each."""
    from srfabric_tools.bench.cli import add_parsers as add_bench
    from srfabric_tools.kernel_lab.cli import add_parser as add_kernel_lab
    from srfabric_tools.lab.cli import add_parsers as add_lab
    from srfabric_tools.neutron_demo import add_parser as add_neutron_demo
    from srfabric_tools.testbed.up import add_parsers as add_up

    add_demo(commands)
    add_bench(commands)
    add_lab(commands)
    add_kernel_lab(commands)
    add_up(commands)
    add_neutron_demo(commands)
    return {"demo": _demo, "bench": _bench, "kernel-lab": _kernel_lab, "up": _up, "host": _host,
            "neutron-demo": _neutron_demo, "lab": _lab}
