"""``srfabric lab tsn-protect``'s quick form on the live fabric with taprio: the babbler's talker sends ten
times its reservation; with the API's PSFP plans on its edge port (XDP's policing or tc's, or Open vSwitch's
meters) the excess is dropped there and counted, and no more than its reservation and bucket gets through; without
them all of it crosses; the class streams' frames arrive every time; the kernel's softirq threads are back to their
ordinary policy after it."""

from __future__ import annotations

import os
from pathlib import Path

from srfabric_tools.lab.core import Settings
from srfabric_tools.lab.experiments.tsn_protect import BABBLER_PERIOD_NS, WARMUP
from srfabric_tools.lab.run import lookup, run_experiment
from srfabric_tools.lab.softirq import PRIORITY as SOFTIRQ_PRIORITY
from srfabric_tools.lab.softirq import softirq_threads

SECONDS = 2.0


def test_the_babblers_excess_is_dropped_at_its_edge_and_counted(kernel_ovs: None, tmp_path: Path) -> None:
    summary, folder = run_experiment(lookup("tsn-protect"), Settings(1, SECONDS, True), tmp_path, show=False)
    by = {(r["psfp"], r["metric"]): r["median"] for r in summary["points"]}
    reserved = (SECONDS + WARMUP / 1000) * 1e9 / BABBLER_PERIOD_NS + 2  # its frames over the run, and the bucket
    for edge in ("xdp", "tc"):
        assert by[edge, "babbler_dropped"] > 3 * reserved and by[edge, "babbler_delivered"] <= reserved, by
    # Open vSwitch's kernel meter refills by the millisecond: a frame or two over the reservation in a run.
    assert by["meters", "babbler_dropped"] > 3 * reserved and by["meters", "babbler_delivered"] <= 1.05 * reserved, by
    assert summary["babbler_dropped_by_meters"] == by["meters", "babbler_dropped"]
    assert by["none", "babbler_dropped"] == 0 and by["none", "babbler_delivered"] > 3 * reserved, by
    assert summary["babbler_dropped"] == by["xdp", "babbler_dropped"]
    for psfp in ("xdp", "tc", "meters", "none"):
        assert by[psfp, "class_a_frames"] > 0.8 * SECONDS * 1000 and by[psfp, "class_b_frames"] > 0.8 * SECONDS * 1000
    for key in ("late_with_psfp", "late_without_psfp", "class_a_over_bound", "class_a_bound_us", "class_a_worst_us"):
        assert key in summary, key
    assert summary["softirq_threads"]["priority"] == SOFTIRQ_PRIORITY  # put back after the run
    assert all(os.sched_getscheduler(pid) == os.SCHED_OTHER for pid in softirq_threads())
    assert (folder / "tsn-protect.png").stat().st_size > 0
