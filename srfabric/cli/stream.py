"""``srfabric stream``: request, list, show, re-route, re-schedule and delete time-sensitive streams (REST API).

Talker and listener are named like ``srfabric chain``'s source and destination:
a port's name or device_id (a host the controller learned is a port named after it).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from srfabric.cli.chain import api_command, node_port
from srfabric.cli.client import SfcClient
from srfabric.errors import SrfabricError


def add_parser(commands: argparse._SubParsersAction) -> None:
    actions = api_command(commands, "stream", "time-sensitive streams: request, list, show, re-route, delete")
    create = actions.add_parser("create", help="request a stream: admitted into a slot, or refused with the reason")
    create.add_argument("talker", help="the sending host (port name or device_id)")
    create.add_argument("listener", help="the receiving host")
    create.add_argument("--name", default="")
    create.add_argument("--period-ns", type=int, default=1_000_000)
    create.add_argument("--size-bytes", type=int, default=100, help="payload bytes of each frame")
    create.add_argument("--max-latency-ns", type=int, default=None)
    create.add_argument("--priority", type=int, default=7, help="7: scheduled in slots; 0-6: pinned path only")
    create.add_argument("--udp-dst", type=int, default=None, help="the stream's UDP destination port")
    create.add_argument("--udp-src", type=int, default=None)
    create.add_argument("--path", default=None, help="switches to cross, comma-separated (default: scheduler's)")
    create.add_argument("--trees", type=int, choices=(1, 2), default=None,
                        help="2: every frame along two paths that share no link (IEEE 802.1CB)")
    create.add_argument("--second-path", default=None, help="with --trees 2 and --path: the second path's switches")
    batch = actions.add_parser("batch", help="request several streams at once, admitted together (the scheduler "
                                             "chooses their order, so more fit than one by one)")
    batch.add_argument("file", help="a JSON list of streams: talker, listener (host names) and any of name, "
                                    "period_ns, size_bytes, max_latency_ns, priority, udp_destination_port, "
                                    "udp_source_port, path")
    actions.add_parser("list", help="every stream with its path and slot")
    actions.add_parser("schedule", help="the slot grid, offsets and every port's gate control list (JSON)")
    for name in ("show", "delete"):
        action = actions.add_parser(name, help=f"{name} one stream")
        action.add_argument("stream", help="name or id")
    reroute = actions.add_parser("reroute", help="move a stream to other switches (only its talker's edge changes)")
    reroute.add_argument("stream", help="name or id")
    reroute.add_argument("path", help="switches to cross, comma-separated, talker's first")
    reschedule = actions.add_parser("reschedule", help="new gates on every gated port at one base time: the "
                                                       "time-triggered class open for a duty cycle, or in its slots")
    how = reschedule.add_mutually_exclusive_group(required=True)
    how.add_argument("--duty", type=int, metavar="PERCENT", help="priority 7 open for this share of each period")
    how.add_argument("--slots", action="store_true", help="priority 7 open in its streams' slots only")
    actions.add_parser("reoptimise", help="re-solve every stream's slot and path with S/PR: all kept, on as few "
                                          "links as possible; moved streams switch at one base time")


def find_stream(client: SfcClient, key: str) -> dict[str, Any]:
    for stream in client.list("streams"):
        if key in (stream["id"], stream["name"]):
            return stream
    raise SrfabricError("stream", f"no stream named {key!r}")


def _line(stream: dict[str, Any]) -> str:
    slot = "-" if stream["slot"] is None else f"slot {stream['slot']}/{stream['phase']}"
    second = f" and {' > '.join(stream['second_path'])}" if stream.get("second_path") else ""
    return (f"{stream['id']}  {stream['name']:<16} prio {stream['priority']}  {stream['period_ns']} ns  "
            f"{slot:<10} {' > '.join(stream['path'])}{second}")


def batch_bodies(client: SfcClient, path: str) -> list[dict[str, Any]]:
    """The request bodies of a batch file, talker and listener named by host (or port) as on the command line."""
    try:
        with open(path, encoding="utf-8") as handle:
            items = json.load(handle)
    except (OSError, ValueError) as error:
        raise SrfabricError("file", f"{path}: {error}") from None
    if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
        raise SrfabricError("file", f"{path}: must hold a JSON list of objects, one per stream")
    ports = client.list("ports")
    bodies = []
    for index, item in enumerate(items):
        missing = [role for role in ("talker", "listener") if not isinstance(item.get(role), str)]
        if missing:
            raise SrfabricError(f"file[{index}].{missing[0]}", "must name a host")
        bodies.append({**item, "talker": node_port(ports, item["talker"], "talker"),
                       "listener": node_port(ports, item["listener"], "listener")})
    return bodies


def run(args: argparse.Namespace) -> int:
    with SfcClient(args.url, args.token) as client:
        if args.action == "create":
            ports = client.list("ports")
            body: dict[str, Any] = {
                "name": args.name, "talker": node_port(ports, args.talker, "talker"),
                "listener": node_port(ports, args.listener, "listener"), "period_ns": args.period_ns,
                "size_bytes": args.size_bytes, "priority": args.priority}
            optional = {"max_latency_ns": args.max_latency_ns, "udp_destination_port": args.udp_dst,
                        "udp_source_port": args.udp_src, "path": args.path.split(",") if args.path else None,
                        "num_seamless_trees": args.trees,
                        "second_path": args.second_path.split(",") if args.second_path else None}
            body |= {key: value for key, value in optional.items() if value is not None}
            print(_line(client.create("streams", body, "stream")))
        elif args.action == "batch":
            created, refused = client.create_many("streams", batch_bodies(client, args.file))
            for stream in created:
                print(_line(stream))
            for refusal in refused:
                print(f"refused #{refusal['index']} {refusal['name']}: {refusal['reason']}")
        elif args.action == "list":
            for stream in client.list("streams"):
                print(_line(stream))
        elif args.action == "schedule":
            print(json.dumps(client.get("/v2.0/srfabric/schedule")["schedule"], indent=2))
        elif args.action == "show":
            print(json.dumps(find_stream(client, args.stream), indent=2))
        elif args.action == "reroute":
            stream = find_stream(client, args.stream)
            print(_line(client.update("streams", stream["id"], {"path": args.path.split(",")})))
        elif args.action == "reschedule":
            schedule = client.reschedule(None if args.slots else args.duty)
            duty = "slots only" if schedule["duty_percent"] is None else f"duty {schedule['duty_percent']} %"
            print(f"{duty}: {len(schedule['last_change']['regated_ports'])} port(s) switch at base time "
                  f"{schedule['last_change']['base_time_ns']} ns")
        elif args.action == "reoptimise":
            schedule = client.reoptimise()
            moved = schedule["last_change"]["moved_streams"]
            hops = sum(len(stream["path"]) - 1 for stream in schedule["streams"])
            print(f"moved {len(moved)} stream(s){': ' + ', '.join(moved) if moved else ''}; the streams now "
                  f"cross {hops} links in all")
        elif args.action == "delete":
            stream = find_stream(client, args.stream)
            client.delete("streams", stream["id"])
            print(f"deleted stream {stream['name']} ({stream['id']})")
    return 0
