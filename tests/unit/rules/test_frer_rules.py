"""A redundant stream (two seamless trees) walked through fake switches: an R-tagged frame from the talker
arrives twice, once along each path, in the time-triggered queue on every hop; a link lost on one path leaves
the other delivering; the mac-vlan-mpls codec is refused by name."""

from __future__ import annotations

from dataclasses import replace

import pytest

from srfabric.errors import RoutingError
from srfabric.model.stream import SteeredStream
from srfabric.model.topo import tsn_fig1
from srfabric.rules.compile import CompileCache
from srfabric.rules.streams.frer import RTAG_ETHERTYPE
from srfabric_tools.simulate import Packet, walk

PRIMARY = ("s1", "s2", "s5")
SECONDARY = ("s1", "s3", "s4", "s5")
QUEUE = 6
REDUNDANT = SteeredStream("cam", 1, "h1", "h3", PRIMARY, second_path=SECONDARY)


def deliveries(fabric, codec: str = "mac-nibble", stream: SteeredStream = REDUNDANT):  # type: ignore[no-untyped-def]
    state = CompileCache(codec, tt_queue=QUEUE).state(fabric, [], streams=[stream])
    talker, listener = fabric.hosts["h1"], fabric.hosts["h3"]
    tagged = Packet(eth_src=talker.mac, eth_dst=listener.mac, eth_type=RTAG_ETHERTYPE)
    return walk(fabric, state.entries, tagged, talker.dpid, talker.port, groups=state.groups)


def test_each_frame_arrives_once_along_each_path_in_the_time_triggered_queue() -> None:
    fabric = tsn_fig1().to_fabric()
    result = deliveries(fabric)
    assert [host for host, _ in result.delivered] == ["h3", "h3"]
    crossed = {fabric.switches[dpid].name for dpid in result.switches}
    assert crossed == set(PRIMARY) | set(SECONDARY)
    assert {queue for _, _, queue in result.egress} == {QUEUE}
    assert all(frame.eth_type == RTAG_ETHERTYPE for _, frame in result.delivered)  # the tag is the listener's


def test_a_metered_redundant_stream_is_metered_once_at_its_talkers_edge_before_it_is_replicated() -> None:
    fabric = tsn_fig1().to_fabric()
    result = deliveries(fabric, stream=replace(REDUNDANT, meter=(1000, 2)))
    assert [host for host, _ in result.delivered] == ["h3", "h3"]
    assert result.metered == [(fabric.hosts["h1"].dpid, 1)]  # once, before the copies part


def test_a_lost_link_leaves_the_other_path_delivering() -> None:
    fabric = tsn_fig1().to_fabric()
    by_name = {switch.name: dpid for dpid, switch in fabric.switches.items()}
    port = fabric.graph().edges[by_name["s2"], by_name["s5"]]["port"]
    fabric.remove_link((by_name["s2"], port))
    result = deliveries(fabric)
    assert [host for host, _ in result.delivered] == ["h3"]
    assert {fabric.switches[dpid].name for dpid in result.switches} == set(SECONDARY)


def test_the_mpls_codec_is_refused_by_name() -> None:
    with pytest.raises(RoutingError, match="num_seamless_trees: stream cam: the mac-vlan-mpls codec cannot carry"):
        CompileCache("mac-vlan-mpls", tt_queue=QUEUE).state(tsn_fig1().to_fabric(), [], streams=[],
                                                            checked_streams=[REDUNDANT])
