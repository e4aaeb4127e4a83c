"""networking-sfc's usual classifier (a logical source port, no destination) on a live fabric: the chain's
traffic crosses its functions in order, then goes on to wherever its destination address leads.

h1 - s1 - s2 - s3 - h2, with h3 and the functions v1, v2 on s2: traffic from h1 crosses v1 then v2 and
leaves s2 for h3 (on s2 itself) or h2 (a new header at s2, chosen by destination address). UDP counted at
the receivers and in the functions, and TCP (iperf3) to both. h2 is also the gateway (``serve --gateway``) to
an address of no host.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from srfabric.cli.client import SfcClient
from srfabric.model.topo import TopoSpec
from srfabric_tools.testbed.api_lab import ApiLab, ServeProcess, function_flows, line_spec
from tests.integration.api.test_dataplane import RECEIVE, SEND_UDP, python_in, remove


def spec() -> TopoSpec:
    made = line_spec(2)
    made.add_host("h3", "s2")
    return made


OUTSIDE = "192.0.2.7"  # an address of no host of the fabric: h2 is the gateway to it


@pytest.fixture(scope="module", params=[("ovs", "mac-nibble"), ("ovs", "mac-vlan-mpls"), ("xdp", "mac-nibble")],
                ids=lambda p: "-".join(p))
def lab(request: pytest.FixtureRequest) -> Iterator[ApiLab]:
    switch, codec = request.param
    folder = Path(tempfile.mkdtemp(prefix="srfabric-db-"))
    made = spec()
    with ServeProcess(f"sqlite:///{folder}/api.db", codec=codec,
                      extra_args=("--gateway", made.hosts["h2"].ip)) as serve, \
            ApiLab(made, serve, switch=switch) as running:
        # h2 stands for an uplink router: the outside address is its own; h1 and h3 reach it through h2.
        running.cmd("h2", f"ip addr add {OUTSIDE}/32 dev lo")
        for host in ("h1", "h3"):
            running.cmd(host, f"ip route add {OUTSIDE}/32 via {made.hosts['h2'].ip}")
        yield running


def open_chain(lab: ApiLab, client: SfcClient) -> dict[str, Any]:
    """A port chain from h1 through v1 then v2, its classifier naming only its source port."""
    classifier = client.create("flow_classifiers", {"logical_source_port": lab.ports["h1"]})
    groups = []
    for function in ("v1", "v2"):
        pair = client.create("port_pairs", {"ingress": lab.ports[f"{function}-in"],
                                            "egress": lab.ports[f"{function}-out"],
                                            "service_function_parameters": {"correlation": "mpls"}})
        groups.append(client.create("port_pair_groups", {"port_pairs": [pair["id"]]})["id"])
    return client.create("port_chains", {"port_pair_groups": groups, "flow_classifiers": [classifier["id"]]})


def test_a_chain_without_destination_carries_udp_and_tcp_to_two_destinations(lab: ApiLab) -> None:
    with lab.serve.client() as client:
        pc = open_chain(lab, client)
        try:
            received = {}
            for host, port in (("h2", 24000), ("h3", 24001)):
                script, count = lab.workdir / f"receive-{host}.py", lab.workdir / f"received-{host}"
                script.write_text(RECEIVE.format(port=port, out=count))
                lab.cmd(host, f"python3 {script} &")
                received[host] = count
                lab.wait_listening(host, port)
            for host, port in (("h2", 24000), ("h3", 24001)):
                python_in(lab, "h1", SEND_UDP.format(count=200, dst=lab.spec.hosts[host].ip, port=port))
            stats = lab.function_stats(2.5)
            for port in (24000, 24001):
                seen = {f: function_flows(stats[f]).get(f"udp:{port}", {}) for f in ("v1", "v2")}
                assert seen["v1"].get("packets", 0) >= 195, seen
                assert seen["v2"].get("from_mark_1", 0) >= 195, seen  # through v1, then v2
            for host, count in received.items():
                assert 195 <= int(count.read_text()) <= 200, (host, count.read_text())
            for host in ("h2", "h3"):
                server = lab.testbed.popen(host, ["iperf3", "-s", "-1", "-p", "5201"])  # type: ignore[union-attr]
                out = lab.cmd("h1", f"sleep 0.5; iperf3 -c {lab.spec.hosts[host].ip} -p 5201 -t 1 -b 5M -J")
                lab.testbed.stop_process(server)  # type: ignore[union-attr]
                assert '"sum_received"' in out, (host, out[-500:])
            stats = lab.function_stats()
            tcp = {f: sum(c.get("packets", 0) for k, c in function_flows(stats[f], "forward").items()
                          if k.startswith("tcp:5201")) for f in ("v1", "v2")}
            assert tcp["v1"] > 20 and tcp["v2"] > 20, tcp
        finally:
            remove(client, pc)


def test_everything_else_goes_to_the_gateway_and_back_through_a_chain_and_without(lab: ApiLab) -> None:
    """Addresses of no host go to the gateway (``serve --gateway``): plain traffic from any edge, and a
    destination-less chain's traffic after its functions; the gateway's replies come back with its MAC."""
    out = lab.cmd("h3", f"ping -c 3 -i 0.2 -W 1 {OUTSIDE}")  # no chain: the default route for everything else
    assert " 0% packet loss" in out, out
    with lab.serve.client() as client:
        gateway = client.get("/v2.0/srfabric/fabric")["fabric"]["gateway"]
        assert gateway["ip"] == lab.spec.hosts["h2"].ip and gateway["host"] is not None  # learned (by its ARP)
        pc = open_chain(lab, client)
        try:
            script, count = lab.workdir / "receive-outside.py", lab.workdir / "received-outside"
            script.write_text(RECEIVE.format(port=24002, out=count))
            lab.cmd("h2", f"python3 {script} &")
            lab.wait_listening("h2", 24002)
            python_in(lab, "h1", SEND_UDP.format(count=200, dst=OUTSIDE, port=24002))
            stats = lab.function_stats(2.5)
            seen = {f: function_flows(stats[f]).get("udp:24002", {}) for f in ("v1", "v2")}
            assert seen["v1"].get("packets", 0) >= 195 and seen["v2"].get("from_mark_1", 0) >= 195, seen
            assert 195 <= int(count.read_text()) <= 200, count.read_text()
            server = lab.testbed.popen("h2", ["iperf3", "-s", "-1", "-p", "5202"])  # type: ignore[union-attr]
            out = lab.cmd("h1", f"sleep 0.5; iperf3 -c {OUTSIDE} -p 5202 -t 1 -b 5M -J")
            lab.testbed.stop_process(server)  # type: ignore[union-attr]
            assert '"sum_received"' in out, out[-500:]
        finally:
            remove(client, pc)
