"""A redundant stream on real Open vSwitch (Mininet, the TSN paper's Fig. 1 fabric): made through the API with
``num_seamless_trees: 2``, its talker writing R-TAGs at 1,000 frames/s, end-system elimination in XDP on the
listener's interface. A link of the first path is cut in the middle of the run: the listener's socket gets
every frame once (0 lost, 0 duplicates), and the eliminator's counters show the copies it discarded. As a
best-effort class, and time-triggered (one slot on both trees, the R-TAG frames in the time-triggered queue)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from srfabric.model.topo import tsn_fig1
from srfabric.testbed.api_lab import ApiLab, ServeProcess
from srfabric.testbed.frer_traffic import NumberedUdp, tally
from srfabric.testbed.net import ovs_running
from srfabric.tsn.frer import COUNTERS
from srfabric.xdp.frer import FrerEliminator
from srfabric.xdp.loader import build

pytestmark = pytest.mark.skipif(not ovs_running(), reason="needs ovs-vswitchd (make bootstrap)")
FRAMES, RATE, CUT_AFTER_S = 3000, 1000, 1.5


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[ApiLab]:
    build()
    with ServeProcess(f"sqlite:///{tmp_path}/api.db") as serve, ApiLab(tsn_fig1(), serve) as running:
        yield running


@pytest.mark.parametrize("priority", [5, 7])
def test_a_cut_on_one_path_loses_nothing_and_delivers_nothing_twice(lab: ApiLab, priority: int) -> None:
    with lab.serve.client() as client:
        made = client.create("streams", {"talker": lab.ports["h1"], "listener": lab.ports["h3"],
                                         "priority": priority, "udp_source_port": 6001, "udp_destination_port": 6000,
                                         "num_seamless_trees": 2})
    assert (made["path"], made["second_path"]) == (["s1", "s2", "s5"], ["s1", "s3", "s4", "s5"])
    assert (made["slot"] is not None) == (priority == 7)
    assert lab.testbed is not None
    listener_pid = lab.testbed.node("h3").pid
    eliminator = FrerEliminator.load("test-frer-h3", history_length=32, reset_ms=2000)
    try:
        eliminator.attach("h3-eth0", listener_pid)
        flow = NumberedUdp(lab, "redundant", "h1", "h3", 6000, FRAMES, RATE, tagged=True)
        flow.listen()
        time.sleep(0.5)
        flow.talk()
        time.sleep(CUT_AFTER_S)
        lab.testbed.net.configLinkStatus("s2", "s5", "down")
        result = tally(flow.received(FRAMES / RATE + 15), FRAMES, 1_000_000_000 // RATE)
        counted = next(iter(eliminator.counters().values()))
    finally:
        eliminator.attach("h3-eth0", listener_pid, off=True)
        eliminator.unload()
    assert (result["lost"], result["duplicates"]) == (0, 0)
    assert counted[COUNTERS["passed"]] == FRAMES
    assert counted[COUNTERS["discarded"]] >= CUT_AFTER_S * RATE * 0.5  # the second copies before the cut
