"""Many chains made through the API on the small line fabric (``api_lab.line_spec`` with four functions): the
port pair groups and the chains, each with its own UDP port. Used by the API's restart and controller-pair
tests and by the take-over benchmark."""

from __future__ import annotations

import itertools

from srfabric.cli.client import SfcClient
from srfabric_tools.testbed.api_lab import ApiLab

FUNCTIONS = ("v1", "v2", "v3", "v4")


def make_groups(client: SfcClient, lab: ApiLab, copies: int = 2, functions: tuple[str, ...] = FUNCTIONS,
                aware: bool = True) -> list[str]:
    """Port pair groups over ``functions``, ``copies`` per function (extra ports bound to the same switch
    ports), so that enough distinct ordered group lists exist for the chains; SR-aware (correlation mpls), or
    SR-unaware (networking-sfc's default correlation None: the fabric proxies the function)."""
    groups = []
    parameters = {"correlation": "mpls"} if aware else {}
    for function, copy in itertools.product(functions, range(copies)):
        ends = {}
        for side in ("in", "out"):
            name = f"{function}-{side}" if copy == 0 else f"{function}-{side}-{copy}"
            if name not in lab.ports:
                original = client.show("ports", lab.ports[f"{function}-{side}"])
                lab.ports[name] = client.create("ports", {"name": name, "device_id": function,
                                                          "binding:profile": original["binding:profile"]})["id"]
            ends[side] = lab.ports[name]
        pair = client.create("port_pairs", {"ingress": ends["in"], "egress": ends["out"],
                                            "service_function_parameters": parameters})
        groups.append(client.create("port_pair_groups", {"port_pairs": [pair["id"]]})["id"])
    return groups


def create_chains(client: SfcClient, lab: ApiLab, groups: list[str], count: int, first_port: int) -> list[str]:
    orders = itertools.chain(itertools.permutations(groups, 3), itertools.permutations(groups, 4))
    made = []
    for index, order in zip(range(count), orders, strict=False):
        port = first_port + index
        fc = client.create("flow_classifiers", {"protocol": "udp", "destination_port_range_min": port,
                                                "destination_port_range_max": port,
                                                "logical_source_port": lab.ports["h1"],
                                                "logical_destination_port": lab.ports["h2"]})
        made.append(client.create("port_chains", {"port_pair_groups": list(order),
                                                  "flow_classifiers": [fc["id"]]})["id"])
    return made
