"""SR-unaware service functions (networking-sfc's correlation None) on a live fabric, through the SR proxy.

h1 - s1 - s2 - s3 - h2, h3 on s2, the functions v1, v2, v3 on s2:

- v3 is the testbed's bump-in-the-wire function (it forwards frames as they come and counts them);
- v1 is a Linux routing namespace: it takes frames addressed to its MAC, routes them by IP (new MAC
  addresses, TTL minus one) and asks the fabric (ARP) for the next hop;
- v2 is a source NAT namespace (nftables masquerade to its outside address, which the controller learns from
  its ARP): replies come back to that address, and v2 sends them on to the original source.

A chain h1 -> v3 -> v1 -> v2 -> h2 carries UDP (h2 sees the NAT's address and a TTL two less), TCP (iperf3)
and ping with its replies; a chain without a destination does the same to h2 and h3. Both codecs on Open
vSwitch; the XDP data plane refuses the proxy by name (unit-tested in tests/unit/xdp).
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from srfabric.cli.client import SfcClient
from srfabric.model.topo import TopoSpec
from srfabric_tools.testbed.api_lab import ApiLab, ServeProcess, function_flows, line_spec
from tests.integration.api.test_dataplane import SEND_UDP, python_in, remove

NAT_OUTSIDE = "10.0.0.200"

RECEIVE_TTL = """
import json, socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IP, 12, 1)  # IP_RECVTTL (Linux), not named by Python
s.bind(("0.0.0.0", {port}))
s.settimeout(1.5)
seen = []
try:
    while True:
        data, ancillary, _, sender = s.recvmsg(2048, 64)
        ttl = [int.from_bytes(d[:4], "little") for level, kind, d in ancillary if kind == 2]  # IP_TTL
        seen.append([sender[0], ttl[0] if ttl else None])
except OSError:
    pass
