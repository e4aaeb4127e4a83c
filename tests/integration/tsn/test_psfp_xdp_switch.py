"""Per-stream filtering and policing on srfabric's XDP switches (Mininet hosts, the TSN paper's Fig. 1 fabric, the
agent for every switch): a time-triggered stream made through the API is protected at its talker's edge by
``srfabric psfp follow``, which reads the edge's ``ieee802-dot1q-psfp-bridge`` document from the API and writes it
into the switch. Its talker then babbles (ten times its reserved rate, at any time of the cycle): the edge lets
through no more than the reservation, drops the rest at ingress and counts it per reason, and the counters reach
the API's document and ``/metrics``."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from srfabric.cli.psfp import follow_round
from srfabric.model.topo import tsn_fig1
from srfabric.xdp.loader import build
from srfabric.xdp.psfp import PinnedEdge, counters
from srfabric_tools.testbed.api_lab import ApiLab, ServeProcess
from srfabric_tools.testbed.net import ovs_running
from tests.integration.tsn.babbling import FRAMES, SIZE, babble, protected_stream

pytestmark = [pytest.mark.skipif(not ovs_running(), reason="needs ovs-vswitchd (make bootstrap)"),
              pytest.mark.timeout(300)]
BABBLE_SDU = 96 - 14  # the numbered talker's frames: 96 octets with their MAC header


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[ApiLab]:
    build()
    # The XDP switch has no egress queues (nor gates): time-triggered frames are steered without one.
    with ServeProcess(f"sqlite:///{tmp_path}/api.db", extra_args=("--tt-queue", "-1")) as serve, \
            ApiLab(tsn_fig1(), serve, switch="xdp") as running:
        yield running


def test_a_babbling_talker_gets_no_more_than_its_reservation_through_its_edge(lab: ApiLab) -> None:
    with lab.serve.client() as client:
        made, bridge = protected_stream(client, lab)
        edge = PinnedEdge("mn-s1")  # the testbed's pin name of s1, h1's switch
        assert follow_round(client, edge, bridge).startswith("1 streams protected (1 written, 0 removed)")
        received, reserved_frames = babble(lab)
        assert reserved_frames <= FRAMES / 3, "the talker sent so slowly that its reservation is no test of a meter"
        time.sleep(0.5)  # the talker has sent its last frame: the edge has seen it
        follow_round(client, edge, bridge)
        document = client.get(f"/v2.0/srfabric/psfp/{bridge}")
        metrics = httpx.get(f"{lab.serve.url}/metrics", headers={"x-auth-token": lab.serve.token}).text
    counted = counters(edge.obj)[made["stream_id"]]
    assert counted["matching-frames-count"] >= FRAMES * 0.95  # a raw socket's send may drop a few on a busy host
    passed = counted["matching-frames-count"] - counted["not-passing-frames-count"] - counted["red-frames-count"]
    # The reservation in octets as the meter counts them (its frames of 100 octets, each with 22 of header and FCS,
    # one per period while the talker sent, and a bucket of two): the babbler's frames are smaller, so more fit.
    reserved = (SIZE + 22) * reserved_frames
    assert len(received) <= passed and passed * (BABBLE_SDU + 22) <= reserved
    assert counted["not-passing-frames-count"] + counted["red-frames-count"] >= counted["matching-frames-count"] * 0.85
    component = document["ieee802-dot1q-bridge:bridges"]["bridge"][0]["component"][0]
    [shown] = component["ieee802-dot1q-psfp-bridge:stream-filters"]["stream-filter-instance-table"]
    assert {leaf: shown[leaf] for leaf in counted} == counted
    assert f'srfabric_psfp_red_frames_total{{bridge="{bridge}",stream="{made["id"]}"}}' in metrics
