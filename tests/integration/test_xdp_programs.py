"""The XDP programs under BPF_PROG_TEST_RUN: the shared codec vectors, the edge, hostile frames.

Every case states the input frame, the expected action and counted reason, the
egress port and the output frame. Nothing is attached to a device; devmap
entries point at ``lo`` because test runs never transmit.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from srfabric.codecs.mac_nibble import MacNibbleCodec
from srfabric.codecs.mac_vlan_mpls import MacVlanMplsCodec
from srfabric.xdp import frames, layout
from srfabric.xdp.loader import LoadedObject, build, load
from srfabric.xdp.probe import Probe

VECTORS = Path(__file__).resolve().parent.parent / "vectors"
LO = 1  # ifindex of the loopback device: a real interface for devmap entries and ingress_ifindex
IN_PORT = 7
HOST_MAC = 0x0A0000000001
PEER_MAC = 0x0A0000000002
HOST_PORT = 9


def plain(dport: int = 5001, dst: str = "10.0.0.2", size: int = 60) -> bytes:
    return frames.udp_frame(dst_mac=0x0E0000000000, src_mac=HOST_MAC, src="10.0.0.1", dst=dst, dport=dport,
                            size=size)


def vectors(name: str) -> list[dict]:
    return list(json.loads((VECTORS / name).read_text())["vectors"])


@pytest.fixture(scope="module")
def objects() -> Iterator[dict[str, LoadedObject]]:
    build()
    loaded: dict[str, LoadedObject] = {}
    try:
        for kind in ("mac-nibble", "mac-vlan-mpls", "lpm"):
            obj = load(kind, f"test-{os.getpid()}-{kind}")
            loaded[kind] = obj
            for port in range(1, 256):
                obj.add_port(port, LO)
            if kind != "lpm":
                obj.map("sr_ifports").update(layout.u32(LO), layout.u32(IN_PORT))
        yield loaded
    finally:
        for obj in loaded.values():
            obj.unload()


def fabric(objects: dict[str, LoadedObject], codec: str) -> Probe:
    return Probe(objects[codec], "sr_fabric", ingress_ifindex=LO)


def host(objects: dict[str, LoadedObject], codec: str) -> Probe:
    return Probe(objects[codec], "sr_host", ingress_ifindex=LO)


@pytest.mark.parametrize("case", [v for v in vectors("mac_nibble.json") if v["steps"]])
def test_nibble_transit_follows_the_vectors(objects: dict[str, LoadedObject], case: dict) -> None:
    frame = frames.with_source_mac(plain(), frames.mac_of(case["eth_src"]))
    probe = fabric(objects, "mac-nibble")
    for step in case["steps"]:
        out = probe.run(frame)
        assert (out.action, out.reason, out.port) == ("redirect", "forwarded", step["port"])
        assert out.frame == frames.with_source_mac(frame, frames.mac_of(step["eth_src"]))
        frame = out.frame
    # The header is now exhausted and this switch has no host for it.
    assert (probe.run(frame).action, probe.run(frame).reason) == ("drop", "drop_exhausted")


@pytest.mark.parametrize("case", [v for v in vectors("mac_vlan_mpls.json") if v["steps"]])
def test_mpls_transit_follows_the_vectors(objects: dict[str, LoadedObject], case: dict) -> None:
    wire = {"eth_dst": case["eth_dst"], "vlan_tci": case["vlan_tci"], "mpls": case["mpls"]}
    frame = frames.mpls_frame(wire, plain())
    probe = fabric(objects, "mac-vlan-mpls")
    for step in case["steps"]:
        out = probe.run(frame)
        assert (out.action, out.reason, out.port) == ("redirect", "forwarded", step["port"])
        assert out.frame == frames.mpls_frame({**wire, "mpls": step["mpls"]}, plain())
        frame = out.frame


@pytest.mark.parametrize("hops", [13, 17, 20, 24, 27])
def test_mpls_transit_reads_every_label_of_a_long_path(objects: dict[str, LoadedObject], hops: int) -> None:
    # Beyond the vectors' two labels: slots that straddle two labels and the deepest of eight.
    rng = random.Random(hops)
    path = [rng.randrange(1, 256) for _ in range(hops)]
    frame = frames.mpls_frame(MacVlanMplsCodec().encode(path).wire(), plain())
    probe = fabric(objects, "mac-vlan-mpls")
    for port in path:
        out = probe.run(frame)
        assert (out.action, out.reason, out.port) == ("redirect", "forwarded", port)
        frame = out.frame
    assert probe.run(frame).reason == "drop_exhausted"


def test_nibble_header_errors_are_counted_drops(objects: dict[str, LoadedObject]) -> None:
    probe = fabric(objects, "mac-nibble")
    cases = {
        0xC00000000001: "drop_malformed",  # hop count 12 is beyond the 11 a MAC holds
        0x200000000001: "drop_malformed",  # nibble 1 holds port 0, which is padding
    }
    for eth_src, reason in cases.items():
        out = probe.run(frames.with_source_mac(plain(), eth_src))
        assert (out.action, out.reason, out.port) == ("drop", reason, None)


def test_a_port_the_switch_lacks_is_a_counted_drop(objects: dict[str, LoadedObject]) -> None:
    objects["mac-nibble"].remove_port(14)
    try:
        out = fabric(objects, "mac-nibble").run(frames.with_source_mac(plain(), 0x10000000000E))
        assert (out.action, out.reason) == ("drop", "drop_no_port")
    finally:
        objects["mac-nibble"].add_port(14, LO)


def test_mpls_without_a_header_is_malformed(objects: dict[str, LoadedObject]) -> None:
    out = fabric(objects, "mac-vlan-mpls").run(plain())
    assert (out.action, out.reason) == ("drop", "drop_malformed")
    wire = {"eth_dst": "05:00:00:00:00:00", "vlan_tci": "0000", "mpls": "00000109"}  # TTL 9 > 1 port
    no_bottom = frames.mpls_frame({**wire, "mpls": "00000001" * 8}, plain())
    for frame in (frames.mpls_frame(wire, plain())[:30], no_bottom):
        out = fabric(objects, "mac-vlan-mpls").run(frame)
        assert (out.action, out.reason) == ("drop", "drop_malformed")


def test_lldp_goes_to_the_kernel(objects: dict[str, LoadedObject]) -> None:
    lldp = bytes.fromhex("0180c200000e" + "0a0000000009" + "88cc") + bytes(46)
    for codec in ("mac-nibble", "mac-vlan-mpls"):
        out = fabric(objects, codec).run(lldp)
        assert (out.action, out.reason) == ("pass", "passed")


def test_reserved_multicast_goes_to_the_kernel_and_is_never_read_as_a_path(objects: dict[str, LoadedObject]
                                                                          ) -> None:
    """gPTP (01-80-C2-00-00-0E, EtherType 0x88F7) is for ptp4l on the port, from a fabric link or a host; a source
    MAC that would read as a path (nibble 3) changes nothing. The rest of 01-80-C2-00-00-xx is forwarded."""
    gptp = bytes.fromhex("0180c200000e" + "30000000000e" + "88f7") + bytes(46)
    for codec in ("mac-nibble", "mac-vlan-mpls"):
        for probe in (fabric(objects, codec), host(objects, codec)):
            out = probe.run(gptp)
            assert (out.action, out.reason) == ("pass", "passed"), (codec, probe)
    outside = fabric(objects, "mac-nibble").run(bytes.fromhex("0180c2000010") + gptp[6:])
    assert (outside.action, outside.reason) != ("pass", "passed")


class Edge:
    """Fill one object's edge tables: a route, a chain wildcard, an exact flow, a local host."""

    def __init__(self, obj: LoadedObject, codec: str) -> None:
        self.obj = obj
        self.codec = codec
        self.indexes: list[int] = []

    def header(self, index: int, ports: list[int], kind: int = layout.ACT_ENCAP) -> None:
        first, rest = ports[0], ports[1:]
        if self.codec == "mac-nibble":
            value = layout.action(kind, first, eth_src=MacNibbleCodec().encode(rest).eth_src)
        else:
            h = MacVlanMplsCodec().encode(rest)
            wire = h.wire()
            value = layout.action(kind, first, eth_dst=h.eth_dst, vlan_tci=int(wire["vlan_tci"], 16),
                                  mpls=int(wire["mpls"], 16))
        self.obj.map("sr_actions").update(layout.u32(index), value)

    def expected(self, frame: bytes, ports: list[int]) -> bytes:
        rest = ports[1:]
        if self.codec == "mac-nibble":
            return frames.with_source_mac(frame, MacNibbleCodec().encode(rest).eth_src)
        return frames.mpls_frame(MacVlanMplsCodec().encode(rest).wire(), frame)


