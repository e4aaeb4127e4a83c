"""A digest of the compiled tables (every entry with its wire cookie, every group) in 22 scenarios: both codecs,
chains with load balancing, lb_fields, taps and no destination, hop-by-hop rules, streams, a gateway. Run it on two
trees and compare: a refactor that leaves the output alike changed no table.

    cd /tmp && .venv/bin/python /path/to/scripts/table_digests.py TREE   (outside the tree: TREE goes first)
"""

import hashlib
import sys
from dataclasses import replace

sys.path.insert(0, sys.argv[1])

from srfabric_tools.lab.fabric_topos import chain_between, line  # noqa: E402
from srfabric.model import Alternative, Chain, FlowClassifier  # noqa: E402
from srfabric.model.stream import SteeredStream  # noqa: E402
from srfabric.model.topo import fat_tree, tsn_fig1  # noqa: E402
from srfabric.rules.compile import compile_state  # noqa: E402
try:
    from srfabric.rules.openflow.ofbind import wire_cookie  # noqa: E402
except ImportError:  # before OpenFlow messages moved among the rules as data
    from srfabric.southbound.ofbind import wire_cookie  # type: ignore[no-redef]  # noqa: E402

try:
    from srfabric.rules.compile import CompileCache  # noqa: E402
except ImportError:  # before the one compile engine
    from srfabric.rules.compile_cache import CompileCache  # type: ignore[no-redef]  # noqa: E402

SFPS = [("v1", "v4", "v7"), ("v2", "v4", "v6"), ("v3", "v4", "v5")]


def digest(state) -> str:
    h = hashlib.sha256()
    for dpid in sorted(state.entries):
        for e in state.entries[dpid]:
            h.update(f"{dpid}:{wire_cookie(e)}:{e!r}".encode())
    for dpid in sorted(state.groups):
        for g in state.groups[dpid]:
            h.update(f"{dpid}:{g!r}".encode())
    return h.hexdigest()[:16]


def fabric7():
    topo = fat_tree(4)
    for name, edge in [("v1", "e3"), ("v2", "e3"), ("v3", "e4"), ("v4", "e5"), ("v5", "e7"), ("v6", "e7"),
                       ("v7", "e8")]:
        topo.add_function(name, edge)
    return topo.to_fabric()


def udp(low: int) -> FlowClassifier:
    return FlowClassifier(protocol="udp", destination_port_range=(low, low))


chains = [Chain(f"SFP{i + 1}", udp(5001 + i), SFPS[i], "h1", "h16", i + 1) for i in range(3)]
lb = Chain("LB", FlowClassifier(protocol="tcp"), (), "h2", "h15", chain_id=9,
           alternatives=(Alternative(("v1", "v4"), 1), Alternative(("v2", "v4"), 3)))
lbf = replace(lb, name="LBF", chain_id=10, source="h3", lb_fields=("udp_src",), classifier=udp(8000))
tap = Chain("TAP", udp(6000), ("v5",), "h4", "h9", chain_id=11, taps=("v6",))
lbtap = Chain("LBT", udp(9000), (), "h6", "h14", chain_id=13, taps=("v6",), lb_fields=("udp_src",),
              alternatives=(Alternative(("v1", "v4"), 1), Alternative(("v2", "v4"), 2)))
seltap = Chain("SLT", FlowClassifier(protocol="tcp", destination_port_range=(9100, 9100)), (), "h7", "h13",
               chain_id=14, alternatives=(Alternative(("v1",), 1), Alternative(("v2",), 1)), taps=("v7",))
nodest = Chain("ND", udp(7000), ("v3",), "h5", None, chain_id=12)
for codec in ("mac-nibble", "mac-vlan-mpls"):
    fabric = fabric7()
    for name, some in [("none", []), ("sfp", chains), ("all", chains + [lb, lbf, tap, nodest, lbtap, seltap])]:
        problems: list = []
        print(codec, name, digest(compile_state(fabric, some, codec, problems)), [str(p) for p in problems])
        print(codec, name + "-cache", digest(CompileCache(codec).state(fabric, some, [])), "")
    print(codec, "hbh", digest(CompileCache(codec, "hop-by-hop").state(fabric, chains, [])), "")
    spec = line(5, 10)
    print(codec, "line", digest(compile_state(spec.to_fabric(), [chain_between(spec, "c", ("v1", "v10"), 1)],
                                              codec)), "")
    streams = [SteeredStream("cam", 1, "h1", "h3", ("s1", "s2", "s5"), udp_dst=5001),
               SteeredStream("cam2", 2, "h1", "h3", ("s1", "s3", "s4", "s5"), udp_dst=5002)]
    print(codec, "streams", digest(CompileCache(codec, tt_queue=6).state(tsn_fig1().to_fabric(), [],
                                                                         streams=streams)), "")
    gatewayed = fabric7()
    gatewayed.set_gateway(gatewayed.hosts["h16"].ip)
    print(codec, "gateway", digest(compile_state(gatewayed, chains, codec)), "")
