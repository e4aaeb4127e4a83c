"""A controller that follows another (instances sharing a database) holds its switches as SLAVE and changes
nothing; elected, it takes them as MASTER, reads back what they hold and sends only what differs. No root."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence
from types import SimpleNamespace
from typing import Any

import pytest
from os_ken.ofproto import ofproto_v1_3 as ofp

from srfabric.controller.controller import Controller
from srfabric.controller.taking import STALE
from srfabric.model.fabric import Switch
from srfabric.rules.entries import FlowEntry
from srfabric.southbound.channel import PortInfo, SwitchError
from srfabric.southbound.ofbind import flow_add, wire_cookie


class RoleSwitch:
    """Stands in for a switch connection: answers role requests (refusing the first ``stale`` SLAVE ones),
    serves a flow table to read back, records what is sent; barriers are answered at once."""

    def __init__(self, dpid: int = 1, table: list[Any] | None = None, stale: int = 0) -> None:
        self.dpid, self.ports, self.bridge_name = dpid, {}, "s1"
        self.roles: list[tuple[int, int]] = []
        self.closed = asyncio.Event()
        self.reads = 0
        self.sent: list[Any] = []
        self.table = table or []
        self.stale = stale

    async def request_role(self, role: int, generation: int, timeout: float = 10.0) -> None:
        self.roles.append((role, generation))
        if self.stale:
            self.stale -= 1
            error = SwitchError("switch", "refused OFPRoleRequest: type=11 code=0")
            error.refused = STALE
            raise error

    async def flow_stats(self) -> list[Any]:
        self.reads += 1
        return self.table

    async def group_desc(self) -> list[Any]:
        return []

    def send(self, msg: Any) -> int:
        self.sent.append(msg)
        return len(self.sent)

    def start_barrier(self, timeout: float = 10.0, before: Sequence[Any] = ()) -> Awaitable[None]:
        self.sent.extend(before)
        return asyncio.sleep(0)


def test_a_follower_holds_its_switches_as_slave_and_sends_nothing() -> None:
    controller = Controller()
    controller.following = True
    controller.generation_seen = lambda: 7
    switch = RoleSwitch()

    async def run() -> None:
        await controller._on_ready(switch)  # type: ignore[arg-type]  # noqa: SLF001
        await controller.sync()

    asyncio.run(run())
    assert switch.roles == [(ofp.OFPCR_ROLE_SLAVE, 7)]
    assert switch.reads == 0 and switch.sent == [] and controller.switches == {1: switch}


def test_a_stale_generation_is_read_again() -> None:
    controller = Controller()
    controller.following = True
    seen = iter([3, 4])
    controller.generation_seen = lambda: next(seen)
    switch = RoleSwitch(stale=1)
    asyncio.run(controller._on_ready(switch))  # type: ignore[arg-type]  # noqa: SLF001
    assert switch.roles == [(ofp.OFPCR_ROLE_SLAVE, 3), (ofp.OFPCR_ROLE_SLAVE, 4)]


def test_the_elected_follower_takes_its_switches_and_sends_only_what_differs() -> None:
    # What the old leader left on the switch: every entry this controller wants but one.
    reference = Controller()
    reference.fabric.add_switch(Switch(1, "s1"))
    wanted = reference.cache.state(reference.fabric, []).entries[1]
    switch = RoleSwitch(table=[flow_stat(entry) for entry in wanted[1:]])
    controller = Controller()
    controller.following = True

    async def run() -> None:
        await controller._on_ready(switch)  # type: ignore[arg-type]  # noqa: SLF001
        await controller.lead(8)
        await controller.sync()

    asyncio.run(run())
    assert switch.roles == [(ofp.OFPCR_ROLE_SLAVE, 0), (ofp.OFPCR_ROLE_MASTER, 8)]
    assert switch.reads == 1 and not controller.following
    assert len(switch.sent) == 1  # the one entry the switch lacked (it has no ports: no LLDP)
    assert controller.installed[1] == {entry.key: wire_cookie(entry) for entry in wanted}


def flow_stat(entry: FlowEntry) -> SimpleNamespace:
    """A flow-stats body as the switch reports ``entry``."""
    mod = flow_add(entry)
    return SimpleNamespace(table_id=mod.table_id, priority=mod.priority, match=mod.match, cookie=wire_cookie(entry))


def test_a_leader_whose_generation_a_switch_calls_stale_steps_down() -> None:
    controller = Controller()
    controller.generation = 3
    told: list[str] = []
    controller.on_deposed = told.append
    switch = RoleSwitch(stale=1)
    with pytest.raises(SwitchError):
        asyncio.run(controller._on_ready(switch))  # type: ignore[arg-type]  # noqa: SLF001
    assert controller.following and told and switch.reads == 0 and controller.switches == {}


def test_taking_over_notes_the_ports_that_went_down_while_following() -> None:
    controller = Controller()
    controller.following = True
    switch = RoleSwitch()
    switch.ports = {3: PortInfo(3, "s1-eth3", "00:00:00:00:00:03", down=True)}
    controller.fabric.add_switch(Switch(2, "s2"))

    async def run() -> None:
        await controller._on_ready(switch)  # type: ignore[arg-type]  # noqa: SLF001
        controller.fabric.add_link((1, 3), (2, 1))  # the kept state, loaded before taking over
        await controller.lead(4)

    asyncio.run(run())
    assert (1, 3) not in controller.fabric.links and (1, 3) in controller.fabric.dormant
