"""The chains of the container-chaining study, built in a ``NetLab``.

Numbering follows the study: a chain of ``n`` namespaces ends in the namespace
that runs the iperf3 servers, and the ``n - 1`` before it forward (they are
where VNF work such as firewall rules goes). The iperf3 clients run in a
source namespace in front of the chain, so ``n = 1`` is one veth pair, the
calibration set-up.
"""

from __future__ import annotations

from dataclasses import dataclass

from srfabric_tools.lab.iperf import Traffic, measure
from srfabric_tools.lab.netlab import NetLab


@dataclass(frozen=True)
class NamespaceChain:
    client: str
    forwarders: list[str]
    server: str
    server_ip: str


def _segment_ips(index: int) -> tuple[str, str]:
    """Addresses of the two ends of link ``index`` (10.100+index/8 space kept small)."""
    return f"10.{100 + index // 250}.{index % 250}.1", f"10.{100 + index // 250}.{index % 250}.2"


def namespace_chain(lab: NetLab, n: int, via_ovs: bool = False) -> NamespaceChain:
    """Client, ``n - 1`` routing namespaces and the server namespace, in a line.

    With ``via_ovs`` every link between two namespaces goes through its own OVS
    bridge (the study's Fig. 6 right; here with veth ports, since internal ports
    of the userspace datapath are not kernel devices that can move namespaces).
    """
    names = [lab.add_ns("src")] + [lab.add_ns(f"ns{i}") for i in range(1, n + 1)]
    for index in range(n):
        left, right = names[index], names[index + 1]
        left_ip, right_ip = _segment_ips(index)
        if via_ovs:
            bridge = lab.ovs_bridge(f"b{index}")
            a, b = f"{lab.prefix}b{index}a", f"{lab.prefix}b{index}b"
            lab.veth(left, "right", None, a)
            lab.veth(right, "left", None, b)
            lab.ovs_port(bridge, a)
            lab.ovs_port(bridge, b)
            lab.ovs_normal(bridge)
            lab.offloads_off(left, "right")
            lab.offloads_off(right, "left")
        else:
            lab.veth(left, "right", right, "left")
        lab.addr(left, "right", f"{left_ip}/24")
        lab.addr(right, "left", f"{right_ip}/24")
    last_ip = _segment_ips(n - 1)[1]
    first_ip = _segment_ips(0)[0]
    for index, ns in enumerate(names):
        if index > 0:
            lab.forwarding(ns)
            if index > 1:
                lab.route(ns, f"{first_ip}/32", _segment_ips(index - 1)[0])
        if index + 1 < n:  # the server is not on this namespace's own link
            lab.route(ns, f"{last_ip}/32", _segment_ips(index)[1])
    return NamespaceChain(names[0], names[1:-1], names[-1], last_ip)


def ovs_chain(lab: NetLab, n: int, join: str) -> NamespaceChain:
    """Client and server namespaces at the two ends of ``n`` OVS bridges joined by veth or patch ports."""
    client, server = lab.add_ns("src"), lab.add_ns("dst")
    bridges = [lab.ovs_bridge(f"br{i}") for i in range(n)]
    for index in range(n - 1):
        a, b = f"{lab.prefix}j{index}a", f"{lab.prefix}j{index}b"
        if join == "patch":
            lab.ovs_patch(bridges[index], bridges[index + 1], a, b)
        else:
            lab.veth(None, a, None, b)
            lab.ovs_port(bridges[index], a)
            lab.ovs_port(bridges[index + 1], b)
    for ns, bridge, end in ((client, bridges[0], "c"), (server, bridges[-1], "s")):
        root = f"{lab.prefix}{end}"
        lab.veth(ns, "eth0", None, root)
        lab.ovs_port(bridge, root)
        lab.offloads_off(ns, "eth0")
    for bridge in bridges:
        lab.ovs_normal(bridge)
    lab.addr(client, "eth0", "10.100.0.1/24")
    lab.addr(server, "eth0", "10.100.0.2/24")
    return NamespaceChain(client, [], server, "10.100.0.2")


def chain_gbps(lab: NetLab, chain: NamespaceChain, traffic: Traffic) -> dict[str, float]:
    """One measurement across a chain, as the ``gbps`` metric."""
    return {"gbps": measure(lab, chain.client, chain.server, chain.server_ip, traffic).bits_per_second / 1e9}
