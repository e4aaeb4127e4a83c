"""Per-stream policing by Open vSwitch's own OpenFlow meters (``srfabric serve --psfp-meters``; Mininet hosts, the
TSN paper's Fig. 1 fabric, Open vSwitch's userspace datapath, which has meters): a time-triggered stream made
through the API goes through a meter of its reservation at its talker's edge. Its talker then babbles (ten times
its reserved rate): the edge lets through no more than the reservation, its meter drops the rest and counts it,
and the counters reach the API's document and ``/metrics``. The stream removed, its meter goes too."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from srfabric.model.topo import tsn_fig1
from srfabric_tools.testbed.api_lab import ApiLab, ServeProcess
from srfabric_tools.testbed.net import ovs_running
from tests.integration.tsn.babbling import FRAMES, babble, protected_stream

pytestmark = [pytest.mark.skipif(not ovs_running(), reason="needs ovs-vswitchd (make bootstrap)"),
              pytest.mark.timeout(300)]


def meters(bridge: str) -> str:
    return subprocess.run(["ovs-ofctl", "-O", "OpenFlow13", "dump-meters", bridge], capture_output=True, text=True,
                          check=True, timeout=10).stdout


def counted(client: object, bridge: str, at_least: int, timeout_s: float = 20.0) -> dict[str, int]:
    """The edge's stream filter counters once the meter watch has reported ``at_least`` matching frames."""
    deadline = time.monotonic() + timeout_s
    while True:
        document = client.get(f"/v2.0/srfabric/psfp/{bridge}")  # type: ignore[attr-defined]
        component = document["ieee802-dot1q-bridge:bridges"]["bridge"][0]["component"][0]
        [shown] = component["ieee802-dot1q-psfp-bridge:stream-filters"]["stream-filter-instance-table"]
        if shown.get("matching-frames-count", 0) >= at_least or time.monotonic() > deadline:
            return shown  # type: ignore[no-any-return]
        time.sleep(0.5)


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[ApiLab]:
    with ServeProcess(f"sqlite:///{tmp_path}/api.db", extra_args=("--psfp-meters",)) as serve, \
            ApiLab(tsn_fig1(), serve) as running:
        yield running


def test_a_babbling_talker_gets_no_more_than_its_reservation_through_its_edges_meter(lab: ApiLab) -> None:
    with lab.serve.client() as client:
        made, bridge = protected_stream(client, lab)
        switch = bridge  # Mininet names each Open vSwitch bridge after its switch
        assert f"meter={made['stream_id']} pktps burst stats" in meters(switch)
        received, reserved = babble(lab)
        assert reserved <= FRAMES / 3, "the talker sent so slowly that its reservation is no test of a meter"
        shown = counted(client, bridge, int(FRAMES * 0.95))
        metrics = httpx.get(f"{lab.serve.url}/metrics", headers={"x-auth-token": lab.serve.token}).text
        assert shown["matching-frames-count"] >= FRAMES * 0.95  # a raw socket's send may drop a few on a busy host
        passed = shown["matching-frames-count"] - shown["red-frames-count"]
        assert len(received) <= passed <= reserved * 1.05  # the meter's clock and the talker's agree only so far
        assert len(received) >= reserved * 0.5  # it polices, it does not block
        assert f'srfabric_psfp_red_frames_total{{bridge="{bridge}",stream="{made["id"]}"}}' in metrics
        client.delete("streams", made["id"])
        deadline = time.monotonic() + 20
        while f"meter={made['stream_id']} " in meters(switch):
            assert time.monotonic() < deadline, "the stream is gone but its meter stays"
            time.sleep(0.2)
