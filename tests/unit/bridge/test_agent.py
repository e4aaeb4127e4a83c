"""The bridge agent follows netconfd's running configuration: a committed list goes to the port driver at once
(taprio switches at the base time itself), ``config-pending`` until the base time, then the oper leaves are
the list's; a port whose gates are disabled is released; a list the driver refuses is counted in
``config-change-error`` and the oper state keeps the previous list."""

from __future__ import annotations

import os
from pathlib import Path

from srfabric.bridge.agent import BridgeAgent
from srfabric.bridge.ports import UnappliedPorts
from srfabric.errors import ModelError
from srfabric.rules.yang.xml_document import to_config
from srfabric.southbound.netconf.gates import bridge_document
from srfabric.tsn.gates.gcl import GateEntry, PortGcl

BASE = 10_000_000_000
GCL = PortGcl("s1", "s2", "s1-eth3", 1_000_000, BASE, [GateEntry(2, 30_000), GateEntry(1, 970_000)])


class Clock:
    def __init__(self) -> None:
        self.now = BASE - 100_000_000

    def __call__(self) -> int:
        return self.now


def commit(state: Path, gcls: list[PortGcl], freed: frozenset[str] = frozenset()) -> None:
    """What the SIL writes after a commit: a new file renamed in."""
    part = state / "running.xml.part"
    part.write_text(to_config(bridge_document(gcls, freed)))
    os.replace(part, state / "running.xml")


def oper(state: Path, leaf: str) -> str | None:
    path = state / "oper" / "s1-eth3" / leaf
    return path.read_text().strip() if path.exists() else None


def test_a_committed_list_is_applied_pending_until_its_base_time_then_running(tmp_path: Path) -> None:
    clock, ports = Clock(), UnappliedPorts()
    agent = BridgeAgent(tmp_path, "s1", ports, clock)
    commit(tmp_path, [GCL])
    agent.poll()
    assert ports.lists["s1-eth3"].entries == GCL.entries
    assert oper(tmp_path, "config-pending") == "true" and oper(tmp_path, "oper-control-list") is None
    clock.now = BASE + 2_500_000  # two and a half cycles after the base time
    agent.poll()
    assert oper(tmp_path, "config-pending") == "false"
    assert "<time-interval-value>30000</time-interval-value>" in (oper(tmp_path, "oper-control-list") or "")
    assert "<seconds>10</seconds>" in (oper(tmp_path, "oper-base-time") or "")
    assert "<nanoseconds>3000000</nanoseconds>" in (oper(tmp_path, "config-change-time") or "")
    assert oper(tmp_path, "tick-granularity") == "10"


def test_a_port_whose_gates_are_disabled_is_released(tmp_path: Path) -> None:
    ports = UnappliedPorts()
    agent = BridgeAgent(tmp_path, "s1", ports, Clock())
    commit(tmp_path, [GCL])
    agent.poll()
    commit(tmp_path, [], frozenset({"s1-eth3"}))
    agent.poll()
    assert "s1-eth3" not in ports.lists and oper(tmp_path, "oper-control-list") is None


class RefusingPorts(UnappliedPorts):
    def apply(self, gcl: PortGcl) -> None:
        raise ModelError(f"port {gcl.interface}", "tc refused the schedule: no such device")


def test_a_list_the_port_refuses_is_counted_and_changes_no_state(tmp_path: Path) -> None:
    agent = BridgeAgent(tmp_path, "s1", RefusingPorts(), Clock())
    commit(tmp_path, [GCL])
    agent.poll()
    assert oper(tmp_path, "config-change-error") == "1" and oper(tmp_path, "config-pending") is None
    assert agent.applied == {}


def test_an_unreadable_running_configuration_changes_nothing(tmp_path: Path) -> None:
    ports = UnappliedPorts()
    agent = BridgeAgent(tmp_path, "s1", ports, Clock())
    (tmp_path / "running.xml").write_text("<config><unclosed></config>")
    agent.poll()
    assert ports.lists == {} and agent.applied == {}


def test_the_agent_waits_on_the_fifo_the_sil_writes_and_polls_nothing_meanwhile(tmp_path: Path) -> None:
    """With a minute between its own reads, the agent applies a commit only because the SIL's byte woke it."""
    import threading
    import time

    ports, stop = UnappliedPorts(), threading.Event()
    agent = BridgeAgent(tmp_path, "s1", ports, Clock())
    runner = threading.Thread(target=agent.run, args=(stop, 60.0), daemon=True)
    runner.start()
    while not (tmp_path / "changed").exists():
        time.sleep(0.01)
    time.sleep(0.2)  # the agent has read the (absent) configuration and waits
    commit(tmp_path, [GCL])
    descriptor = os.open(tmp_path / "changed", os.O_WRONLY | os.O_NONBLOCK)  # as notify_agent in the SIL
    os.write(descriptor, b"c")
    os.close(descriptor)
    for _ in range(1000):
        if "s1-eth3" in ports.lists:
            break
        time.sleep(0.01)
    stop.set()
    descriptor = os.open(tmp_path / "changed", os.O_WRONLY | os.O_NONBLOCK)  # wake it to see the stop
    os.write(descriptor, b"c")
    os.close(descriptor)
    runner.join(timeout=10)
    assert ports.lists["s1-eth3"].entries == GCL.entries and not runner.is_alive()
