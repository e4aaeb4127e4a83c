"""Per-stream filtering and policing on the XDP edge, under BPF_PROG_TEST_RUN: an admitted stream's frames over
its size, outside its gate's windows or over its meter are dropped before the header is written and counted per
stream under ``ieee802-dot1q-psfp``'s names, as ``srfabric.tsn.protect.policing`` decides; other frames pass as
before. The gates run on CLOCK_TAI, so each case puts the base time where "now" is well inside an open or a
closed span of a one-second cycle."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import pytest

from srfabric.codecs.mac_nibble import MacNibbleCodec
from srfabric.tsn.protect.policing import StreamPolicer
from srfabric.tsn.protect.psfp import FlowMeter, Identity, StreamProtection, stream_gate
from srfabric.xdp import frames, layout, psfp
from srfabric.xdp.loader import LoadedObject, build, load
from srfabric.xdp.probe import Probe

LO = 1
IN_PORT = 7
ROUTE = [3, 2, 4]
SECOND = 1_000_000_000
SLOW = FlowMeter(cir_bps=1, cbs_bytes=2 * (200 + 22))  # two 200-octet frames, then nothing for hours


@pytest.fixture(scope="module")
def edge() -> Iterator[LoadedObject]:
    build()
    obj = load("mac-nibble", f"test-psfp-{os.getpid()}")
    try:
        for port in range(1, 16):
            obj.add_port(port, LO)
        obj.map("sr_ifports").update(layout.u32(LO), layout.u32(IN_PORT))
        obj.map("sr_actions").update(layout.u32(0), layout.action(
            layout.ACT_ENCAP, ROUTE[0], eth_src=MacNibbleCodec().encode(ROUTE[1:]).eth_src))
        obj.map("sr_routes").update(layout.ipv4("10.0.0.2"), layout.u32(0))
        yield obj
    finally:
        obj.unload()


@pytest.fixture
def probe(edge: LoadedObject) -> Iterator[Probe]:
    yield Probe(edge, "sr_host", ingress_ifindex=LO)
    table = edge.map(psfp.MAP)
    for key in table.all_keys():
        table.delete(key)


def frame(size: int = 200 + 14, dport: int = 5001, sport: int = 4000) -> bytes:
    """A frame of ``size`` octets (its SDU is ``size`` - 14)."""
    return frames.udp_frame(dst_mac=0x0E0000000000, src_mac=0x0A0000000001, src="10.0.0.1", dst="10.0.0.2",
                            sport=sport, dport=dport, size=size)


def plan(open_now: bool, meter: FlowMeter = SLOW, udp_src: int | None = 4000) -> StreamProtection:
    """A stream gate open for the first half of a one-second cycle, with "now" a quarter or three quarters in."""
    now = time.clock_gettime_ns(time.CLOCK_TAI)
    base = now - (SECOND // 4 if open_now else 3 * SECOND // 4)
    gate = stream_gate([(0, SECOND // 2)], SECOND, base)
    return StreamProtection(5, "cam", "s1", "h1", Identity("10.0.0.1", "10.0.0.2", udp_src, 5001), 7, 200, gate,
                            meter)


def test_frames_over_the_reservation_are_dropped_at_ingress_as_the_model_decides(probe: Probe) -> None:
    protected = plan(open_now=True)
    psfp.install(probe.loaded, [(protected, IN_PORT)])
    model = StreamPolicer(protected)
    outcomes = [probe.run(frame()) for _ in range(5)]
    expected = [model.offer(protected.gate.base_time_ns + SECOND // 4 + n, 200) for n in range(5)]
    assert [out.reason for out in outcomes] == ["encapsulated" if fate is None else "drop_policed"
                                                for fate in expected]
    assert [out.reason for out in outcomes].count("encapsulated") == 2
    assert psfp.counters(probe.loaded)[5] == model.counters
    other = probe.run(frame(dport=9))  # not the stream: classified and sent as before
    assert (other.action, other.reason, other.port) == ("redirect", "encapsulated", ROUTE[0])


def test_a_frame_outside_the_streams_window_is_dropped_and_counted(probe: Probe) -> None:
    psfp.install(probe.loaded, [(plan(open_now=False), IN_PORT)])
    out = probe.run(frame())
    assert (out.action, out.reason) == ("drop", "drop_policed")
    counts = psfp.counters(probe.loaded)[5]
    assert counts["not-passing-frames-count"] == 1 and counts["red-frames-count"] == 0


def test_an_oversized_frame_is_dropped_before_the_gate(probe: Probe) -> None:
    psfp.install(probe.loaded, [(plan(open_now=True), IN_PORT)])
    assert probe.run(frame(size=201 + 14)).reason == "drop_policed"
    assert probe.run(frame(size=200 + 14)).reason == "encapsulated"
    counts = psfp.counters(probe.loaded)[5]
    assert (counts["not-passing-sdu-count"], counts["passing-sdu-count"], counts["matching-frames-count"]) == (1, 1, 2)


def test_a_stream_identified_without_a_source_port_takes_every_source_port(probe: Probe) -> None:
    psfp.install(probe.loaded, [(plan(open_now=False, udp_src=None), IN_PORT)])
    assert {probe.run(frame(sport=port)).reason for port in (1, 4000, 65535)} == {"drop_policed"}
    assert psfp.counters(probe.loaded)[5]["matching-frames-count"] == 3


def test_a_removed_stream_is_no_longer_policed(probe: Probe) -> None:
    protected = plan(open_now=False)
    psfp.install(probe.loaded, [(protected, IN_PORT)])
    assert probe.run(frame()).reason == "drop_policed"
    assert psfp.remove(probe.loaded, protected, IN_PORT)
    assert probe.run(frame()).reason == "encapsulated"