open("{out}", "w").write(json.dumps(seen))
"""


def spec() -> TopoSpec:
    made = line_spec(3)
    made.add_host("h3", "s2")
    return made


def router(lab: ApiLab) -> None:
    """v1 routes: an address on each side, every host on-link behind its egress side."""
    for command in ("ip addr add 10.1.1.1/32 dev v1-eth0", "ip addr add 10.1.1.2/32 dev v1-eth1",
                    "ip route add 10.0.0.0/8 dev v1-eth1"):
        lab.cmd("v1", command)


def nat(lab: ApiLab) -> None:
    """v2 masquerades what it forwards out of its egress side; replies to h1 go back out of its ingress side."""
    for command in ("ip addr add 10.1.2.1/32 dev v2-eth0", f"ip addr add {NAT_OUTSIDE}/32 dev v2-eth1",
                    "ip route add 10.0.0.0/8 dev v2-eth1", f"ip route add {lab.spec.hosts['h1'].ip}/32 dev v2-eth0",
                    "nft add table ip srproxy",
                    "nft 'add chain ip srproxy post { type nat hook postrouting priority 100 ; }'",
                    "nft add rule ip srproxy post oifname v2-eth1 masquerade"):
        lab.cmd("v2", command)


@pytest.fixture(scope="module", params=["mac-nibble", "mac-vlan-mpls"])
def lab(request: pytest.FixtureRequest) -> Iterator[ApiLab]:
    folder = Path(tempfile.mkdtemp(prefix="srfabric-db-"))
    with ServeProcess(f"sqlite:///{folder}/api.db", codec=request.param) as serve, \
            ApiLab(spec(), serve) as running:
        for name in ("v1", "v2"):  # these two are namespaces that route, not the forwarding process
            running.testbed.stop_process(running.vnfs.pop(name))  # type: ignore[union-attr]
            running.cmd(name, "sysctl -qw net.ipv4.ip_forward=1 net.ipv4.conf.all.rp_filter=0 "
                              "net.ipv4.conf.default.rp_filter=0")
            for side in ("eth0", "eth1"):
                running.cmd(name, f"sysctl -qw net.ipv4.conf.{name}-{side}.rp_filter=0")
        router(running)
        nat(running)
        yield running


def proxied_pair(client: SfcClient, lab: ApiLab, function: str, rewrites: list[str]) -> str:
    """A port pair group of ``function``, SR-unaware: its ports carry the namespace's MACs (as Neutron's do)."""
    ends = {}
    for side, interface in (("in", "eth0"), ("out", "eth1")):
        original = client.show("ports", lab.ports[f"{function}-{side}"])
        mac = lab.cmd(function, f"cat /sys/class/net/{function}-{interface}/address").strip()
        ends[side] = client.create("ports", {"name": f"{function}-{side}-sr", "device_id": function,
                                             "mac_address": mac,
                                             "binding:profile": original["binding:profile"]})["id"]
    pair = client.create("port_pairs", {"ingress": ends["in"], "egress": ends["out"],
                                        "service_function_parameters": {"correlation": None, "rewrites": rewrites}})
    return client.create("port_pair_groups", {"port_pairs": [pair["id"]]})["id"]


def chain(client: SfcClient, lab: ApiLab, destination: str | None) -> dict[str, Any]:
    groups = [proxied_pair(client, lab, "v3", []), proxied_pair(client, lab, "v1", []),
              proxied_pair(client, lab, "v2", ["ip_src"])]
    fc = {"logical_source_port": lab.ports["h1"]}
    if destination is not None:
        fc["logical_destination_port"] = lab.ports[destination]
    classifier = client.create("flow_classifiers", fc)
    return client.create("port_chains", {"port_pair_groups": groups, "flow_classifiers": [classifier["id"]]})


def remove_with_ports(client: SfcClient, pc: dict[str, Any]) -> None:
    pairs = [client.show("port_pairs", p) for g in pc["port_pair_groups"]
             for p in client.show("port_pair_groups", g)["port_pairs"]]
    remove(client, pc)
    for pair in pairs:
        for side in ("ingress", "egress"):
            client.delete("ports", pair[side])


def udp_ttls(lab: ApiLab, host: str, port: int) -> list[list[Any]]:
    script, out = lab.workdir / f"ttl-{host}-{port}.py", lab.workdir / f"ttl-{host}-{port}.json"
    script.write_text(RECEIVE_TTL.format(port=port, out=out))
    lab.cmd(host, f"python3 {script} &")
    lab.wait_listening(host, port)
    python_in(lab, "h1", SEND_UDP.format(count=100, dst=lab.spec.hosts[host].ip, port=port))
    lab.cmd("h1", "sleep 2")
    return json.loads(out.read_text())


def crossing(lab: ApiLab, host: str, port: int) -> None:
    """UDP, ping and TCP from h1 to ``host`` through v3, the router and the NAT, replies included."""
    lab.cmd("h1", f"ping -c 2 -i 0.3 -W 1 {lab.spec.hosts[host].ip}")  # the namespaces learn their next hops
    seen = udp_ttls(lab, host, port)
    assert len(seen) >= 95, seen[:5]
    assert {tuple(s) for s in seen} == {(NAT_OUTSIDE, 62)}, seen[:5]  # NATed, routed twice (v1 and v2)
    counted = function_flows(lab.function_stats()["v3"]).get(f"udp:{port}", {})
    assert counted.get("packets", 0) >= 95, counted
    out = lab.cmd("h1", f"ping -c 5 -i 0.2 -W 1 {lab.spec.hosts[host].ip}")
    assert " 0% packet loss" in out, out  # the replies find the NAT's address, and it finds h1
    server = lab.testbed.popen(host, ["iperf3", "-s", "-1", "-p", str(port)])  # type: ignore[union-attr]
    out = lab.cmd("h1", f"sleep 0.5; iperf3 -c {lab.spec.hosts[host].ip} -p {port} -t 1 -b 5M -J")
    lab.testbed.stop_process(server)  # type: ignore[union-attr]
    report = json.loads(out)
    assert report["end"]["sum_received"]["bytes"] > 100_000, out[-500:]


def test_a_chain_through_a_router_and_a_nat_delivers_traffic_and_replies(lab: ApiLab) -> None:
    with lab.serve.client() as client:
        pc = chain(client, lab, "h2")
        try:
            crossing(lab, "h2", 25000)
            fabric = client.get("/v2.0/srfabric/fabric")["fabric"]
            assert any(h["ip"] == NAT_OUTSIDE for h in fabric["hosts"]), fabric["hosts"]  # learned from its ARP
        finally:
            remove_with_ports(client, pc)


def test_a_destinationless_chain_through_them_reaches_two_destinations(lab: ApiLab) -> None:
    with lab.serve.client() as client:
        pc = chain(client, lab, None)
        try:
            for host, port in (("h2", 25100), ("h3", 25101)):
                crossing(lab, host, port)
        finally:
            remove_with_ports(client, pc)
