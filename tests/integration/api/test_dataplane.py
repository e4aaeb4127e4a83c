"""What the API's chains do to traffic on real Open vSwitch: load balancing by weight, tap copies,
symmetric chains, and updates that touch only the ingress (SRE) switch."""

from __future__ import annotations

from typing import Any

from srfabric.cli.client import SfcClient
from srfabric_tools.testbed.api_lab import ApiLab, function_flows
from srfabric_tools.testbed.udp_probe import RECEIVE, SEND_UDP

SEND_TCP = """
import socket, sys, time
opened = []
for port in range({low}, {high}):
    s = socket.socket(); s.setblocking(False); s.connect_ex(("{dst}", port)); opened.append(s)
time.sleep(1.5)
"""


def chain(client: SfcClient, lab: ApiLab, groups: list[list[tuple[str, int]]], fc: dict[str, Any],
          tap: str | None = None, symmetric: bool = False, lb_fields: tuple[str, ...] = ()) -> dict[str, Any]:
    """A port chain through ``groups`` of (function, weight), optionally tapped; made through the API."""
    classifier = client.create("flow_classifiers", {**fc, "logical_source_port": lab.ports["h1"],
                                                    "logical_destination_port": lab.ports["h2"]})
    group_ids = []
    for members in groups:
        pairs = [client.create("port_pairs", {"ingress": lab.ports[f"{f}-in"], "egress": lab.ports[f"{f}-out"],
                                              "service_function_parameters": {"weight": w,
                                                                              "correlation": "mpls"}})["id"]
                 for f, w in members]
        group_ids.append(client.create("port_pair_groups", {
            "port_pairs": pairs, "port_pair_group_parameters": {"lb_fields": list(lb_fields)}})["id"])
    if tap is not None:
        pair = client.create("port_pairs", {"ingress": lab.ports[f"{tap}-in"], "egress": lab.ports[f"{tap}-out"],
                                            "service_function_parameters": {"correlation": "mpls"}})
        group_ids.append(client.create("port_pair_groups", {"port_pairs": [pair["id"]], "tap_enabled": True})["id"])
    return client.create("port_chains", {"port_pair_groups": group_ids, "flow_classifiers": [classifier["id"]],
                                         "chain_parameters": {"symmetric": symmetric}})


def remove(client: SfcClient, pc: dict[str, Any]) -> None:
    client.delete("port_chains", pc["id"])
    for group_id in pc["port_pair_groups"]:
        pairs = client.show("port_pair_groups", group_id)["port_pairs"]
        client.delete("port_pair_groups", group_id)
        for pair in pairs:
            client.delete("port_pairs", pair)
    for fc in pc["flow_classifiers"]:
        client.delete("flow_classifiers", fc)


def python_in(lab: ApiLab, node: str, script: str) -> None:
    lab.cmd(node, f"python3 -c '{script}'")


def test_weighted_load_balancing(lab: ApiLab) -> None:
    """Two port pairs of weights 1 and 3, 400 distinct TCP flows: the split is within 10 points of 25/75."""
    with lab.serve.client() as client:
        pc = chain(client, lab, [[("v1", 1), ("v2", 3)]], {"protocol": "tcp", "destination_port_range_min": 20000,
                                                          "destination_port_range_max": 20399})
        try:
            before = {f: set(function_flows(s)) for f, s in lab.function_stats(0).items()}
            python_in(lab, "h1", SEND_TCP.format(low=20000, high=20400, dst=lab.spec.hosts["h2"].ip))
            stats = lab.function_stats()
            flows = {f: {k for k in set(function_flows(stats[f])) - before[f] if k.startswith("tcp:2")}
                     for f in ("v1", "v2")}
            assert not flows["v1"] & flows["v2"]  # a flow sticks to one pair
            total = len(flows["v1"]) + len(flows["v2"])
            assert total >= 390, total
            assert abs(len(flows["v2"]) / total - 0.75) <= 0.10, {f: len(k) for f, k in flows.items()}
        finally:
            remove(client, pc)


