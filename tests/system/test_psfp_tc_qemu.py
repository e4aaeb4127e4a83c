"""The per-stream filters, gates and policers srfabric renders for Linux are taken by a real kernel that has
``flower``, ``gate`` and ``police`` (Debian's, booted under QEMU: this machine's kernel has none of them), for the
streams a live planner admitted; a filter with a gate entry of a kind Linux does not know is refused."""

from __future__ import annotations

import shutil

import pytest

from srfabric.tsn.protect.tc import tc_commands
from srfabric_tools.kernel_lab.taprio_check import QEMU, check_in_qemu, find_kernel
from tests.unit.tsn.test_psfp import planned

pytestmark = pytest.mark.skipif(shutil.which(QEMU) is None, reason="qemu-system-x86 is not installed")
MODULES = tuple(f"kernel/net/sched/{name}.ko" for name in (
    "sch_ingress", "cls_flower", "cls_basic", "em_cmp", "act_gact", "act_gate", "act_police")) + (
    "kernel/drivers/net/dummy.ko",)
SHOW = "/usr/sbin/tc -s filter show dev {name} ingress | head -c 60000; echo"


def test_the_guest_kernel_takes_every_edge_ports_filters_and_refuses_a_broken_one() -> None:
    find_kernel()
    _, plans = planned(tolerance_ns=2_000)
    by_port = {"s1-eth1": [p for p in plans if p.talker == "h1"], "s1-eth2": [p for p in plans if p.talker == "h2"]}
    assert all(by_port.values())
    commands = [(port, "\n".join(tc_commands(own, port))) for port, own in by_port.items()]
    broken = commands[0][1].replace("sched-entry close", "sched-entry ajar").replace("s1-eth1", "broken-eth1")
    verdicts = check_in_qemu([*commands, ("broken-eth1", broken)], module_list=MODULES, show=SHOW)
    assert len(verdicts) == 3
    for verdict, own in zip(verdicts, by_port.values(), strict=False):
        assert verdict.accepted, verdict
        shown = verdict.output
        assert shown.count("clockid TAI") == shown.count("police 0x") == shown.count("gact action drop") == len(own)
        assert shown.count(f"cycle-time {plans[0].gate.cycle_ns // 1_000_000}ms") == len(own), shown
        for plan in own:
            assert f"dst_port {plan.identity.udp_dst}" in shown
            assert f"AND cmp(u16 at 2 layer 1 gt {plan.max_sdu_bytes})" in shown
    assert not verdicts[-1].accepted
