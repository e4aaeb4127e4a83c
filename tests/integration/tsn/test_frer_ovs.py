"""A redundant stream on real Open vSwitch (Mininet, the TSN paper's Fig. 1 fabric): made through the API with
``num_seamless_trees: 2``, its talker writing R-TAGs at 1,000 frames/s, end-system elimination in XDP on the
listener's interface. A link of the first path is cut in the middle of the run: the listener's socket gets
every frame once (0 lost, 0 duplicates), and the eliminator's counters, reported to the API and read back in
ieee802-dot1cb-frer's terms, show the copies it discarded. As a
best-effort class, and time-triggered (one slot on both trees, the R-TAG frames in the time-triggered queue)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from srfabric.model.topo import tsn_fig1
from srfabric.tsn.model.frer import COUNTERS
from srfabric.xdp.frer import FrerEliminator
from srfabric.xdp.loader import build
from srfabric_tools.testbed.api_lab import ApiLab, ServeProcess
from srfabric_tools.testbed.frer_traffic import NumberedUdp, tally, with_a_cut
from srfabric_tools.testbed.net import ovs_running

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
        result = with_a_cut(lab, flow, CUT_AFTER_S, ("s2", "s5"))
        counted = next(iter(eliminator.counters().values()))
        with lab.serve.client() as client:  # as `srfabric frer eliminate` reports them
            assert client.report_frer(eliminator.report("h3-eth0"))["matched"] == 1
            shown = client.get("/v2.0/srfabric/frer")["ietf-interfaces:interfaces"]["interface"][0]
    finally:
        eliminator.attach("h3-eth0", listener_pid, off=True)
        eliminator.unload()
    assert (result["lost"], result["duplicates"]) == (0, 0)
    assert counted[COUNTERS["passed"]] == FRAMES
    in_api = shown["statistics"]["ieee802-dot1cb-frer:frer"]["per-port-per-stream-counters"][0]
    assert (in_api["handle"], in_api[COUNTERS["passed"]]) == (made["stream_id"], FRAMES)
    assert counted[COUNTERS["discarded"]] >= CUT_AFTER_S * RATE * 0.5  # the second copies before the cut


def test_srfabric_frer_eliminate_reports_until_stopped_and_then_takes_its_program_off(lab: ApiLab) -> None:
    with lab.serve.client() as client:
        made = client.create("streams", {"talker": lab.ports["h1"], "listener": lab.ports["h3"], "priority": 5,
                                         "udp_source_port": 6003, "udp_destination_port": 6002,
                                         "num_seamless_trees": 2})
    assert lab.testbed is not None
    pid = lab.testbed.node("h3").pid
    command = [sys.executable, "-m", "srfabric", "frer", "eliminate", "h3-eth0", "--pid", str(pid), "--every-s",
               "0.2", "--url", lab.serve.url, "--token", lab.serve.token]
    daemon = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert daemon.stdout is not None
        assert "eliminating on h3-eth0" in daemon.stdout.readline()
        flow = NumberedUdp(lab, "reported", "h1", "h3", 6002, 300, RATE, tagged=True)  # from port 6003
        flow.listen()
        flow.talk()
        result = tally(flow.received(300 / RATE + 15), 300, 1_000_000_000 // RATE)
        time.sleep(0.6)  # a report after the last frame
        with lab.serve.client() as client:
            shown = client.get("/v2.0/srfabric/frer")["ietf-interfaces:interfaces"]["interface"][0]
    finally:
        daemon.terminate()
        output = daemon.communicate(timeout=30)[0]
    counters = shown["statistics"]["ieee802-dot1cb-frer:frer"]["per-port-per-stream-counters"][0]
    assert (result["lost"], result["duplicates"]) == (0, 0)
    assert (counters["handle"], counters[COUNTERS["passed"]]) == (made["stream_id"], 300), output
    attached = subprocess.run(["nsenter", f"--net=/proc/{pid}/ns/net", "ip", "-d", "link", "show", "h3-eth0"],
                              capture_output=True, text=True).stdout
    assert "xdp" not in attached and daemon.returncode == 128 + signal.SIGTERM
