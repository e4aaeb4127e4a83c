"""``srfabric kernel-lab run [options] -- COMMAND ...``: run a command on the lab's kernel."""

from __future__ import annotations

import argparse

from srfabric_tools.kernel_lab.boot import TIMINGS


def add_parser(commands: argparse._SubParsersAction) -> None:
    lab = commands.add_parser(
        "kernel-lab", help="run a command on a Debian kernel with taprio, etf and openvswitch.ko, under QEMU"
    )
    sub = lab.add_subparsers(dest="lab_command", required=True)
    run = sub.add_parser("run", help="boot the lab, run COMMAND in this directory, exit with its code")
    run.add_argument("--memory-mb", type=int, default=3072, help="guest memory (the root's changes live in it)")
    run.add_argument(
        "--timing", choices=TIMINGS, default="deterministic",
        help="deterministic: guest time counts instructions (-icount shift=0,sleep=off); realtime: host time",
    )
    run.add_argument(
        "--share", action="append", default=[], metavar="DIR",
        help="a host directory the guest may write (same path inside); the rest of / is read-only",
    )
    run.add_argument("--timeout", type=float, default=3600.0, help="seconds before the guest is stopped")
    run.add_argument("--ovs", action="store_true", help="start Open vSwitch (kernel datapath) before COMMAND")
    run.add_argument("argv", nargs=argparse.REMAINDER, help="-- COMMAND [ARG ...]")


def run(args: argparse.Namespace) -> int:
    from srfabric_tools.kernel_lab.run import run_cli

    argv = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
    return run_cli(argv, args.memory_mb, args.timing, args.share, args.timeout, args.ovs)
