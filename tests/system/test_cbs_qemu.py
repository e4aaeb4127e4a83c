"""A port's SR classes as Linux takes them (issue 57): ``taprio`` with the classes' gates open beside best effort's
and their priorities in its map, and a ``cbs`` under each class's queue with the slopes and credits the bound
assumes, accepted by the lab's Debian kernel under QEMU; a ``cbs`` under a class taprio does not have is refused."""

from __future__ import annotations

import shutil

import pytest

from srfabric.tsn.gates.gcl import GateEntry, PortGcl
from srfabric.tsn.model.network import Network
from srfabric.tsn.protect.cbs_bound import analyse
from srfabric.tsn.protect.cbs_classes import ClassStream
from srfabric.tsn.protect.cbs_settings import shaped_port
from srfabric_tools.kernel_lab.taprio_check import MODULES, QEMU, check_in_qemu, find_kernel

pytestmark = [pytest.mark.skipif(shutil.which(QEMU) is None, reason="qemu-system-x86 is not installed"),
              pytest.mark.timeout(600)]

SHOW = "/usr/sbin/tc qdisc show dev {name}; echo"


def test_guest_kernel_takes_taprio_with_the_classes_and_a_cbs_under_each() -> None:
    find_kernel()
    net = Network.build([("h1", "host"), ("h3", "host"), ("s1", "switch"), ("h2", "host")],
                        [("h1", "s1"), ("h3", "s1"), ("s1", "h2")])
    streams = [ClassStream("cam", "A", ("h1", "s1", "h2"), 125_000, 200),
               ClassStream("mic", "B", ("h3", "s1", "h2"), 250_000, 600)]
    share = analyse(net, streams).ports[("s1", "h2")]
    gcl = PortGcl("s1", "h2", "s1-eth2", 1_000_000, 1_000_000_000, [GateEntry(2, 100_000), GateEntry(0, 12_336),
                                                                    GateEntry(1, 887_664)])
    commands = shaped_port(gcl, share)
    assert len(commands) == 3 and " num_tc 4 " in commands[0]
    broken = commands[1].replace("parent 100:4", "parent 100:9").replace("s1-eth2", "broken-eth2")
    script = "\n".join(commands)
    verdicts = check_in_qemu([("s1-eth2", script), ("broken-eth2", commands[0].replace("s1-eth2", "broken-eth2")
                                                     + "\n" + broken)],
                             module_list=(*MODULES, "kernel/net/sched/sch_cbs.ko"), show=SHOW)
    shaped, refused = verdicts
    assert shaped.accepted, shaped
    assert "qdisc taprio 100: root" in shaped.output and " tc 4 map 0 0 2 3 0 0 0 1 " in shaped.output
    for parent, slope in (("100:4", share.idle_slope_bps["A"]), ("100:3", share.idle_slope_bps["B"])):
        line = next(line for line in shaped.output.splitlines() if f"parent {parent}" in line and "cbs" in line)
        assert f"idleslope {-(-int(slope) // 1000)}" in line  # kbit/s, rounded up
    assert not refused.accepted and "Specified class not found" in refused.output, refused
