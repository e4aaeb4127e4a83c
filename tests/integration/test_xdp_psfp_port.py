"""Per-stream filtering and policing in front of any switch port (``bpf/psfp_edge.c``, ``srfabric.xdp.psfp_port``):
under BPF_PROG_TEST_RUN a protected stream's frames within its reservation, and every other frame, go on to the
kernel (XDP_PASS); its frames over its size, outside its window or over its meter are dropped, counted per stream
as the reference model counts them and in the program's one counted exit. On a real veth it attaches natively,
takes its plans and comes off again."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator

import pytest

from srfabric.tsn.protect.policing import StreamPolicer
from srfabric.tsn.protect.psfp import FlowMeter, Identity, StreamProtection, stream_gate
from srfabric.xdp import frames, psfp
from srfabric.xdp.bpf_syscall import prog_test_run
from srfabric.xdp.loader import LoadedObject, build, load
from srfabric.xdp.psfp_port import PROGRAM, PsfpPort

XDP_DROP, XDP_PASS = 1, 2
SECOND = 1_000_000_000
SLOW = FlowMeter(cir_bps=1, cbs_bytes=2 * (200 + 22))  # two 200-octet frames, then nothing for hours

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="loading BPF programs needs root")


@pytest.fixture
def port_object() -> Iterator[LoadedObject]:
    build()
    obj = load("psfp-edge", f"test-psfp-port-{os.getpid()}")
    try:
        yield obj
    finally:
        obj.unload()


def frame(size: int = 200 + 14, dport: int = 5001) -> bytes:
    return frames.udp_frame(dst_mac=0x0A0000000002, src_mac=0x0A0000000001, src="10.0.0.1", dst="10.0.0.2",
                            sport=4000, dport=dport, size=size)


def plan(open_now: bool) -> StreamProtection:
    """A gate open for the first half of a one-second cycle, "now" a quarter or three quarters in."""
    now = time.clock_gettime_ns(time.CLOCK_TAI)
    gate = stream_gate([(0, SECOND // 2)], SECOND, now - (SECOND // 4 if open_now else 3 * SECOND // 4))
    return StreamProtection(5, "cam", "s1", "s1-eth1", Identity("10.0.0.1", "10.0.0.2", None, 5001), 7, 200, gate,
                            SLOW)


def run(obj: LoadedObject, data: bytes) -> int:
    fd = obj.program_fd(PROGRAM)
    return prog_test_run(fd, data).retval


def test_the_streams_frames_pass_within_its_reservation_and_are_dropped_beyond_it(port_object: LoadedObject) -> None:
    protected = plan(open_now=True)
    psfp.install(port_object, [(protected, 0)])
    model = StreamPolicer(protected)
    verdicts = [run(port_object, frame()) for _ in range(5)]
    expected = [model.offer(protected.gate.base_time_ns + SECOND // 4 + n, 200) for n in range(5)]
    assert verdicts == [XDP_PASS if fate is None else XDP_DROP for fate in expected] == [XDP_PASS] * 2 + [XDP_DROP] * 3
    assert psfp.counters(port_object)[5] == model.counters
    assert run(port_object, frame(size=201 + 14)) == XDP_DROP  # over its size, before the meter
    assert run(port_object, frame(dport=9)) == XDP_PASS  # another flow: handed on untouched
    assert run(port_object, bytes(12) + b"\x08\x06" + bytes(28)) == XDP_PASS  # ARP: not ours to judge


def test_a_frame_outside_the_window_is_dropped_and_counted(port_object: LoadedObject) -> None:
    psfp.install(port_object, [(plan(open_now=False), 0)])
    assert run(port_object, frame()) == XDP_DROP
    counts = psfp.counters(port_object)[5]
    assert counts["not-passing-frames-count"] == 1 and counts["red-frames-count"] == 0


def test_it_attaches_to_a_veth_takes_its_plans_and_comes_off() -> None:
    name = f"pp{os.getpid() % 100000}"
    subprocess.run(["ip", "link", "add", name, "type", "veth", "peer", "name", f"{name}x"], check=True)
    try:
        port = PsfpPort.attach(name)
        try:
            assert "xdp" in subprocess.run(["ip", "link", "show", "dev", name], capture_output=True,
                                           text=True).stdout
            assert port.converge([plan(open_now=False)]) == (1, 0)
            assert port.converge([]) == (0, 1)
            assert port.outcomes() == {"passed": 0, "dropped": 0}
        finally:
            port.detach()
        assert "xdp" not in subprocess.run(["ip", "link", "show", "dev", name], capture_output=True,
                                           text=True).stdout
    finally:
        subprocess.run(["ip", "link", "del", name], check=False)
