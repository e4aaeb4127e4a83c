"""Real ptp4l in two namespaces over veth (gPTP, software timestamps), read with real pmc through ``ClockWatch``:
the bridge follows the grandmaster within the bound, is judged out of sync naming why once its link fails, and is
reported back once the link returns. Namespaces and processes are made here and removed by name and pid."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from srfabric.southbound.pmc import read_clock
from srfabric.tsn.runtime.clock_watch import ClockWatch
from srfabric_tools.testbed.gptp import Ptp4l

NAMESPACES = ("srfgt-gm", "srfgt-br")
pytestmark = pytest.mark.skipif(subprocess.run(["which", "ptp4l"], capture_output=True).returncode != 0,
                                reason="needs linuxptp (make bootstrap)")


def ip(*words: str) -> None:
    subprocess.run(["ip", *words], check=True, capture_output=True)


@pytest.fixture
def clocks(tmp_path: Path) -> Iterator[ClockWatch]:
    for name in NAMESPACES:
        subprocess.run(["ip", "netns", "del", name], capture_output=True)
        ip("netns", "add", name)
    ip("link", "add", "srfgt-gm0", "type", "veth", "peer", "name", "srfgt-br0")
    for name, end in zip(NAMESPACES, ("srfgt-gm0", "srfgt-br0"), strict=True):
        ip("link", "set", end, "netns", name)
        ip("-n", name, "link", "set", end, "up")
    daemons = [Ptp4l(tmp_path, "gm", "srfgt-gm", ["srfgt-gm0"], grandmaster=True),
               Ptp4l(tmp_path, "br", "srfgt-br", ["srfgt-br0"])]
    try:
        for daemon in daemons:
            daemon.start()
        yield ClockWatch({"br": daemons[1].socket}, 100_000, read_clock)  # software timestamps: a lab's bound
    finally:
        for daemon in daemons:
            daemon.stop()
        for name in NAMESPACES:
            subprocess.run(["ip", "netns", "del", name], capture_output=True)


def until(watch: ClockWatch, synced: bool, timeout_s: float = 30.0) -> list[str]:
    """Poll until the bridge is (or is not) synchronised; every bridge reported back meanwhile."""
    back: list[str] = []
    deadline = time.monotonic() + timeout_s
    while True:
        back += watch.poll()
        if watch.states["br"].synced == synced:
            return back
        assert time.monotonic() < deadline, f"br synced={synced} not within {timeout_s} s: {watch.states['br']}"
        time.sleep(0.5)


def test_a_bridge_off_its_grandmaster_is_named_and_reported_back(clocks: ClockWatch) -> None:
    until(clocks, synced=True)
    state = clocks.states["br"]
    assert state.grandmaster and abs(state.offset_ns or 0) <= 100_000
    ip("-n", "srfgt-br", "link", "set", "srfgt-br0", "down")
    until(clocks, synced=False)
    assert clocks.unsynced(["br"]) is not None
    assert "grandmaster" in clocks.states["br"].reason or "port states" in clocks.states["br"].reason
    ip("-n", "srfgt-br", "link", "set", "srfgt-br0", "up")
    assert until(clocks, synced=True) == ["br"]
