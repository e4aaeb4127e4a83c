"""The controller's compiled entries, translated for XDP, forward real frames through a fat-tree.

One XDP object per switch, filled by ``xdp_tables`` from the same rule objects
OVS receives; frames are walked with BPF_PROG_TEST_RUN (behaviour, not map text).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from srfabric.model.fabric import Fabric
from srfabric.rules.compile import compile_state
from srfabric.xdp import frames
from srfabric.xdp.loader import build
from srfabric.xdp.walk import XdpFabric
from srfabric_tools.demo import SFPS, demo_chains, demo_topology

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


@pytest.mark.parametrize("codec", CODECS)
def test_everything_else_goes_to_the_gateway_and_comes_back_with_its_mac(codec: str) -> None:
    """Address 0 in the route, restore and delivery maps, and the delivery-stage exit of a destination-less
    chain, run by the real programs."""
    from srfabric.model import Chain, FlowClassifier

    build()
    spec, _, _ = demo_topology(4)
    fabric = spec.to_fabric()
    gateway, h1 = fabric.hosts["h16"], fabric.hosts["h1"]
    fabric.set_gateway(gateway.ip)
    function = next(name for name, f in sorted(fabric.functions.items()) if f.egress[0] not in (h1.dpid, gateway.dpid))
    chain = Chain("open", FlowClassifier(protocol="udp", destination_port_range=(7000, 7000)), (function,), "h1",
                  None, 9)
    state = compile_state(fabric, [chain], codec)
    outside = "192.0.2.7"
    with XdpFabric(fabric, state.entries, codec, state.groups) as xdp:
        for dport, functions in ((80, []), (7000, [function])):  # the default route, then the chain's exit
            frame = frames.udp_frame(dst_mac=gateway.mac, src_mac=h1.mac, src=h1.ip, dst=outside, dport=dport)
            result = xdp.send(frame, h1.dpid, h1.port)
            assert result.functions == functions and result.delivered == [("h16", frame)], result.verdicts
        back = frames.udp_frame(dst_mac=h1.mac, src_mac=gateway.mac, src=outside, dst=h1.ip, sport=80)
        result = xdp.send(back, gateway.dpid, gateway.port)
        assert result.delivered == [("h1", back)], result.verdicts
        stray = frames.udp_frame(dst_mac=gateway.mac, src_mac=gateway.mac, src=outside, dst="192.0.2.8")
        assert xdp.send(stray, gateway.dpid, gateway.port).delivered == []  # never back out where it came in