ROUTE = [3, 2, 4]
CHAIN = [5, 1, 6, 2]
EXACT = [2, 2]


@pytest.fixture
def edge(objects: dict[str, LoadedObject], request: pytest.FixtureRequest) -> Iterator[Edge]:
    codec = request.param
    e = Edge(objects[codec], codec)
    e.header(0, ROUTE)
    e.header(1, CHAIN)
    e.header(2, EXACT)
    e.obj.map("sr_actions").update(layout.u32(3), layout.action(layout.ACT_OUTPUT, 5))
    routes = e.obj.map("sr_routes")
    routes.update(layout.ipv4("10.0.0.2"), layout.u32(0))
    routes.update(layout.ipv4("10.0.0.5"), layout.u32(3))
    key = layout.flow_key(dst="10.0.0.2", proto=17, dport=5001, stage=layout.STAGE_HOST_IN, in_port=IN_PORT)
    mask = layout.flow_key(dst="255.255.255.255", proto=0xFF, dport=0xFFFF, stage=0xFF, in_port=0xFFFF)
    e.obj.map("sr_wild").update(layout.u32(0), layout.wild_rule(key, mask, 1))
    exact = layout.flow_key(src="10.0.0.1", dst="10.0.0.2", sport=4000, dport=7000, proto=17,
                            stage=layout.STAGE_HOST_IN, in_port=IN_PORT)
    e.obj.map("sr_exact").update(exact, layout.u32(2))
    e.obj.map("sr_restore").update(layout.ipv4("10.0.0.1"), layout.mac_value(HOST_MAC))
    e.obj.map("sr_deliver").update(layout.ipv4("10.0.0.2"), layout.host(PEER_MAC, HOST_PORT))
    yield e
    for name in ("sr_routes", "sr_exact", "sr_restore", "sr_deliver"):
        table = e.obj.map(name)
        for k in table.all_keys():
            table.delete(k)
    e.obj.map("sr_wild").update(layout.u32(0), bytes(40))


