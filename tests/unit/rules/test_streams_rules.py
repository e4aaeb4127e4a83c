"""Steered streams, checked by walking frames through fake switches: one entry at the talker's edge,
the time-triggered queue on every egress port of the path, transit switches path-independent."""

from __future__ import annotations

import ipaddress

import pytest

from srfabric.errors import ModelError, RoutingError
from srfabric.model.fabric import Fabric
from srfabric.model.stream import SteeredStream
from srfabric.model.topo import TopoSpec, tsn_fig1
from srfabric.rules.compile import CompileCache, SwitchState
from srfabric.rules.entries import FlowEntry, Kind
from srfabric.rules.streams.time_triggered import BE_QUEUE
from srfabric_tools.simulate import Packet, walk

CODECS = ["mac-nibble", "mac-vlan-mpls"]
PRIMARY = ("s1", "s2", "s5")
SECONDARY = ("s1", "s3", "s4", "s5")
QUEUE = 6


def udp(fabric: Fabric, src: str, dst: str, dport: int, dscp: int = 0) -> Packet:
    s, d = fabric.hosts[src], fabric.hosts[dst]
    return Packet(eth_src=s.mac, eth_dst=d.mac, ipv4_src=int(ipaddress.IPv4Address(s.ip)),
                  ipv4_dst=int(ipaddress.IPv4Address(d.ip)), ip_proto=17, tp_src=40000, tp_dst=dport, ip_dscp=dscp)


def compiled(fabric: Fabric, codec: str, streams: list[SteeredStream]) -> SwitchState:
    return CompileCache(codec, tt_queue=QUEUE).state(fabric, [], streams=streams)


def tables(fabric: Fabric, codec: str, streams: list[SteeredStream]) -> dict[int, list[FlowEntry]]:
    return compiled(fabric, codec, streams).entries


def send(fabric: Fabric, state: SwitchState, packet: Packet, host: str = "h1"):
    source = fabric.hosts[host]
    return walk(fabric, state.entries, packet, source.dpid, source.port, groups=state.groups)


def names(fabric: Fabric, dpids: list[int]) -> list[str]:
    return [fabric.switches[dpid].name for dpid in dpids]


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("path", [PRIMARY, SECONDARY])
def test_a_stream_follows_its_path_in_the_time_triggered_queue_and_arrives_as_sent(codec: str, path) -> None:
    fabric = tsn_fig1().to_fabric()
    state = compiled(fabric, codec, [SteeredStream("cam", 1, "h1", "h3", path, udp_dst=5001)])
    sent = udp(fabric, "h1", "h3", 5001)
    result = send(fabric, state, sent)
    assert names(fabric, result.switches) == list(path)
    ((host, frame),) = result.delivered
    assert host == "h3"
    expected_dscp = 56 if codec == "mac-nibble" else 0  # mac-nibble carries the mark in the DSCP
    assert (frame.eth_src, frame.eth_dst, frame.vlans, frame.mpls, frame.ip_dscp) == (
        sent.eth_src, sent.eth_dst, [], [], expected_dscp)
    assert [queue for _, _, queue in result.egress] == [QUEUE] * len(path)


@pytest.mark.parametrize("codec", CODECS)
def test_other_traffic_of_the_same_hosts_takes_the_default_route_in_no_queue(codec: str) -> None:
    fabric = tsn_fig1().to_fabric()
    state = compiled(fabric, codec, [SteeredStream("cam", 1, "h1", "h3", SECONDARY, udp_dst=5001)])
    result = send(fabric, state, udp(fabric, "h1", "h3", 5002))
    assert names(fabric, result.switches) == list(PRIMARY)
    assert [queue for _, _, queue in result.egress] == [BE_QUEUE] * 3  # whatever priority the sender gave it
    assert result.delivered[0][1].ip_dscp == 0


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize(("priority", "queue", "dscp"), [(3, 2, 24), (2, 1, 16)])
def test_a_class_stream_follows_its_path_in_its_class_queue_on_every_hop(codec: str, priority: int, queue: int,
                                                                          dscp: int) -> None:
    fabric = tsn_fig1().to_fabric()
    stream = SteeredStream("cam", 1, "h1", "h3", SECONDARY, udp_dst=5001, time_triggered=False, sr_class=priority)
    result = send(fabric, compiled(fabric, codec, [stream]), udp(fabric, "h1", "h3", 5001))
    assert names(fabric, result.switches) == list(SECONDARY)
    assert [q for _, _, q in result.egress] == [queue] * len(SECONDARY)  # skb priority 1:(queue + 1) = priority
    assert result.delivered[0][1].ip_dscp == (dscp if codec == "mac-nibble" else 0)


def test_a_class_stream_must_be_of_class_a_or_b_and_not_time_triggered() -> None:
    with pytest.raises(ModelError, match="sr_class"):
        SteeredStream("cam", 1, "h1", "h3", SECONDARY, sr_class=3)
    with pytest.raises(ModelError, match="sr_class"):
        SteeredStream("cam", 1, "h1", "h3", SECONDARY, time_triggered=False, sr_class=5)


