"""A port's SR classes as Linux takes them (issue 57), in the kernel lab (Debian's kernel under QEMU, on veth):
``taprio`` as for any gated port (the classes share best effort's traffic class and gate), then a ``prio`` under
best effort's queue that ranks class A, class B and best effort, a ``basic`` filter per class on the skb priority
Open vSwitch's ``set_queue`` gives, a ``cbs`` under each class with the slopes and credits the bound assumes, and
the taprio again (the grafts cancel its timer). Every frame of each class passes through its own band and leaves;
a burst of class A leaves at its idle slope while one of best effort leaves at once; a shaper under a band the
``prio`` does not have is refused."""

from __future__ import annotations

import json
import re
import shutil
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from srfabric.tsn.gates.gcl import GateEntry, PortGcl
from srfabric.tsn.gates.shaping import at_port_rate, port_commands
from srfabric.tsn.model.network import Network
from srfabric.tsn.protect.cbs_bound import analyse
from srfabric.tsn.protect.cbs_classes import ClassStream
from srfabric.tsn.protect.cbs_settings import shapers_of
from srfabric_tools.kernel_lab.boot import QEMU
from srfabric_tools.kernel_lab.run import guest_command, lab_config, run_in_lab

pytestmark = [pytest.mark.skipif(shutil.which(QEMU) is None, reason="qemu-system-x86 is not installed"),
              pytest.mark.timeout(900)]

SENT = {"10.9.0.3": ("1:3", 5), "10.9.0.4": ("1:2", 7), "10.9.0.5": ("1:1", 9)}  # class A, class B, best effort
BURST = 30
PAYLOAD = 150  # UDP octets: 192-octet frames, within class A's 200-octet frames (a larger one costs a shaper
#                 more than its lowest credit, a talker PSFP drops by its size)
VETH_KBIT = 10_000_000  # the speed a veth reports, at which software cbs counts a frame's credit
BURSTER = Path(__file__).with_name("cbs_burst.py")


def veth(name: str) -> list[str]:
    return [f"ip link add name {name} numtxqueues 8 numrxqueues 8 type veth peer name {name}-p "
            "numtxqueues 8 numrxqueues 8", f"ip link set {name} up", f"ip link set {name}-p up"]


def marking(dev: str) -> list[str]:
    """Each address's skb priority set at egress, before the root qdisc, as ``set_queue`` sets it at a switch.
    Before the taprio: adding ``clsact`` grafts a qdisc too, which stops taprio's gate list (``shaping``)."""
    lines = [f"ip addr add 10.9.0.1/24 dev {dev}", f"tc qdisc add dev {dev} clsact"]
    for number, (address, (priority, _)) in enumerate(SENT.items(), start=1):
        lines += [f"ip neigh replace {address} lladdr 02:00:00:00:00:0{number} dev {dev}",
                  f"tc filter add dev {dev} egress protocol ip flower dst_ip {address} action skbedit priority "
                  f"{priority}"]
    return lines


def traffic(dev: str) -> list[str]:
    """Pings of each class, then a burst of class A and one of best effort, timed where they leave."""
    lines = []
    for address, (_, count) in SENT.items():
        lines.append(f"for i in $(seq {count}); do ping -c 1 -W 1 {address} > /dev/null || true; done")
    for address in ("10.9.0.3", "10.9.0.5"):
        lines.append(f"{sys.executable} {BURSTER} {dev} {dev}-p {address} {BURST} {PAYLOAD}")
    return lines


def left_from(output: str, band: str) -> tuple[int, int]:
    """Frames the ``prio`` band ``band`` sent, and those still waiting in it (``tc -s class show``)."""
    found = re.search(rf"class prio {re.escape(band)} .*?\n\s*Sent \d+ bytes (\d+) pkt.*?\n\s*backlog \d+b (\d+)p",
                      output)
    assert found, f"no band {band}: {output}"
    return int(found.group(1)), int(found.group(2))


