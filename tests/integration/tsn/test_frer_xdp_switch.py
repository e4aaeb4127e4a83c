"""A redundant stream on srfabric's XDP switches (Mininet hosts, the TSN paper's Fig. 1 fabric, the agent for
every switch): made through the API with ``num_seamless_trees: 2``. The talker's edge copies each R-tagged frame
into both paths with the tc replicator (XDP cannot clone), and the listener's edge eliminates the second copy in
XDP before it delivers the frame without its tag, so the listener's host runs nothing. A link of the first path
is cut in the middle of the run: every frame arrives once (0 lost, 0 duplicates), and the switches' counters show
the copies made and eliminated; ``srfabric frer report`` puts the egress edge's counters in the API."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from srfabric.model.topo import tsn_fig1
from srfabric.tsn.model.frer import COUNTERS
from srfabric.xdp.bpf_syscall import PinnedMap
from srfabric.xdp.layout import REASONS, sum_counts, u32
from srfabric.xdp.loader import PIN_ROOT, build
from srfabric_tools.testbed.api_lab import ApiLab, ServeProcess
from srfabric_tools.testbed.frer_traffic import NumberedUdp, with_a_cut
from srfabric_tools.testbed.net import ovs_running

pytestmark = pytest.mark.skipif(not ovs_running(), reason="needs ovs-vswitchd (make bootstrap)")
FRAMES, RATE, CUT_AFTER_S = 3000, 1000, 1.5


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[ApiLab]:
    build()
    with ServeProcess(f"sqlite:///{tmp_path}/api.db") as serve, ApiLab(tsn_fig1(), serve, switch="xdp") as running:
        yield running


def verdicts(switch: str, reason: str) -> int:
    """Frames the switch's programs counted under ``reason`` (``layout.REASONS``), summed over CPUs."""
    table = PinnedMap.open(PIN_ROOT / f"mn-{switch}" / "maps" / "sr_verdicts")  # the testbed's pin names
    try:
        return sum_counts(table.lookup_per_cpu(u32(REASONS.index(reason)))).packets
    finally:
        table.close()


def test_the_xdp_switches_copy_and_eliminate_so_a_cut_loses_nothing(lab: ApiLab) -> None:
    with lab.serve.client() as client:
        made = client.create("streams", {"talker": lab.ports["h1"], "listener": lab.ports["h3"], "priority": 5,
                                         "udp_source_port": 6001, "udp_destination_port": 6000,
                                         "num_seamless_trees": 2})
    assert (len(made["path"]), len(made["second_path"])) == (3, 4)  # s1-s2-s5 and s1-s3-s4-s5 (named dpN here)
    assert lab.testbed is not None
    flow = NumberedUdp(lab, "redundant-xdp", "h1", "h3", 6000, FRAMES, RATE, tagged=True)
    result = with_a_cut(lab, flow, CUT_AFTER_S, ("s2", "s5"))
    assert (result["lost"], result["duplicates"]) == (0, 0)
    assert verdicts("s1", "replicate") == FRAMES  # s1, the talker's edge: every frame to the replicator
    assert verdicts("s5", "drop_duplicate") >= CUT_AFTER_S * RATE * 0.5  # s5: the second copies until the cut
    reported = subprocess.run([sys.executable, "-m", "srfabric", "frer", "report", "mn-s5", "--once", "--url",
                               lab.serve.url, "--token", lab.serve.token], capture_output=True, text=True, timeout=60)
    assert "1 of them admitted" in reported.stdout, reported.stdout + reported.stderr
    with lab.serve.client() as client:
        shown = client.get("/v2.0/srfabric/frer")["ietf-interfaces:interfaces"]["interface"]
    counters = next(i for i in shown if i["name"].endswith("/mn-s5"))["statistics"]["ieee802-dot1cb-frer:frer"]
    entry = counters["per-port-per-stream-counters"][0]
    assert (entry["handle"], entry[COUNTERS["passed"]]) == (made["stream_id"], FRAMES)