CODECS = ["mac-nibble", "mac-vlan-mpls"]


@pytest.mark.parametrize("edge", CODECS, indirect=True)
def test_the_ingress_edge_classifies_and_writes_the_header(objects: dict[str, LoadedObject], edge: Edge) -> None:
    probe = host(objects, edge.codec)
    cases = [
        (plain(dport=9), ROUTE),  # the default route to 10.0.0.2
        (plain(dport=5001), CHAIN),  # the chain's wildcard classifier wins over the route
        (plain(dport=7000), EXACT),  # the exact 5-tuple wins over both
    ]
    for frame, ports in cases:
        out = probe.run(frame)
        assert (out.action, out.reason, out.port) == ("redirect", "encapsulated", ports[0])
        assert out.frame == edge.expected(frame, ports)
    local = probe.run(plain(dst="10.0.0.5"))
    assert (local.action, local.reason, local.port, local.frame) == ("redirect", "local", 5, plain(dst="10.0.0.5"))
    assert probe.run(plain(dst="10.9.9.9")).reason == "drop_no_rule"
    arp = bytes.fromhex("ffffffffffff" + "0a0000000001" + "0806") + bytes(46)
    assert probe.run(arp).action == "pass"


@pytest.mark.parametrize("edge", CODECS, indirect=True)
@pytest.mark.parametrize("family", ["IPv4", "IPv6"])
def test_hosts_cannot_inject_a_path(objects: dict[str, LoadedObject], edge: Edge, family: str) -> None:
    inner = plain() if family == "IPv4" else ipv6_frame()
    if edge.codec == "mac-nibble":
        forged = frames.with_source_mac(inner, MacNibbleCodec().encode([1, 2]).eth_src)
    else:
        forged = frames.mpls_frame(MacVlanMplsCodec().encode([1, 2]).wire(), inner)
    out = host(objects, edge.codec).run(forged)
    assert (out.action, out.reason) == ("drop", "drop_forged")
    if family == "IPv6":  # a host's plain IPv6 has no rule on the XDP edge: dropped, but not as forged
        assert (host(objects, edge.codec).run(inner).reason) == "drop_no_rule"


def ipv6_frame() -> bytes:
    """Ethernet + IPv6 (fd00::1 -> fd00::2) + UDP 4000 -> 5001 with 8 bytes of payload."""
    udp = (4000).to_bytes(2, "big") + (5001).to_bytes(2, "big") + (16).to_bytes(2, "big") + bytes(2) + b"x" * 8
    header = bytes.fromhex("60000000") + len(udp).to_bytes(2, "big") + bytes([17, 64]) \
        + bytes.fromhex("fd00" + "00" * 13 + "01") + bytes.fromhex("fd00" + "00" * 13 + "02")
    return bytes.fromhex("0a0000000002" "0a0000000001" "86dd") + header + udp


