"""The ``srfabric`` command line."""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Callable

from srfabric.codecs import CODEC_NAMES
from srfabric.errors import SrfabricError
from srfabric.testbed.kinds import SWITCH_KINDS


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="srfabric", description="Source-routed service chains on SDN fabrics.")
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser("demo", help="three service chains on an emulated k=4 fat-tree, with a report")
    demo.add_argument("--json", action="store_true", help="print the report as one JSON object")
    demo.add_argument("--codec", choices=CODEC_NAMES, default="mac-nibble")
    demo.add_argument("--switch", choices=SWITCH_KINDS, default="ovs",
                      help="ovs: Open vSwitch (userspace datapath); xdp: srfabric's XDP programs via its agent")
    demo.add_argument("--k", type=int, default=4, help="fat-tree arity (even)")
    demo.add_argument("--duration", type=float, default=4.0, help="seconds of traffic per chain")
    demo.add_argument("--rate", default="2M", help="iperf3 UDP rate per chain")
    from srfabric.api.chain_cli import add_parser as add_chain
    from srfabric.api.frer_cli import add_parser as add_frer
    from srfabric.api.serve import add_parser as add_serve
    from srfabric.api.stream_cli import add_parser as add_stream
    from srfabric.bench.cli import add_parsers as add_bench
    from srfabric.kernel_lab.cli import add_parser as add_kernel_lab
    from srfabric.lab.cli import add_parsers as add_lab
    from srfabric.neutron_demo import add_parser as add_neutron_demo
    from srfabric.security.cli import add_parser as add_pki
    from srfabric.testbed.up import add_parsers as add_up
    from srfabric.tsn.cli import add_parsers as add_tsn

    add_serve(commands)
    add_chain(commands)
    add_stream(commands)
    add_frer(commands)
    add_tsn(commands)
    add_bench(commands)
    add_lab(commands)
    add_kernel_lab(commands)
    add_up(commands)
    add_neutron_demo(commands)
    add_pki(commands)
    return parser


def exit_on_sigterm() -> None:
    """SIGTERM (a time-out, a supervisor) ends a benchmark or an experiment as Ctrl-C does: by an exception, so that
    its clean-ups run (namespaces, bridges, links and pinned programs, by the names it made them with)."""
    signal.signal(signal.SIGTERM, lambda number, _frame: sys.exit(128 + number))


def _demo(args: argparse.Namespace) -> int:
    from srfabric.demo import run_demo

    return run_demo(args)


def _serve(args: argparse.Namespace) -> int:
    from srfabric.api.serve import run

    return run(args)


def _chain(args: argparse.Namespace) -> int:
    from srfabric.api.chain_cli import run

    return run(args)


def _stream(args: argparse.Namespace) -> int:
    from srfabric.api.stream_cli import run

    return run(args)


def _frer(args: argparse.Namespace) -> int:
    from srfabric.api.frer_cli import run

    return run(args)


def _tsn(args: argparse.Namespace) -> int:
    from srfabric.tsn.cli import run

    return run(args)


def _bench(args: argparse.Namespace) -> int:
    from srfabric.bench.cli import run

    return run(args)


def _kernel_lab(args: argparse.Namespace) -> int:
    from srfabric.kernel_lab.cli import run

    return run(args)


def _up(args: argparse.Namespace) -> int:
    from srfabric.testbed.up import run_up

    return run_up(args)


def _host(args: argparse.Namespace) -> int:
    from srfabric.testbed.up import run_host

    return run_host(args)


def _pki(args: argparse.Namespace) -> int:
    from srfabric.security.cli import run

    return run(args)


def _neutron_demo(args: argparse.Namespace) -> int:
    from srfabric.neutron_demo import run

    return run(args)


def _lab(args: argparse.Namespace) -> int:
    from srfabric.lab.cli import run

    return run(args)


# Each command's module loads only when that command runs: `srfabric chain list` never imports Mininet or NumPy.
COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "demo": _demo,
    "serve": _serve,
    "chain": _chain,
    "stream": _stream,
    "frer": _frer,
    "tsn": _tsn,
    "bench": _bench,
    "kernel-lab": _kernel_lab,
    "up": _up,
    "host": _host,
    "pki": _pki,
    "neutron-demo": _neutron_demo,
    "lab": _lab,
}


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command in ("bench", "lab", "frer"):
        exit_on_sigterm()
    try:
        return COMMANDS[args.command](args)
    except SrfabricError as error:
        print(f"srfabric: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("srfabric: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
