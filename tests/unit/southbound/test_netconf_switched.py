"""Reading a change back from the bridges' oper state: a port that runs the list sent, at a cycle boundary, passes;
one still on the old list, or one that switched in the middle of a cycle (a cycle that ran a mix of two
schedules), is named."""

from __future__ import annotations

from typing import Any

import pytest

from srfabric.bridge import oper_state
from srfabric.errors import Unavailable
from srfabric.model.management import BridgeAccess
from srfabric.rules.yang.sched_tables import PortTable, port_tables
from srfabric.rules.yang.xml_document import to_xml
from srfabric.southbound.netconf.gates import NetconfGates, bridge_document
from srfabric.tsn.gates.gcl import GateEntry, PortGcl

SENT = PortGcl("s1", "s2", "s1-eth3", 1_000_000, 7_000_000_000, [GateEntry(2, 30_000), GateEntry(1, 970_000)])


class HeldTables:
    """A bridge's session that answers ``tables`` with a given oper state (the reading is what is tested)."""

    def __init__(self, access: BridgeAccess, oper: PortGcl, changed_ns: int) -> None:
        self.name = access.name
        text = to_xml(bridge_document([oper], set()))
        files = oper_state.running(oper, changed_ns)
        body = "".join(v if v.startswith("<") else f"<{k}>{v}</{k}>" for k, v in files.items())
        self.text = text.replace("</gate-parameter-table>", body + "</gate-parameter-table>")

    def tables(self) -> dict[str, PortTable]:
        return port_tables(self.text, self.name)

    def close(self) -> None:
        return None


def gates_holding(oper: PortGcl, changed_ns: int) -> NetconfGates:
    access = {"s1": BridgeAccess("s1", "192.0.2.1", "root")}
    session: Any = lambda a: HeldTables(a, oper, changed_ns)  # noqa: E731
    return NetconfGates(access, session=session)


def test_a_port_running_the_list_since_its_base_time_passes() -> None:
    assert gates_holding(SENT, SENT.base_time_ns).switched([SENT]) == []
    assert gates_holding(SENT, SENT.base_time_ns + 3 * SENT.cycle_ns).switched([SENT]) == []


def test_a_port_on_another_list_is_named() -> None:
    old = PortGcl("s1", "s2", "s1-eth3", 1_000_000, 6_000_000_000, [GateEntry(2, 40_000), GateEntry(1, 960_000)])
    assert gates_holding(old, old.base_time_ns).switched([SENT]) == [
        "bridge s1 port s1-eth3: oper state does not run the list sent"]


def test_a_port_that_switched_mid_cycle_is_named() -> None:
    problems = gates_holding(SENT, SENT.base_time_ns + 250_000).switched([SENT])
    assert problems == ["bridge s1 port s1-eth3: switched at 7000250000, not at a cycle boundary (a cycle ran a mix "
                        "of two schedules)"]


class Confirming:
    """A bridge's session that commits, and confirms unless told to be lost between the two phases."""

    lost: set[str] = set()

    def __init__(self, access: BridgeAccess) -> None:
        self.name = access.name
        self.edits: list[str] = []

    def edit_and_commit(self, config: str, token: str, confirm_timeout_s: int) -> None:
        self.edits.append(config)

    def confirm(self, token: str) -> None:
        if self.name in self.lost:
            raise Unavailable(f"bridge {self.name}", "confirming commit: no answer within 10 s")

    def close(self) -> None:
        return None


def test_a_bridge_lost_before_its_confirmation_is_sent_again_and_the_others_are_known_to_run_the_new_lists() -> None:
    access = {name: BridgeAccess(name, "192.0.2.1", "root") for name in ("s1", "s2")}
    session: Any = Confirming
    gates = NetconfGates(access, session=session)
    before = [PortGcl(name, "", f"{name}-eth1", 1_000_000, 0, [GateEntry(2, 1_000_000)]) for name in ("s1", "s2")]
    gates.apply(before)
    after = [PortGcl(name, "", f"{name}-eth1", 1_000_000, 5_000_000, [GateEntry(2, 1_000_000)])
             for name in ("s1", "s2")]
    Confirming.lost = {"s2"}
    try:
        with pytest.raises(Unavailable) as lost:
            gates.apply(after)
    finally:
        Confirming.lost = set()
    assert lost.value.field == "bridge s2" and gates.stale == {"s2"}
    assert gates.sent == {"s1": [after[0]], "s2": [before[1]]}  # s1 confirmed the new lists; s2 rolls back
    edits = {name: len(session.edits) for name, session in gates.sessions.items()}
    gates.apply(before)  # putting the previous lists back reaches both: s1 runs the new ones, s2 is stale
    assert {name: len(session.edits) - edits[name] for name, session in gates.sessions.items()} == {"s1": 1, "s2": 1}
