"""Reactive entries expire on real Open vSwitch: the switch removes an idle flow's entry and tells the
controller, which forgets it, so state does not grow without bound (root)."""

from __future__ import annotations

import os
import time

import pytest

from srfabric.rules.entries import Kind
from srfabric_tools.bench.dataplane_setup import FLOW_PORT, send_flows
from srfabric_tools.bench.new_flows import flow_plan
from srfabric_tools.lab.fabric import LabFabric
from srfabric_tools.lab.fabric_topos import line
from srfabric_tools.lab.netlab import NetLab

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(os.geteuid() != 0, reason="builds namespaces and OVS bridges")]


@pytest.mark.parametrize("steering", ["source-routing", "hop-by-hop"])
def test_idle_reactive_entries_go_from_switch_and_controller(steering: str) -> None:
    spec = line(3, 0)
    with NetLab(f"rx{os.getpid() % 10000}") as lab:
        fabric = LabFabric(lab, spec, steering=steering, reactive=True)
        fabric.runner.config.flow_idle_timeout = 2  # before the hosts' learning pings make flows of their own
        with fabric:
            check_expiry(lab, fabric)


def check_expiry(lab: NetLab, fabric: LabFabric) -> None:
    controller = fabric.controller

    def flow_entries() -> int:
        """Reactive entries the switches report."""
        return sum(1 for dpid in controller.switches
                   for stats in fabric.runner.call(controller.channels.entry_stats(dpid)) if stats.kind == Kind.FLOW)

    send_flows(lab, fabric, flow_plan(sorted(fabric.spec.hosts), 4, 100.0, seed=3), FLOW_PORT)
    assert flow_entries() >= 4  # every new flow holds an entry (hop-by-hop: one per switch on its path)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and (flow_entries() or any(controller.flows.values())):
        time.sleep(0.5)
    assert flow_entries() == 0 and not any(controller.flows.values())
    fabric.runner.call(controller.sync())  # a later sync does not put them back
    assert flow_entries() == 0