def test_lb_fields_pick_the_port_pair(lab: ApiLab) -> None:
    """Balanced on tcp_dst: 400 ports split by weight, and connections to one port, from any source
    port, always reach the same pair (the switch's 5-tuple hash would split half of them)."""
    with lab.serve.client() as client:
        pc = chain(client, lab, [[("v1", 1), ("v2", 3)]], {"protocol": "tcp", "destination_port_range_min": 23000,
                                                          "destination_port_range_max": 23399},
                   lb_fields=("tcp_dst",))
        try:
            before = {f: set(function_flows(s)) for f, s in lab.function_stats(0).items()}
            for _ in range(2):  # twice: new source ports, same destination ports
                python_in(lab, "h1", SEND_TCP.format(low=23000, high=23400, dst=lab.spec.hosts["h2"].ip))
            stats = lab.function_stats()
            ports = {f: {k: c["packets"] for k, c in function_flows(stats[f]).items()
                         if k.startswith("tcp:23") and k not in before[f]} for f in ("v1", "v2")}
            assert not set(ports["v1"]) & set(ports["v2"]), set(ports["v1"]) & set(ports["v2"])
            total = len(ports["v1"]) + len(ports["v2"])
            assert total >= 390, total
            assert abs(len(ports["v2"]) / total - 0.75) <= 0.10, {f: len(k) for f, k in ports.items()}
            assert sum(ports["v1"].values()) + sum(ports["v2"].values()) >= 2 * 390  # both rounds arrived
        finally:
            remove(client, pc)


def test_tap_receives_a_copy(lab: ApiLab) -> None:
    with lab.serve.client() as client:
        pc = chain(client, lab, [[("v1", 1)]], {"protocol": "udp", "destination_port_range_min": 21000,
                                               "destination_port_range_max": 21000}, tap="v4")
        try:
            script, count = lab.workdir / "receive.py", lab.workdir / "received"
            script.write_text(RECEIVE.format(port=21000, out=count))
            lab.cmd("h2", f"python3 {script} &")
            lab.wait_listening("h2", 21000)
            python_in(lab, "h1", SEND_UDP.format(count=200, dst=lab.spec.hosts["h2"].ip, port=21000))
            stats = lab.function_stats(3.0)
            seen = {f: function_flows(stats[f]).get("udp:21000", {}).get("packets", 0) for f in ("v1", "v4")}
            assert seen["v1"] >= 195 and seen["v4"] >= 195, seen
            received = int(count.read_text())
            assert 195 <= received <= 200, received  # the copy never reaches the destination
        finally:
            remove(client, pc)


def test_symmetric_chain_carries_tcp_both_ways_in_reverse_order(lab: ApiLab) -> None:
    with lab.serve.client() as client:
        pc = chain(client, lab, [[("v1", 1)], [("v2", 1)]], {"protocol": "tcp", "destination_port_range_min": 5201,
                                                             "destination_port_range_max": 5201}, symmetric=True)
        try:
            server = lab.testbed.popen("h2", ["iperf3", "-s", "-1", "-p", "5201"])  # type: ignore[union-attr]
            out = lab.cmd("h1", f"sleep 0.5; iperf3 -c {lab.spec.hosts['h2'].ip} -p 5201 -t 1 -b 5M -J")
            lab.testbed.stop_process(server)  # type: ignore[union-attr]
            assert '"sum_received"' in out, out[-500:]
            stats = lab.function_stats()
            marks = {f: stats[f]["name"] for f in ("v1", "v2")}
            forward_v2 = function_flows(stats["v2"], "forward").get("tcp:5201", {})
            back = {f: {k: v for k, v in function_flows(stats[f], "reverse").items() if k.startswith("tcp:")}
                    for f in ("v1", "v2")}
            assert forward_v2.get("packets", 0) > 10, (marks, forward_v2)
            assert forward_v2.get("from_mark_1", 0) > 10  # forward: v1 then v2
            replies_v1 = sum(c.get("packets", 0) for c in back["v1"].values())
            assert replies_v1 > 10, back
            assert sum(c.get("from_mark_2", 0) for c in back["v1"].values()) > 10, back  # reverse: v2 then v1
        finally:
            remove(client, pc)


def test_update_changes_only_the_ingress_switch(lab: ApiLab) -> None:
    with lab.serve.client() as client:
        pc = chain(client, lab, [[("v1", 1)]], {"protocol": "udp", "destination_port_range_min": 22000,
                                               "destination_port_range_max": 22000})
        try:
            pair = client.create("port_pairs", {"ingress": lab.ports["v3-in"], "egress": lab.ports["v3-out"],
                                                "service_function_parameters": {"correlation": "mpls"}})
            group = client.create("port_pair_groups", {"port_pairs": [pair["id"]]})
            before = lab.dump_flows()
            updated = client.update("port_chains", pc["id"], {"port_pair_groups": [group["id"]]})
            after = lab.dump_flows()
            changed = {name for name in before if before[name] != after[name]}
            # h1's edge writes the new path; s2 and s3 are untouched.
            assert changed == {"s1"}, {n: set(before[n]) ^ set(after[n]) for n in changed}
            client.delete("port_pair_groups", pc["port_pair_groups"][0])
            pc = updated
        finally:
            remove(client, pc)
