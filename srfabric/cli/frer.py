"""``srfabric frer``: end-system elimination (IEEE 802.1CB) on a listener's interface, reporting its counters to
the API (``eliminate``); an XDP switch's egress-edge elimination counters reported (``report``); and the counters
the API holds (``show``).

``eliminate`` runs until stopped (Ctrl-C, SIGTERM): it loads ``bpf/frer_eliminate.c``, attaches it to the
interface, sends the counters every ``--every-s`` seconds, and takes the program off again when it ends.
"""

from __future__ import annotations

import argparse
import json
import socket
import time
from collections.abc import Callable

from srfabric.cli.chain import api_command
from srfabric.cli.client import SfcClient
from srfabric.errors import SrfabricError


def add_parser(commands: argparse._SubParsersAction) -> None:
    actions = api_command(commands, "frer", "802.1CB elimination on a listener, and its counters (REST API)")
    eliminate = actions.add_parser("eliminate", help="eliminate duplicate copies on INTERFACE (XDP) and report its "
                                                     "counters to the API until stopped (root)")
    eliminate.add_argument("interface", help="the listener's interface, e.g. eth0")
    eliminate.add_argument("--pid", type=int, default=None, help="the interface is in this process's network "
                                                                 "namespace (a Mininet host's)")
    eliminate.add_argument("--history-length", type=int, default=32, help="frerSeqRcvyHistoryLength, 2..64")
    eliminate.add_argument("--reset-ms", type=int, default=2000, help="frerSeqRcvyResetMSec")
    eliminate.add_argument("--every-s", type=float, default=1.0, help="seconds between reports")
    eliminate.add_argument("--reporter", default=socket.gethostname()[:64],
                           help="who reports (default: this host's name): one interface name on several hosts")
    report = actions.add_parser("report", help="report the counters of an XDP switch's egress-edge elimination "
                                               "(its agent's pin name, e.g. mn-s5) to the API (root)")
    report.add_argument("switch", help="the agent's --name (pinned under /sys/fs/bpf/srfabric)")
    report.add_argument("--every-s", type=float, default=1.0, help="seconds between reports")
    report.add_argument("--once", action="store_true", help="one report, then exit")
    report.add_argument("--reporter", default=socket.gethostname()[:64], help="who reports (default: this host)")
    actions.add_parser("show", help="the eliminators' newest counters, in ieee802-dot1cb-frer's terms")


def send(client: SfcClient, report: dict[str, object]) -> bool:
    """One report; an error (the API down, the token refused) is printed, not raised."""
    try:
        answer = client.report_frer(report)
    except SrfabricError as error:
        print(f"report not taken: {error}", flush=True)
        return False
    print(f"{answer['streams']} streams, {answer['matched']} of them admitted", flush=True)
    return True


def report_every(client: SfcClient, report: Callable[[], dict[str, object]], args: argparse.Namespace) -> int:
    """Report every ``--every-s`` until stopped, or once with ``--once``. A report not taken (the API down) is no
    reason to stop: elimination goes on and the next report tries again."""
    while True:
        sent = send(client, report() | {"reporter": args.reporter})
        if getattr(args, "once", False):
            return 0 if sent else 1
        time.sleep(args.every_s)


def run(args: argparse.Namespace) -> int:
    with SfcClient(args.url, args.token) as client:
        if args.action == "show":
            print(json.dumps(client.get("/v2.0/srfabric/frer"), indent=2))
            return 0
        if not 0.1 <= args.every_s <= 3600:
            raise SrfabricError("every-s", f"must be in 0.1..3600, got {args.every_s}")
        from srfabric.xdp.frer import FrerEliminator
        from srfabric.xdp.loader import build

        if args.action == "report":  # the switch's own tables: nothing to load or attach
            switch = FrerEliminator.pinned(args.switch)
            return report_every(client, lambda: switch.report(args.switch[-15:]), args)

        build()
        eliminator = FrerEliminator.load(f"frer-{args.interface}", args.history_length, args.reset_ms)
        try:
            eliminator.attach(args.interface, args.pid)
            print(f"eliminating on {args.interface}; reporting every {args.every_s:g} s", flush=True)
            return report_every(client, lambda: eliminator.report(args.interface), args)
        finally:
            eliminator.attach(args.interface, args.pid, off=True)
            eliminator.unload()
