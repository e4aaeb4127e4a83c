"""``srfabric chain``: create, list, show and delete service chains through the REST API.

``create --file`` reads the chain description of the OpenStack SFC study (sec. IV)::

    {"source": "S", "destination": "D", "match_fields": {"protocol": "udp", "destination_port_range_min": 5001},
     "chain": [{"name": "v1", "direction": "in"}, {"name": "v4", "direction": "tap"}]}

Names are looked up among the API's ports: ``source``/``destination`` by port name
or device_id (without ``destination`` the chain ends at its last function and
traffic goes on from there by destination address); a function by its ports' device_id (``<name>-in`` / ``<name>-out``
name ingress and egress; one port serves both). ``tap`` makes the function a tap;
``same`` sends traffic back out of the port it came in on; ``in``/``out`` use the
function's two ports as named. A step's ``service_function_parameters`` go to its port pair as they are:
without them the function is SR-unaware (networking-sfc's correlation None: the SR proxy strips the header
before it); ``{"correlation": "mpls"}`` makes it SR-aware (it returns the header untouched).
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

from srfabric.cli.client import SfcClient
from srfabric.errors import SrfabricError
from srfabric.up_state import read_up_state

DIRECTIONS = ("in", "out", "same", "tap")


def api_command(commands: argparse._SubParsersAction, name: str, help: str) -> argparse._SubParsersAction:
    """A subcommand that talks to ``srfabric serve`` (``--url``, ``--token``); returns its actions."""
    up = read_up_state()  # a running `srfabric up`: its API, unless told otherwise
    command = commands.add_parser(name, help=help)
    command.add_argument("--url", default=os.environ.get("SRFABRIC_URL") or up.get("api") or "http://127.0.0.1:9696")
    command.add_argument("--token", default=os.environ.get("SRFABRIC_TOKEN") or up.get("token"))
    actions = command.add_subparsers(dest="action", required=True)
    add = actions.add_parser

    def add_with_connection(*args: Any, **kwargs: Any) -> argparse.ArgumentParser:
        """Each action takes ``--url`` and ``--token`` too, after its name (given there, they win)."""
        action = add(*args, **kwargs)
        action.add_argument("--url", default=argparse.SUPPRESS, help="the API (default: $SRFABRIC_URL, else the "
                                                                     "running `srfabric up`'s)")
        action.add_argument("--token", default=argparse.SUPPRESS, help="its token (default: $SRFABRIC_TOKEN, "
                                                                       "else the running `srfabric up`'s)")
        return action

    actions.add_parser = add_with_connection
    return actions


def add_parser(commands: argparse._SubParsersAction) -> None:
    actions = api_command(commands, "chain", "create, list, show, delete chains through the REST API")
    create = actions.add_parser("create", help="deploy a chain described in a JSON file")
    create.add_argument("--file", required=True, type=Path)
    create.add_argument("--name", default=None, help="the port chain's name (default: the file's stem)")
    actions.add_parser("list", help="every port chain")
    for name in ("show", "delete"):
        action = actions.add_parser(name, help=f"{name} one port chain")
        action.add_argument("chain", help="name or id")


def read_description(path: Path) -> dict[str, Any]:
    """The chain description, checked: every error names the field."""
    try:
        data = json.loads(path.read_text())
    except OSError as error:
        raise SrfabricError("--file", f"{path}: {error.strerror}") from None
    except json.JSONDecodeError as error:
        raise SrfabricError("--file", f"{path}: not JSON ({error.msg} at line {error.lineno})") from None
    if not isinstance(data, dict):
        raise SrfabricError("--file", f"{path}: a JSON object is needed")
    if not isinstance(data.get("source"), str) or not data["source"]:
        raise SrfabricError("source", "a node name (string) is needed")
    if "destination" in data and (not isinstance(data["destination"], str) or not data["destination"]):
        raise SrfabricError("destination", "a node name (string) is needed, or leave it out (the chain then ends at "
                                           "its last function)")
    if not isinstance(data.get("match_fields", {}), dict):
        raise SrfabricError("match_fields", "an object of field: value is needed")
    chain = data.get("chain")
    if not isinstance(chain, list) or not chain:
        raise SrfabricError("chain", "a non-empty list of {name, direction} is needed")
    for index, step in enumerate(chain):
        if not isinstance(step, dict) or not isinstance(step.get("name"), str):
            raise SrfabricError(f"chain[{index}].name", "a function name (string) is needed")
        if not isinstance(step.get("service_function_parameters", {}), dict):
            raise SrfabricError(f"chain[{index}].service_function_parameters", "an object is needed, as the port pair "
                                                                              "API takes it (correlation, weight, "
                                                                              "rewrites)")
        if step.get("direction", "in") not in DIRECTIONS:
            raise SrfabricError(f"chain[{index}].direction", f"{step.get('direction')!r} is not one of "
                                                            f"{', '.join(DIRECTIONS)}")
    return data


def node_port(ports: list[dict[str, Any]], name: str, field: str) -> str:
    """The port a node is named by: its port's name or device_id, its address, or the name a running
    ``srfabric up`` printed for the host (h1: the port holding h1's address)."""
    address = read_up_state().get("hosts", {}).get(name, {}).get("ip", name)
    for port in ports:
        if name in (port["name"], port["device_id"]) \
                or any(ip.get("ip_address") == address for ip in port.get("fixed_ips") or []):
            return str(port["id"])
    raise SrfabricError(field, f"no port named {name!r} (by name, device_id, address or `srfabric up`'s host name)")


def _function_ports(ports: list[dict[str, Any]], name: str, direction: str, field: str) -> tuple[str, str]:
    own = sorted((p for p in ports if p["device_id"] == name or p["name"] in (f"{name}-in", f"{name}-out")),
                 key=lambda p: p["name"])
    if not own:
        raise SrfabricError(field, f"function {name!r} has no ports (device_id {name!r})")
    by_name = {p["name"]: p["id"] for p in own}
    ingress = by_name.get(f"{name}-in", own[0]["id"])
    egress = by_name.get(f"{name}-out", own[-1]["id"])
    if direction == "same":
        egress = ingress
    return str(ingress), str(egress)


def create_chain(client: SfcClient, data: dict[str, Any], name: str) -> dict[str, Any]:
    """The paper's four steps: flow classifier, port pairs, port pair groups, port chain."""
    ports = client.list("ports")
    classifier = {"name": f"{name}-fc", **data.get("match_fields", {}),
                  "logical_source_port": node_port(ports, data["source"], "source")}
    if "destination" in data:
        classifier["logical_destination_port"] = node_port(ports, data["destination"], "destination")
    pairs = []
    existing = {(p["ingress"], p["egress"]): p for p in client.list("port_pairs")}
    for index, step in enumerate(data["chain"]):
        ingress, egress = _function_ports(ports, step["name"], step.get("direction", "in"), f"chain[{index}]")
        parameters = {"service_function_parameters": step["service_function_parameters"]} \
            if "service_function_parameters" in step else {}  # none: networking-sfc's default, SR-unaware
        pair = existing.get((ingress, egress))
        if pair is None:
            pair = client.create("port_pairs", {"name": f"{name}-{step['name']}", "ingress": ingress,
                                                "egress": egress, **parameters}, "port_pair")
        elif parameters and any(pair["service_function_parameters"].get(key) != value
                                for key, value in parameters["service_function_parameters"].items()):
            raise SrfabricError(f"chain[{index}].service_function_parameters",
                                f"function {step['name']!r} already has port pair {pair['id']} on these ports, with "
                                f"{pair['service_function_parameters']}: a port pair's parameters cannot change")
        pairs.append(pair)
    fc = client.create("flow_classifiers", classifier, "flow_classifier")
    # A function already in a chain keeps its port pair in that chain's group: a pair sits in one group only, and
    # chains may share a group, so the new chain reuses the group that holds just this pair.
    shared = {(tuple(g["port_pairs"]), g["tap_enabled"]): g for g in client.list("port_pair_groups")}
    groups = []
    for step, pair in zip(data["chain"], pairs, strict=True):
        tap = step.get("direction") == "tap"
        group = shared.get(((pair["id"],), tap))
        if group is None:
            group = client.create("port_pair_groups", {"name": f"{name}-{step['name']}", "port_pairs": [pair["id"]],
                                                       "tap_enabled": tap}, "port_pair_group")
        groups.append(group)
    return client.create("port_chains", {"name": name, "port_pair_groups": [g["id"] for g in groups],
                                         "flow_classifiers": [fc["id"]]}, "port_chain")


def find_chain(client: SfcClient, key: str) -> dict[str, Any]:
    for chain in client.list("port_chains"):
        if key in (chain["id"], chain["name"]):
            return chain
    raise SrfabricError("chain", f"no port chain named {key!r}")


def delete_chain(client: SfcClient, chain: dict[str, Any]) -> None:
    """The chain, then the groups, pairs and classifiers no other chain uses."""
    client.delete("port_chains", chain["id"])
    others = client.list("port_chains")
    used_groups = {g for c in others for g in c["port_pair_groups"]}
    for group_id in chain["port_pair_groups"]:
        if group_id not in used_groups:
            group = client.show("port_pair_groups", group_id)
            client.delete("port_pair_groups", group_id)
            for pair_id in group["port_pairs"]:
                client.delete("port_pairs", pair_id)
    for fc_id in chain["flow_classifiers"]:
        client.delete("flow_classifiers", fc_id)


def run(args: argparse.Namespace) -> int:
    with SfcClient(args.url, args.token) as client:
        if args.action == "create":
            data = read_description(args.file)
            chain = create_chain(client, data, args.name or args.file.stem)
            steps = ", ".join(f"{step} {seconds * 1000:.1f} ms" for step, seconds in client.timings
                              if step not in ("ports", "port_pairs"))
            print(f"created port chain {chain['name']} ({chain['id']}, chain_id {chain['chain_id']}): {steps}")
        elif args.action == "list":
            for chain in client.list("port_chains"):
                print(f"{chain['id']}  {chain['name']:<20} chain_id {chain['chain_id']:<6} "
                      f"{len(chain['port_pair_groups'])} groups, {len(chain['flow_classifiers'])} classifiers")
        elif args.action == "show":
            chain = find_chain(client, args.chain)
            unrouted = client.get("/v2.0/srfabric/fabric")["fabric"].get("unrouted", [])
            # Not a field of networking-sfc's port chain: what the controller says now, added for the reader.
            chain["srfabric:unrouted"] = [p["reason"] for p in unrouted if p.get("port_chain") == chain["id"]]
            print(json.dumps(chain, indent=2))
        elif args.action == "delete":
            chain = find_chain(client, args.chain)
            delete_chain(client, chain)
            print(f"deleted port chain {chain['name']} ({chain['id']})")
    return 0