def bursts(output: str) -> dict[str, tuple[list[int], int]]:
    """Each burst's address: when its frames arrived (sorted, ns) and their size in octets."""
    found = [json.loads(line.split(" ", 1)[1]) for line in output.splitlines() if line.startswith("BURST ")]
    return {burst["address"]: (sorted(burst["arrived"]), int(burst["bytes"])) for burst in found}


def test_each_class_leaves_through_its_band_and_class_a_at_its_idle_slope(tmp_path: Path) -> None:
    net = Network.build([("h1", "host"), ("h3", "host"), ("s1", "switch"), ("h2", "host")],
                        [("h1", "s1"), ("h3", "s1"), ("s1", "h2")])
    streams = [ClassStream("cam", "A", ("h1", "s1", "h2"), 125_000, 200),
               ClassStream("mic", "B", ("h3", "s1", "h2"), 250_000, 600)]
    share = analyse(net, streams).ports[("s1", "h2")]
    gcl = PortGcl("s1", "h2", "s1-eth2", 1_000_000, 0, [GateEntry(2, 100_000), GateEntry(0, 12_336),
                                                      GateEntry(1, 887_664)])
    shaped = at_port_rate(replace(gcl, shapers=shapers_of(share)), VETH_KBIT)
    commands = port_commands(shaped, shaped_before=False)
    assert len(commands) == 7 and " num_tc 2 " in commands[0] and commands[-1] == commands[0]
    broken = [line.replace("s1-eth2", "broken-eth2") for line in commands[:2]]
    bad_cbs = commands[3].replace("parent 10:1", "parent 10:7").replace("s1-eth2", "broken-eth2")
    script = "\n".join(["set -e", *veth("s1-eth2"), "echo SPEED $(cat /sys/class/net/s1-eth2/speed)",
                        *marking("s1-eth2"), *commands,
                        *traffic("s1-eth2"), "sleep 1",
                        "tc -s qdisc show dev s1-eth2", "tc -s class show dev s1-eth2 parent 10:",
                        *veth("broken-eth2"), *broken,
                        f"if {bad_cbs} 2> {tmp_path}/refusal; then echo BROKEN-TAKEN; else echo BROKEN-REFUSED; fi"])
    lab = lab_config(memory_mb=1024, shares=(tmp_path,))
    result = run_in_lab(lab, guest_command(["bash", "-c", script], cwd=str(tmp_path)), 800)
    assert result.returncode == 0, result.console[-3000:]
    out = result.output
    assert f"SPEED {VETH_KBIT // 1000}" in out, out
    assert "qdisc taprio 100: root" in out and "qdisc prio 10: parent 100:1" in out, out
    for band, cls in (("10:1", "A"), ("10:2", "B")):
        line = next(line for line in out.splitlines() if f"parent {band}" in line and "cbs" in line)
        assert f"idleslope {-(-int(share.idle_slope_bps[cls]) // 1000)}" in line  # kbit/s, rounded up
    # Every frame of each class through its own band, and none left waiting.
    assert left_from(out, "10:1") == (SENT["10.9.0.3"][1] + BURST, 0)
    assert left_from(out, "10:2") == (SENT["10.9.0.4"][1], 0)
    sent, waiting = left_from(out, "10:3")
    assert sent >= SENT["10.9.0.5"][1] + BURST and waiting == 0  # best effort (and the kernel's own)
    # Class A's burst leaves at its idle slope (the gate closes 11 % of each cycle, and the credit it would have
    # gained then is capped at hiCredit); best effort's, unshaped, far faster.
    (a_times, size), (be_times, _) = bursts(out)["10.9.0.3"], bursts(out)["10.9.0.5"]
    assert len(a_times) == len(be_times) == BURST, out
    bits = (BURST - 1) * size * 8
    rate_over_slope = bits / ((a_times[-1] - a_times[0]) / 1e9) / (shaped.shapers[0].idle_kbit * 1000)
    print(f"class A burst: {rate_over_slope:.4f} of its idle slope")
    assert 0.6 <= rate_over_slope <= 1.05, rate_over_slope
    assert (be_times[-1] - be_times[0]) * 5 < a_times[-1] - a_times[0]
    assert "BROKEN-REFUSED" in out and "not found" in (tmp_path / "refusal").read_text()
