"""The fabrics the lab's source-routing experiments run on, as pure ``TopoSpec`` data."""

from __future__ import annotations

from srfabric.model.chain import Chain, FlowClassifier
from srfabric.model.topo import TopoSpec

# The OpenStack study's Table I: C_i crosses i service functions.
TABLE_I: dict[str, tuple[str, ...]] = {
    "C0": (),
    "C1": ("v1",),
    "C2": ("v1", "v6"),
    "C3": ("v1", "v2", "v6"),
    "C4": ("v1", "v2", "v4", "v6"),
    "C5": ("v1", "v2", "v4", "v3", "v6"),
    "C6": ("v1", "v2", "v4", "v3", "v5", "v6"),
}
# Table II: one function, on S's node, on D's node, or on another node.
TABLE_II: dict[str, str] = {"same as S": "v1", "same as D": "v6", "other node": "v2"}


def compute_nodes() -> TopoSpec:
    """Four compute nodes around a data-network switch, placed like the study's Fig. 3.

    Node n1 holds S and v1, n2 holds D and v6, n3 holds v2 and v3, n4 holds v4 and
    v5, so C1..C4 add one function per node starting where S and D are, and C5, C6
    cross between nodes as often as they can. Every node-to-network link is a
    VXLAN tunnel in the lab, like the study's compute nodes.

    >>> spec = compute_nodes()
    >>> sorted((f.name, f.switch) for f in spec.functions.values())[:2]
    [('v1', 'n1'), ('v2', 'n3')]
    """
    spec = TopoSpec()
    for index in range(1, 5):
        spec.add_switch(f"n{index}", "edge", dpid=index)
    spec.add_switch("dc", "core", dpid=0x10)
    for index in range(1, 5):
        spec.add_link(f"n{index}", "dc", 1, index)
    spec.add_host("S", "n1")
    spec.add_host("D", "n2")
    for name, node in (("v1", "n1"), ("v6", "n2"), ("v2", "n3"), ("v3", "n3"), ("v4", "n4"), ("v5", "n4")):
        spec.add_function(name, node)
    return spec


def line(switches: int = 5, functions: int = 10) -> TopoSpec:
    """Switches in a line, S on the first, D on the last, functions spread evenly in order.

    A chain of v1..vn moves left to right, so it enters every switch once per port
    and hop-by-hop rules can steer it too.

    >>> spec = line(5, 10)
    >>> [spec.functions[f"v{i}"].switch for i in (1, 2, 3, 10)]
    ['sw1', 'sw1', 'sw2', 'sw5']
    """
    spec = TopoSpec()
    for index in range(1, switches + 1):
        spec.add_switch(f"sw{index}", "edge", dpid=index)
    for index in range(1, switches):
        spec.add_link(f"sw{index}", f"sw{index + 1}")
    spec.add_host("S", "sw1")
    spec.add_host("D", f"sw{switches}")
    per_switch = -(-functions // switches)
    for index in range(functions):
        spec.add_function(f"v{index + 1}", f"sw{index // per_switch + 1}")
    return spec


def chain_between(spec: TopoSpec, name: str, functions: tuple[str, ...], chain_id: int) -> Chain:
    """All IPv4 traffic from S to D (iperf3 and ping alike) through ``functions``."""
    source, destination = spec.hosts["S"], spec.hosts["D"]
    classifier = FlowClassifier(source_ip_prefix=f"{source.ip}/32", destination_ip_prefix=f"{destination.ip}/32")
    return Chain(name, classifier, functions, "S", "D", chain_id)
