"""The controller's compiled entries, translated for XDP, forward real frames through a fat-tree.

One XDP object per switch, filled by ``xdp_tables`` from the same rule objects
OVS receives; frames are walked with BPF_PROG_TEST_RUN (behaviour, not map text).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from srfabric.demo import SFPS, demo_chains, demo_topology
from srfabric.model.fabric import Fabric
from srfabric.rules.compile import compile_state
from srfabric.xdp import frames
from srfabric.xdp.loader import build
from srfabric.xdp.walk import XdpFabric

CODECS = ["mac-nibble", "mac-vlan-mpls"]


def udp(fabric: Fabric, src: str, dst: str, dport: int) -> bytes:
    s, d = fabric.hosts[src], fabric.hosts[dst]
    return frames.udp_frame(dst_mac=d.mac, src_mac=s.mac, src=s.ip, dst=d.ip, sport=40000, dport=dport, size=128)


@pytest.fixture(scope="module", params=CODECS)
def xdp_fabric(request: pytest.FixtureRequest) -> Iterator[tuple[XdpFabric, str, str]]:
    build()
    spec, source, destination = demo_topology(4)
    fabric = spec.to_fabric()
    state = compile_state(fabric, demo_chains(source, destination), request.param)
    with XdpFabric(fabric, state.entries, request.param, state.groups) as xdp:
        yield xdp, source, destination


def test_chains_cross_their_functions_in_order_and_arrive_unchanged(xdp_fabric: tuple[XdpFabric, str, str]) -> None:
    xdp, source, destination = xdp_fabric
    host = xdp.fabric.hosts[source]
    for index, functions in enumerate(SFPS.values()):
        frame = udp(xdp.fabric, source, destination, 5001 + index)
        result = xdp.send(frame, host.dpid, host.port)
        assert result.functions == list(functions), result.verdicts
        assert result.delivered == [(destination, frame)]


def test_plain_traffic_takes_the_default_route(xdp_fabric: tuple[XdpFabric, str, str]) -> None:
    xdp, source, destination = xdp_fabric
    for src, dst in ((source, destination), (destination, source), ("h2", "h5"), ("h1", "h2")):
        frame = udp(xdp.fabric, src, dst, 80)
        host = xdp.fabric.hosts[src]
        result = xdp.send(frame, host.dpid, host.port)
        assert result.functions == []
        assert result.delivered == [(dst, frame)], result.verdicts
