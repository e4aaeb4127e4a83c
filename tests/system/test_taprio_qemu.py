"""Rendered taprio commands are accepted by a real kernel with taprio, booted under QEMU (about 10 s)."""

from __future__ import annotations

import shutil

import pytest

from srfabric.tsn.formats.generators import erdos_renyi, random_streams
from srfabric.tsn.gates.gcl import build_gcls
from srfabric.tsn.gates.render import to_taprio
from srfabric.tsn.model.network import Stream
from srfabric.tsn.model.slots import plan
from srfabric.tsn.schedulers.registry import schedule_slots as schedule
from srfabric_tools.kernel_lab.taprio_check import QEMU, check_in_qemu, find_kernel

pytestmark = pytest.mark.skipif(shutil.which(QEMU) is None, reason="qemu-system-x86 is not installed")


def test_guest_kernel_accepts_every_rendered_list_and_refuses_a_broken_one() -> None:
    find_kernel()
    network = erdos_renyi(4, 12, links=17, seed=2)
    streams = random_streams(network, 16, seed=2) + [Stream("slow", "h1", "h2", period_ns=2_000_000)]
    problem = plan(network, streams, slots=8, base_period_ns=1_000_000)
    gcls = build_gcls(schedule(problem, "sur"), base_time_ns=1_000_000_000)
    assert len(gcls) >= 4
    commands = [(gcl.interface, to_taprio(gcl)) for gcl in gcls]
    broken = commands[0][1].replace("num_tc 2", "num_tc 99")
    verdicts = check_in_qemu([*commands, ("broken-eth1", broken.replace(commands[0][0], "broken-eth1"))])
    assert len(verdicts) == len(commands) + 1
    for verdict in verdicts[:-1]:
        assert verdict.accepted, verdict
        assert "qdisc taprio 100: root" in verdict.output
        assert f"cycle-time {gcls[0].cycle_ns}" in verdict.output
    assert not verdicts[-1].accepted
    assert "Number of traffic classes is outside valid range" in verdicts[-1].output