@pytest.mark.parametrize("dscp", [56, 24, 16])
def test_a_host_cannot_claim_the_time_triggered_class_by_marking_its_frames(dscp: int) -> None:
    fabric = tsn_fig1().to_fabric()
    state = compiled(fabric, "mac-nibble", [])
    result = send(fabric, state, udp(fabric, "h1", "h3", 5002, dscp=dscp))
    assert [queue for _, _, queue in result.egress] == [BE_QUEUE] * 3
    assert result.delivered[0][1].ip_dscp == 0


@pytest.mark.parametrize("codec", CODECS)
def test_a_best_effort_class_is_pinned_without_the_mark(codec: str) -> None:
    fabric = tsn_fig1().to_fabric()
    flows = SteeredStream("bulk", 2, "h1", "h3", SECONDARY, time_triggered=False)
    result = send(fabric, compiled(fabric, codec, [flows]), udp(fabric, "h1", "h3", 7000))
    assert names(fabric, result.switches) == list(SECONDARY)
    assert [queue for _, _, queue in result.egress] == [BE_QUEUE] * 4


@pytest.mark.parametrize("codec", CODECS)
def test_re_routing_a_stream_changes_only_its_talkers_edge(codec: str) -> None:
    fabric = tsn_fig1().to_fabric()
    cache = CompileCache(codec, tt_queue=QUEUE)
    before = cache.state(fabric, [], streams=[SteeredStream("cam", 1, "h1", "h3", PRIMARY, udp_dst=5001)]).entries
    after = cache.state(fabric, [], streams=[SteeredStream("cam", 1, "h1", "h3", SECONDARY, udp_dst=5001)]).entries
    changed = [fabric.switches[dpid].name for dpid in before if before[dpid] != after[dpid]]
    assert changed == ["s1"]
    (entry,) = [e for e in after[fabric.hosts["h1"].dpid] if e.kind == Kind.STREAM]
    assert entry.cookie & 0xFFFFFF == 1


@pytest.mark.parametrize("codec", CODECS)
def test_transit_switches_hold_the_same_entries_whatever_the_streams(codec: str) -> None:
    fabric = tsn_fig1().to_fabric()
    none = tables(fabric, codec, [])
    many = tables(fabric, codec, [SteeredStream(f"s{i}", i, "h1", "h3", SECONDARY, udp_dst=5000 + i)
                                  for i in range(1, 20)])
    for name in ("s2", "s3", "s4", "s5"):
        dpid = next(d for d, sw in fabric.switches.items() if sw.name == name)
        assert many[dpid] == none[dpid]


def test_a_path_that_needs_a_second_header_is_refused_by_name() -> None:
    topo = TopoSpec()
    for index in range(1, 15):
        topo.add_switch(f"s{index}", "edge")
    for index in range(1, 14):
        topo.add_link(f"s{index}", f"s{index + 1}", 2, 1)
    topo.add_host("a", "s1", 3)
    topo.add_host("b", "s14", 3)
    fabric = topo.to_fabric()
    long_path = tuple(f"s{index}" for index in range(1, 15))
    with pytest.raises(RoutingError, match="must fit one"):
        tables(fabric, "mac-nibble", [SteeredStream("far", 1, "a", "b", long_path)])


@pytest.mark.parametrize(
    ("path", "field"),
    [(("s2", "s5"), "path"), (("s1", "s4", "s5"), r"path\[1\]"), (("s1", "s9", "s5"), r"path\[1\]")],
)
def test_bad_paths_are_refused_naming_the_hop(path, field: str) -> None:
    fabric = tsn_fig1().to_fabric()
    with pytest.raises(RoutingError, match=field):
        tables(fabric, "mac-nibble", [SteeredStream("bad", 1, "h1", "h3", path)])


def test_two_streams_that_claim_the_same_frames_are_refused() -> None:
    fabric = tsn_fig1().to_fabric()
    cache = CompileCache("mac-nibble", tt_queue=QUEUE)
    first = SteeredStream("a", 1, "h1", "h3", PRIMARY, udp_dst=5001)
    with pytest.raises(ModelError, match="overlaps another stream"):
        cache.state(fabric, [], streams=[first], checked_streams=[SteeredStream("b", 2, "h1", "h3", SECONDARY)])


def test_without_a_queue_the_base_tables_are_unchanged() -> None:
    fabric = tsn_fig1().to_fabric()
    plain = CompileCache("mac-nibble").state(fabric, []).entries
    queued = CompileCache("mac-nibble", tt_queue=QUEUE).state(fabric, []).entries
    dpid = fabric.hosts["h1"].dpid
    # per marked class (time-triggered, SR classes A and B): decode twins, exhausted twin, the DSCP scrub
    assert len(queued[dpid]) - len(plain[dpid]) == 3 * (11 + 1 + 1)
