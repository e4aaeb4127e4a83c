"""Source-routed chains on real Open vSwitch (userspace) in Mininet, with both codecs.

The network is the TSN paper's Fig. 1 with three service functions f1 (on s2),
f2 (on s4) and f3 (on s5); h1 talks to h3 through f1 -> f2 -> f3.
"""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Iterator

import pytest

from srfabric.codecs import MacNibbleCodec, MacVlanMplsCodec
from srfabric.model import Chain, FlowClassifier
from srfabric.model.topo import tsn_fig1
from srfabric_tools.testbed.scenario import Scenario
from srfabric_tools.testbed.traffic import iperf3_server_args, iperf3_tcp_args, parse_tcp

FUNCTIONS = ("f1", "f2", "f3")


@pytest.fixture(scope="module", params=["mac-nibble", "mac-vlan-mpls"])
def scenario(request: pytest.FixtureRequest) -> Iterator[Scenario]:
    spec = tsn_fig1()
    for name, switch in zip(FUNCTIONS, ("s2", "s4", "s5"), strict=True):
        spec.add_function(name, switch)
    with Scenario(spec, request.param) as running:
        h1, h3 = spec.hosts["h1"].ip, spec.hosts["h3"].ip
        running.add_chains([
            Chain("icmp", FlowClassifier(protocol="icmp", source_ip_prefix=f"{h1}/32",
                                         destination_ip_prefix=f"{h3}/32"), FUNCTIONS, "h1", "h3", 1),
            Chain("tcp", FlowClassifier(protocol="tcp", destination_port_range=(5201, 5201)), FUNCTIONS,
                  "h1", "h3", 2),
        ])
        yield running


def assert_order(scenario: Scenario, key: str, at_least: int) -> None:
    """Each function saw the flow, and saw it stamped by the function before it."""
    stats = scenario.peek_function_stats()
    marks = {name: index for index, name in enumerate(scenario.spec.functions, start=1)}
    previous = 0
    for name in FUNCTIONS:
        seen = stats[name]["flows"].get("forward", {}).get(key, {})
        assert seen.get("packets", 0) >= at_least, (name, key, seen)
        assert seen.get(f"from_mark_{previous}", 0) >= at_least, (name, key, seen)
        previous = marks[name]


def test_ping_crosses_the_chain(scenario: Scenario) -> None:
    assert scenario.testbed is not None
    output = scenario.testbed.node("h1").cmd(f"ping -c 20 -i 0.05 -W 1 {scenario.spec.hosts['h3'].ip}")
    received = int(re.search(r"(\d+) received", output).group(1))  # type: ignore[union-attr]
    assert received == 20, output
    assert_order(scenario, "icmp", 20)


def test_iperf3_tcp_crosses_the_chain(scenario: Scenario) -> None:
    assert scenario.testbed is not None
    server = scenario.testbed.popen("h3", iperf3_server_args(5201))
    time.sleep(0.5)
    client = scenario.testbed.popen("h1", iperf3_tcp_args(scenario.spec.hosts["h3"].ip, 5201, 2),
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    output, _ = client.communicate(timeout=30)
    scenario.testbed.stop_process(server)
    result = parse_tcp(output.decode())
    assert result.bits_per_second > 1e6, result
    assert_order(scenario, "tcp:5201", 100)


def test_transit_entries_do_not_grow_with_chains(scenario: Scenario) -> None:
    """Switches other than the ingress edge hold the same entries with 1 chain and with 50."""
    tcp = scenario.controller.chains["tcp"]
    scenario.runner.call(scenario.controller.remove_chain("tcp"))
    one = scenario.entry_counts()
    extra = [Chain(f"u{i}", FlowClassifier(protocol="udp", destination_port_range=(6000 + i, 6000 + i)),
                   FUNCTIONS, "h1", "h3", 100 + i) for i in range(49)]
    scenario.add_chains(extra)
    fifty = scenario.entry_counts()
    assert len(scenario.controller.chains) == 50
    assert fifty["s1"]["chain"] == one["s1"]["chain"] + 49  # ingress edge: one entry per chain
    for switch in ("s2", "s3", "s4", "s5"):
        assert fifty[switch]["total"] == one[switch]["total"], switch
        assert fifty[switch].get("chain", 0) == 0
    for chain in extra:
        scenario.runner.call(scenario.controller.remove_chain(chain.name))
    scenario.add_chains([tcp])
    assert scenario.entry_counts()["s1"]["chain"] == one["s1"]["chain"] + 1


SCAPY_SEND = """
import sys
from scapy.all import Ether, IP, IPv6, UDP, Dot1Q, sendp
from scapy.contrib.mpls import MPLS
kind, src, dst, vid, label, ttl, ip_src, ip_dst = sys.argv[1:9]
network = IPv6(src="fd00::1", dst="fd00::4") if sys.argv[10] == "IPv6" else IP(src=ip_src, dst=ip_dst)
if kind == "mac-nibble":
    frame = Ether(src=src, dst=dst) / network / UDP(sport=7777, dport=7777) / (b"x" * 32)
else:
    frame = (Ether(src=src, dst=dst) / Dot1Q(vlan=int(vid)) / MPLS(label=int(label), ttl=int(ttl), s=1)
             / network / UDP(sport=7777, dport=7777) / (b"x" * 32))
sendp(frame, iface=sys.argv[9], count=5, verbose=False)
"""


@pytest.mark.parametrize("family", ["IPv4", "IPv6"])
def test_forged_header_from_a_host_is_not_forwarded(scenario: Scenario, family: str) -> None:
    """h1 writes a header for s1 -> s2 -> s5 -> h3 itself, over IPv4 or IPv6; s1 must drop it and count it, h3
    must not see it."""
    assert scenario.testbed is not None
    hosts = scenario.spec.hosts
    ports = [3, 2, 4]  # the TSN paper's path 1 -> 2 -> 5 to host 3
    if scenario.codec == "mac-nibble":
        src, dst, vid, label, ttl = str(MacNibbleCodec().encode(ports)), "00:00:00:00:00:04", 0, 0, 0
    else:
        header = MacVlanMplsCodec().encode(ports)
        src, vid, label, ttl = "00:00:00:00:00:01", header.vlan_vid, header.labels[0], header.ttl
        dst = header.wire()["eth_dst"]
    capture = scenario.testbed.popen("h3", ["timeout", "4", "tcpdump", "-l", "-i", "h3-eth0", "-n", "-p",
                                            "udp port 7777 or vlan or mpls or ip6"],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(1.0)
    drops_before = scenario.entry_counts()["s1"]["forged_drops"]
    sent = scenario.testbed.node("h1").popen(
        ["/usr/bin/python3", "-c", SCAPY_SEND, scenario.codec, src, dst, str(vid), str(label), str(ttl),
         hosts["h1"].ip, hosts["h4"].ip, "h1-eth0", family], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert sent.wait(30) == 0, sent.stdout.read() if sent.stdout else ""
    out, err = capture.communicate(timeout=10)
    assert b"listening on" in err, err  # the capture ran
    assert out.strip() == b"", out  # and saw nothing: one line per packet
    assert scenario.entry_counts()["s1"]["forged_drops"] >= drops_before + 5