@pytest.mark.parametrize("edge", CODECS, indirect=True)
def test_a_frame_crosses_the_fabric_and_arrives_as_it_left(objects: dict[str, LoadedObject], edge: Edge) -> None:
    original = plain(dport=5001, size=200)
    out = host(objects, edge.codec).run(original)
    assert out.port == CHAIN[0]
    frame = out.frame
    for port in CHAIN[1:]:
        step = fabric(objects, edge.codec).run(frame)
        assert (step.reason, step.port) == ("forwarded", port)
        frame = step.frame
    last = fabric(objects, edge.codec).run(frame)
    assert (last.action, last.reason, last.port) == ("redirect", "delivered", HOST_PORT)
    assert last.frame == frames.with_destination_mac(original, PEER_MAC)


@pytest.mark.parametrize("edge", CODECS, indirect=True)
def test_an_exhausted_header_starts_the_next_pathlet(objects: dict[str, LoadedObject], edge: Edge) -> None:
    key = layout.flow_key(dst="10.0.0.2", stage=layout.STAGE_TERMINATE, in_port=IN_PORT)
    mask = layout.flow_key(dst="255.255.255.255", stage=0xFF, in_port=0xFFFF)
    edge.obj.map("sr_wild").update(layout.u32(1), layout.wild_rule(key, mask, 2))
    try:
        arriving = edge.expected(plain(), [1])  # a header with no ports left
        out = fabric(objects, edge.codec).run(arriving)
        assert (out.action, out.reason, out.port) == ("redirect", "encapsulated", EXACT[0])
        assert out.frame == edge.expected(plain(), EXACT)
    finally:
        edge.obj.map("sr_wild").update(layout.u32(1), bytes(40))


def test_lpm_router_takes_the_longest_prefix(objects: dict[str, LoadedObject]) -> None:
    routes = objects["lpm"].map("sr_lpm")
    routes.update(layout.lpm_key("10.0.0.0/8"), layout.u32(2))
    routes.update(layout.lpm_key("10.1.0.0/16"), layout.u32(3))
    probe = Probe(objects["lpm"], "lpm_route")
    assert (probe.run(plain(dst="10.1.2.3")).port, probe.run(plain(dst="10.2.0.1")).port) == (3, 2)
    assert probe.run(plain(dst="11.0.0.1")).reason == "drop_no_rule"


@pytest.mark.parametrize(("codec", "program"), [(c, p) for c in CODECS for p in ("sr_fabric", "sr_host")])
def test_truncated_and_random_frames_are_dropped_and_counted(
    objects: dict[str, LoadedObject], codec: str, program: str
) -> None:
    probe = Probe(objects[codec], program, ingress_ifindex=LO)
    rng = random.Random(7)
    valid = (frames.with_source_mac(plain(), 0x300000000324) if codec == "mac-nibble"
             else frames.mpls_frame(MacVlanMplsCodec().encode([3, 2, 4]).wire(), plain()))
    hostile = [valid[:n] for n in range(14, len(valid))]
    hostile += [bytes(rng.getrandbits(8) for _ in range(rng.randrange(14, 128))) for _ in range(150)]
    # Random bytes behind a plausible header reach the deeper parsers too.
    hostile += [valid[:rng.randrange(14, 30)] + bytes(rng.getrandbits(8) for _ in range(40)) for _ in range(150)]
    before = sum(probe.verdicts())
    for frame in hostile:
        out = probe.run(frame)
        assert out.reason is not None  # every frame leaves through the one exit that counts it
        assert out.action in ("drop", "pass", "redirect")
    assert sum(probe.verdicts()) - before == len(hostile)


@pytest.mark.parametrize("edge", CODECS, indirect=True)
def test_a_port_beyond_the_devmap_is_dropped_not_aliased(objects: dict[str, LoadedObject], edge: Edge) -> None:
    edge.obj.map("sr_actions").update(layout.u32(4), layout.action(layout.ACT_OUTPUT, 258))
    edge.obj.map("sr_routes").update(layout.ipv4("10.0.0.7"), layout.u32(4))
    out = host(objects, edge.codec).run(plain(dst="10.0.0.7"))
    assert (out.action, out.reason, out.port) == ("drop", "drop_no_port", None)  # not port 258 & 0xff = 2
