"""``srfabric psfp``: per-stream filtering and policing (IEEE 802.1Qci) on an XDP switch's ingress edge, as the API
says it (``follow``: the edge's YANG document read, its filters, gates and meters written into the switch's
table, its counters reported, every ``--every-s`` seconds); and the documents the API holds (``show``)."""

from __future__ import annotations

import argparse
import json
import time
from typing import TYPE_CHECKING

from srfabric.cli.chain import api_command
from srfabric.cli.client import SfcClient
from srfabric.errors import SrfabricError

if TYPE_CHECKING:
    from srfabric.xdp.psfp import PinnedEdge


def add_parser(commands: argparse._SubParsersAction) -> None:
    actions = api_command(commands, "psfp", "802.1Qci per-stream filtering and policing at the edges (REST API)")
    follow = actions.add_parser("follow", help="enforce the API's filters, gates and meters on an XDP switch and "
                                               "report its counters (root)")
    follow.add_argument("switch", help="the agent's --name (pinned under /sys/fs/bpf/srfabric)")
    follow.add_argument("--bridge", required=True, help="the switch's name in the controller's fabric (s1)")
    follow.add_argument("--every-s", type=float, default=1.0, help="seconds between rounds")
    follow.add_argument("--once", action="store_true", help="one round, then exit")
    show = actions.add_parser("show", help="the edges, or one edge's document with its counters")
    show.add_argument("bridge", nargs="?", help="one edge switch")


def follow_round(client: SfcClient, edge: PinnedEdge, bridge: str) -> str:
    """Read the edge's document, hold it, report the counters; what happened, in one line."""
    from srfabric.rules.yang.psfp_read import read_plans

    plans = read_plans(client.get(f"/v2.0/srfabric/psfp/{bridge}"), bridge)
    written, removed = edge.converge(plans)
    answer = client.report_psfp(edge.report() | {"bridge": bridge})
    return f"{len(plans)} streams protected ({written} written, {removed} removed); {answer['matched']} reported " \
           f"admitted"


def run(args: argparse.Namespace) -> int:
    with SfcClient(args.url, args.token) as client:
        if args.action == "show":
            path = "/v2.0/srfabric/psfp" + (f"/{args.bridge}" if args.bridge else "")
            print(json.dumps(client.get(path), indent=2))
            return 0
        if not 0.1 <= args.every_s <= 3600:
            raise SrfabricError("every-s", f"must be in 0.1..3600, got {args.every_s}")
        from srfabric.xdp.psfp import PinnedEdge

        edge = PinnedEdge(args.switch)
        while True:
            try:
                print(follow_round(client, edge, args.bridge), flush=True)
            except SrfabricError as error:  # the API down, a document refused: the table stays as it was
                print(f"round not done: {error}", flush=True)
                if args.once:
                    return 1
            if args.once:
                return 0
            time.sleep(args.every_s)
