"""IPv6 on a live fabric (Open vSwitch in Mininet, both codecs): dual-stack hosts learned by Neighbour
Discovery, IPv6 TCP (iperf3) through a 3-function chain made through the API with an IPv6 classifier, the
functions SR-aware (the header rides through them) or SR-unaware (the proxy strips it), crossed in order;
IPv4 beside it unchanged."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from srfabric.cli.client import SfcClient
from srfabric_tools.testbed.api_lab import ApiLab, ServeProcess, function_flows, line_spec
from tests.integration.api.test_dataplane import remove

FUNCTIONS = ("v1", "v2", "v3")


@pytest.fixture(scope="module", params=["mac-nibble", "mac-vlan-mpls"])
def lab(request: pytest.FixtureRequest) -> Iterator[ApiLab]:
    folder = Path(tempfile.mkdtemp(prefix="srfabric-db-"))
    with ServeProcess(f"sqlite:///{folder}/api.db", codec=request.param) as serve, \
            ApiLab(line_spec(3, ipv6=True), serve) as running:
        yield running


def chain(client: SfcClient, lab: ApiLab, correlation: str | None, port: int) -> dict[str, Any]:
    groups = []
    for function in FUNCTIONS:
        pair = client.create("port_pairs", {"ingress": lab.ports[f"{function}-in"],
                                            "egress": lab.ports[f"{function}-out"],
                                            "service_function_parameters": {"correlation": correlation}})
        groups.append(client.create("port_pair_groups", {"port_pairs": [pair["id"]]})["id"])
    classifier = client.create("flow_classifiers", {
        "ethertype": "IPv6", "protocol": "tcp", "destination_port_range_min": port,
        "destination_port_range_max": port, "source_ip_prefix": f"{lab.spec.hosts['h1'].ip6}/128",
        "logical_source_port": lab.ports["h1"], "logical_destination_port": lab.ports["h2"]})
    return client.create("port_chains", {"port_pair_groups": groups, "flow_classifiers": [classifier["id"]]})


def test_dual_stack_hosts_are_learned_and_reach_each_other(lab: ApiLab) -> None:
    with lab.serve.client() as client:
        hosts = {h["ip"]: h for h in client.get("/v2.0/srfabric/fabric")["fabric"]["hosts"]}
        ports = {ip["ip_address"] for p in client.list("ports") for ip in p["fixed_ips"]}
    assert {h.ip6 for h in lab.spec.hosts.values()} <= ports, ports  # learned from Neighbour Discovery
    assert len(hosts) == len(lab.spec.hosts)
    for family, address in (("-6", lab.spec.hosts["h2"].ip6), ("-4", lab.spec.hosts["h2"].ip)):
        out = lab.cmd("h1", f"ping {family} -c 3 -i 0.2 -W 1 {address}")
        assert " 0% packet loss" in out, out


@pytest.mark.parametrize("correlation", ["mpls", None], ids=["sr-aware", "sr-unaware"])
def test_ipv6_tcp_crosses_a_three_function_chain_in_order(lab: ApiLab, correlation: str | None) -> None:
    port = 5201 if correlation else 5202
    with lab.serve.client() as client:
        pc = chain(client, lab, correlation, port)
        try:
            server = lab.testbed.popen("h2", ["iperf3", "-s", "-1", "-p", str(port)])  # type: ignore[union-attr]
            out = lab.cmd("h1", f"sleep 0.5; iperf3 -6 -c {lab.spec.hosts['h2'].ip6} -p {port} -t 1 -b 5M -J")
            lab.testbed.stop_process(server)  # type: ignore[union-attr]
            assert '"sum_received"' in out, out[-500:]
            stats = lab.function_stats()
            seen = {f: function_flows(stats[f], "forward").get(f"tcp6:{port}", {}) for f in FUNCTIONS}
            assert seen["v1"].get("packets", 0) > 20, seen
            assert seen["v2"].get("from_mark_1", 0) > 20 and seen["v3"].get("from_mark_2", 0) > 20, seen  # in order
        finally:
            remove(client, pc)
