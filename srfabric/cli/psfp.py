"""``srfabric psfp``: per-stream filtering and policing (IEEE 802.1Qci) on an XDP switch's ingress edge, as the API
says it (``follow``: the edge's YANG document read, its filters, gates and meters written into the switch's
table, its counters reported, every ``--every-s`` seconds); onto a bridge over NETCONF (``push``: the edge's
document in one confirmed commit, validated by the bridge's server); and the documents the API holds (``show``)."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
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
    push = actions.add_parser("push", help="send an edge's filters, gates and meters to its bridge over NETCONF")
    push.add_argument("bridge", help="the edge switch, named as in the bridges file")
    push.add_argument("--bridges", type=Path, required=True, help="the bridges file serve --gates netconf reads")
    push.add_argument("--confirm-timeout-s", type=int, default=30, help="the confirmed commit's timeout")
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


def push(client: SfcClient, args: argparse.Namespace) -> int:
    """The edge's document onto its bridge; one line saying what the bridge now holds."""
    from srfabric.model.management import read_bridges_file
    from srfabric.southbound.netconf.psfp import push_psfp
    from srfabric.southbound.netconf.session import BridgeSession

    if not 1 <= args.confirm_timeout_s <= 3600:
        raise SrfabricError("confirm-timeout-s", f"must be in 1..3600, got {args.confirm_timeout_s}")
    bridges = read_bridges_file(args.bridges)
    if args.bridge not in bridges:
        raise SrfabricError("bridge", f"{args.bridge} is not in {args.bridges} ({', '.join(sorted(bridges))})")
    document = client.get(f"/v2.0/srfabric/psfp/{args.bridge}")
    session = BridgeSession(bridges[args.bridge])
    try:
        done = push_psfp(session, document, args.confirm_timeout_s)
    finally:
        session.close()
    print(f"bridge {done.bridge}: {len(done.streams)} streams protected, {len(done.removed)} removed; committed")
    return 0


def run(args: argparse.Namespace) -> int:
    with SfcClient(args.url, args.token) as client:
        if args.action == "push":
            return push(client, args)
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
