"""A port's SR classes as Linux takes them (issue 57), on the lab's Debian kernel under QEMU: ``taprio`` as for any
gated port (the classes share best effort's traffic class and gate), then a ``prio`` under best effort's queue that
ranks class A, class B and best effort, a ``basic`` filter per class on the skb priority Open vSwitch's
``set_queue`` gives, and a ``cbs`` under each class with the slopes and credits the bound assumes. Frames of each
skb priority (set at egress as ``set_queue`` would) are counted on their own class's shaper; a shaper under a
class the ``prio`` does not have is refused."""

from __future__ import annotations

import re
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

SHOW = "/usr/sbin/tc -s qdisc show dev {name}; /usr/sbin/tc -s class show dev {name} parent 10:; echo"
SHAPING = tuple(f"kernel/net/sched/{name}.ko" for name in ("sch_cbs", "sch_prio", "cls_basic", "em_meta",
                                                            "cls_flower", "act_skbedit", "sch_ingress"))
SENT = {"10.9.0.3": ("1:3", 5), "10.9.0.4": ("1:2", 7), "10.9.0.5": ("1:1", 9)}  # class A, class B, best effort


def traffic(dev: str) -> list[str]:
    """Pings whose skb priority is set at egress, before the root qdisc, as ``set_queue`` sets it at a switch."""
    lines = [f"ip addr add 10.9.0.1/24 dev {dev}", f"tc qdisc add dev {dev} clsact"]
    for address, (priority, _) in SENT.items():
        lines.append(f"tc filter add dev {dev} egress protocol ip flower dst_ip {address} "
                     f"action skbedit priority {priority}")
    for address, (_, count) in SENT.items():
        lines.append(f"for i in $(seq {count}); do ping -c 1 -W 1 {address} > /dev/null || true; done")
    return lines


def sent_under(output: str, kind: str, parent: str) -> int:
    """Packets the qdisc of ``kind`` under ``parent`` sent (``tc -s qdisc show``)."""
    found = re.search(rf"qdisc {kind} \S+ parent {re.escape(parent)} .*?\n\s*Sent \d+ bytes (\d+) pkt", output,
                      re.DOTALL)
    assert found, f"no {kind} under {parent}: {output}"
    return int(found.group(1))


def sent_by_class(output: str, classid: str) -> int:
    """Packets the ``prio`` class ``classid`` sent (``tc -s class show``: its default child is not listed)."""
    found = re.search(rf"class prio {re.escape(classid)} .*?\n\s*Sent \d+ bytes (\d+) pkt", output, re.DOTALL)
    assert found, f"no class {classid}: {output}"
    return int(found.group(1))


def test_guest_kernel_ranks_and_shapes_the_classes_under_taprio() -> None:
    find_kernel()
    net = Network.build([("h1", "host"), ("h3", "host"), ("s1", "switch"), ("h2", "host")],
                        [("h1", "s1"), ("h3", "s1"), ("s1", "h2")])
    streams = [ClassStream("cam", "A", ("h1", "s1", "h2"), 125_000, 200),
               ClassStream("mic", "B", ("h3", "s1", "h2"), 250_000, 600)]
    share = analyse(net, streams).ports[("s1", "h2")]
    gcl = PortGcl("s1", "h2", "s1-eth2", 1_000_000, 1_000_000_000, [GateEntry(2, 100_000), GateEntry(0, 12_336),
                                                                    GateEntry(1, 887_664)])
    commands = shaped_port(gcl, share)
    assert len(commands) == 6 and " num_tc 2 " in commands[0]
    broken = [line.replace("s1-eth2", "broken-eth2") for line in commands[:2]]
    broken.append(commands[3].replace("parent 10:1", "parent 10:7").replace("s1-eth2", "broken-eth2"))
    verdicts = check_in_qemu([("s1-eth2", "\n".join(commands + traffic("s1-eth2"))),
                              ("broken-eth2", "\n".join(broken))],
                             module_list=(*MODULES, *SHAPING), show=SHOW)
    shaped, refused = verdicts
    assert shaped.accepted, shaped
    assert "qdisc taprio 100: root" in shaped.output and "qdisc prio 10: parent 100:1" in shaped.output
    for band, cls in (("10:1", "A"), ("10:2", "B")):
        line = next(line for line in shaped.output.splitlines() if f"parent {band}" in line and "cbs" in line)
        assert f"idleslope {-(-int(share.idle_slope_bps[cls]) // 1000)}" in line  # kbit/s, rounded up
    assert sent_under(shaped.output, "cbs", "10:1") == SENT["10.9.0.3"][1]  # class A's frames, on A's shaper only
    assert sent_under(shaped.output, "cbs", "10:2") == SENT["10.9.0.4"][1]
    assert sent_by_class(shaped.output, "10:3") >= SENT["10.9.0.5"][1]  # best effort (and the kernel's own)
    assert not refused.accepted and "Specified class not found" in refused.output, refused
