"""The admitted streams' protection at their talkers' edges (802.1Qci), in the core: for every time-triggered
stream the planner holds and the controller installed, its filter, gate and meter on the edge port its talker
sends into, with the gates' base time. Pure: what each edge should hold, as data; the edges' agents (or a bridge's
NETCONF server) carry it out.

Examples
--------
>>> from srfabric.model.topo import tsn_fig1
>>> from srfabric.model.stream import SteeredStream
>>> from srfabric.tsn.model.network import Stream
>>> from srfabric.tsn.runtime.live import LivePlanner, network_from_fabric
>>> fabric = tsn_fig1().to_fabric()
>>> planner = LivePlanner(network_from_fabric(fabric))
>>> placed = planner.admit(Stream("cam", "h1", "h3", period_ns=1_000_000, size_bytes=200))
>>> steered = {"cam": SteeredStream("cam", 12, "h1", "h3", placed.path[1:-1], udp_dst=5001)}
>>> edges = edge_protections(planner, fabric, lambda dpid, port: f"eth{port}", steered, 0)
>>> [(bridge, [plan.handle for plan in plans], ports) for bridge, (plans, ports) in edges.items()]
[('s1', [12], {'h1': 'eth1'})]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from srfabric.model.fabric import Fabric
from srfabric.model.stream import SteeredStream
from srfabric.tsn.protect.admitted import admitted_protections
from srfabric.tsn.protect.psfp import Identity, StreamProtection
from srfabric.tsn.runtime.live import LivePlanner

EdgePlans = dict[str, tuple[list[StreamProtection], dict[str, str]]]  # bridge -> plans, talker -> interface


def edge_protections(planner: LivePlanner, fabric: Fabric, port_name: Callable[[int, int], str | None],
                     steered: Mapping[str, SteeredStream], base_time_ns: int, tolerance_ns: int = 0) -> EdgePlans:
    """Each edge switch's plans (handle: the stream's ``owner``, its API ``stream_id``) and the interface each of
    its talkers sends into, as the switch names it. Streams the controller did not install, best-effort ones and
    ones whose hosts it does not know are left out."""
    identities, handles = {}, {}
    for name, stream in steered.items():
        talker, listener = fabric.hosts.get(stream.talker), fabric.hosts.get(stream.listener)
        if name not in planner.streams or not stream.time_triggered or talker is None or listener is None:
            continue
        identities[name] = Identity(talker.ip, listener.ip, stream.udp_src, stream.udp_dst)
        handles[name] = stream.owner
    out: EdgePlans = {}
    for plan in admitted_protections(planner, base_time_ns, identities, handles, tolerance_ns):
        plans, ports = out.setdefault(plan.bridge, ([], {}))
        plans.append(plan)
        host = fabric.hosts[plan.talker]
        ports[plan.talker] = port_name(host.dpid, host.port) or f"{plan.bridge}-eth{host.port}"
    return out
