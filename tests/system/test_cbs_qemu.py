"""A port's SR classes as Linux takes them (issue 57), in the kernel lab (Debian's kernel under QEMU, on veth):
``taprio`` as for any gated port (the classes share best effort's traffic class and gate), then a ``prio`` under
best effort's queue that ranks class A, class B and best effort, a ``basic`` filter per class on the skb priority
Open vSwitch's ``set_queue`` gives, and a ``cbs`` under each class with the slopes and credits the bound assumes.
Frames of each skb priority (set at egress, as ``set_queue`` sets it at a switch) are queued in their own class's
band, every one of them; a shaper under a band the ``prio`` does not have is refused.

Queued, not sent: in this lab, frames a local socket sends through taprio on a veth stay queued (with taprio alone
as well), so this test counts each band's frames, sent or waiting, and says nothing of the shapers' timing."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from srfabric.tsn.gates.gcl import GateEntry, PortGcl
from srfabric.tsn.model.network import Network
from srfabric.tsn.protect.cbs_bound import analyse
from srfabric.tsn.protect.cbs_classes import ClassStream
from srfabric.tsn.protect.cbs_settings import shaped_port
from srfabric_tools.kernel_lab.boot import QEMU
from srfabric_tools.kernel_lab.run import guest_command, lab_config, run_in_lab

pytestmark = [pytest.mark.skipif(shutil.which(QEMU) is None, reason="qemu-system-x86 is not installed"),
              pytest.mark.timeout(900)]

SENT = {"10.9.0.3": ("1:3", 5), "10.9.0.4": ("1:2", 7), "10.9.0.5": ("1:1", 9)}  # class A, class B, best effort


def veth(name: str) -> list[str]:
    return [f"ip link add name {name} numtxqueues 8 numrxqueues 8 type veth peer name {name}-p "
            "numtxqueues 8 numrxqueues 8", f"ip link set {name} up", f"ip link set {name}-p up"]


def traffic(dev: str) -> list[str]:
    """Pings whose skb priority is set at egress, before the root qdisc, as ``set_queue`` sets it at a switch."""
    lines = [f"ip addr add 10.9.0.1/24 dev {dev}", f"tc qdisc add dev {dev} clsact"]
    for number, (address, (priority, _)) in enumerate(SENT.items(), start=1):
        lines += [f"ip neigh replace {address} lladdr 02:00:00:00:00:0{number} dev {dev}",
                  f"tc filter add dev {dev} egress protocol ip flower dst_ip {address} action skbedit priority "
                  f"{priority}"]
    for address, (_, count) in SENT.items():
        lines.append(f"for i in $(seq {count}); do ping -c 1 -W 1 {address} > /dev/null || true; done")
    return lines


def queued_in(output: str, band: str) -> int:
    """Frames the ``prio`` band ``band`` took, sent or still waiting (``tc -s class show``)."""
    found = re.search(rf"class prio {re.escape(band)} .*?\n\s*Sent \d+ bytes (\d+) pkt.*?\n\s*backlog \d+b (\d+)p",
                      output)
    assert found, f"no band {band}: {output}"
    return int(found.group(1)) + int(found.group(2))


def test_the_lab_kernel_queues_each_class_in_its_shaped_band_under_taprio(tmp_path: Path) -> None:
    net = Network.build([("h1", "host"), ("h3", "host"), ("s1", "switch"), ("h2", "host")],
                        [("h1", "s1"), ("h3", "s1"), ("s1", "h2")])
    streams = [ClassStream("cam", "A", ("h1", "s1", "h2"), 125_000, 200),
               ClassStream("mic", "B", ("h3", "s1", "h2"), 250_000, 600)]
    share = analyse(net, streams).ports[("s1", "h2")]
    gcl = PortGcl("s1", "h2", "s1-eth2", 1_000_000, 0, [GateEntry(2, 100_000), GateEntry(0, 12_336),
                                                      GateEntry(1, 887_664)])
    commands = shaped_port(gcl, share)
    assert len(commands) == 6 and " num_tc 2 " in commands[0]
    broken = [line.replace("s1-eth2", "broken-eth2") for line in commands[:2]]
    bad_cbs = commands[3].replace("parent 10:1", "parent 10:7").replace("s1-eth2", "broken-eth2")
    script = "\n".join(["set -e", *veth("s1-eth2"), *commands, *traffic("s1-eth2"), "sleep 1",
                        "tc -s qdisc show dev s1-eth2", "tc -s class show dev s1-eth2 parent 10:",
                        *veth("broken-eth2"), *broken,
                        f"if {bad_cbs} 2> {tmp_path}/refusal; then echo BROKEN-TAKEN; else echo BROKEN-REFUSED; fi"])
    lab = lab_config(memory_mb=1024, shares=(tmp_path,))
    result = run_in_lab(lab, guest_command(["bash", "-c", script], cwd=str(tmp_path)), 800)
    assert result.returncode == 0, result.console[-3000:]
    out = result.output
    assert "qdisc taprio 100: root" in out and "qdisc prio 10: parent 100:1" in out, out
    for band, cls in (("10:1", "A"), ("10:2", "B")):
        line = next(line for line in out.splitlines() if f"parent {band}" in line and "cbs" in line)
        assert f"idleslope {-(-int(share.idle_slope_bps[cls]) // 1000)}" in line  # kbit/s, rounded up
    # Each class's frames, all of them, in its own band and no other's (a frame taprio peeked out of its band may be
    # counted both sent and waiting: one more).
    assert queued_in(out, "10:1") in (SENT["10.9.0.3"][1], SENT["10.9.0.3"][1] + 1)
    assert queued_in(out, "10:2") in (SENT["10.9.0.4"][1], SENT["10.9.0.4"][1] + 1)
    assert queued_in(out, "10:3") >= SENT["10.9.0.5"][1]  # best effort (and the kernel's own)
    assert "BROKEN-REFUSED" in out and "not found" in (tmp_path / "refusal").read_text()
