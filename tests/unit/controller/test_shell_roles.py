"""Instances sharing a database: a follower holds its switches as SLAVE and changes nothing; elected, it takes
them as MASTER, reads back what they hold and sends only what differs; a leader whose generation a switch
calls stale steps down. Switches on the wire (``WireSwitch``)."""

from __future__ import annotations

import asyncio

from os_ken.ofproto import ofproto_v1_3 as ofp

from srfabric.controller.controller import Controller
from srfabric.model.fabric import Fabric, Switch
from srfabric.rules.compile import compile_state
from tests.unit.controller.test_shell import ended, joined, until, wanted
from tests.unit.controller.wire_switch import WireSwitch


def follower(seen: int = 0) -> Controller:
    controller = Controller()
    controller.following = True
    controller.generation_seen = lambda: seen
    return controller


def test_a_follower_holds_its_switches_as_slave_and_sends_nothing() -> None:
    async def scenario() -> tuple[list[tuple[int, int]], int, int]:
        controller, switch = follower(7), WireSwitch(1, ports=[1, 2])
        await joined(controller, switch)
        await controller.sync()
        await asyncio.sleep(0.05)
        await ended(controller, switch)
        return switch.roles, switch.reads, switch.changes

    assert asyncio.run(scenario()) == ([(ofp.OFPCR_ROLE_SLAVE, 7)], 0, 0)


def test_a_stale_generation_is_read_again() -> None:
    async def scenario() -> list[tuple[int, int]]:
        controller = follower()
        seen = iter([3, 4])
        controller.generation_seen = lambda: next(seen)
        switch = WireSwitch(1, stale=1)
        await joined(controller, switch)
        await ended(controller, switch)
        return switch.roles

    assert asyncio.run(scenario()) == [(ofp.OFPCR_ROLE_SLAVE, 3), (ofp.OFPCR_ROLE_SLAVE, 4)]


def test_the_elected_follower_takes_its_switches_and_sends_only_what_differs() -> None:
    fabric = Fabric()
    fabric.add_switch(Switch(1, "dp1"))
    left = compile_state(fabric, [], "mac-nibble").entries[1][1:]  # what the old leader left: all but one

    async def scenario() -> tuple[list[tuple[int, int]], int, bool, int, bool]:
        controller, switch = follower(), WireSwitch(1, table=left)
        await joined(controller, switch)
        await controller.lead(8)
        await controller.sync()
        whole = switch.cookies == controller.installed[1] == wanted()
        await ended(controller, switch)
        return switch.roles, switch.reads, controller.following, switch.changes, whole

    roles, reads, following, changes, whole = asyncio.run(scenario())
    assert roles == [(ofp.OFPCR_ROLE_SLAVE, 0), (ofp.OFPCR_ROLE_MASTER, 8)]
    assert reads == 1 and not following
    assert changes == 1 and whole  # the one entry the switch lacked (it has no ports: no LLDP)


def test_a_leader_whose_generation_a_switch_calls_stale_steps_down() -> None:
    async def scenario() -> tuple[bool, list[str], int, int]:
        controller = Controller()
        controller.generation = 3
        told: list[str] = []
        controller.on_deposed = told.append
        switch = WireSwitch(1, stale=1)
        port = await controller.server.start("127.0.0.1", 0)
        await switch.connect(port)
        await until(lambda: bool(told), "deposed")
        await ended(controller, switch)
        return controller.following, told, switch.reads, len(controller.switches)

    following, told, reads, held = asyncio.run(scenario())
    assert following and told and reads == 0 and held == 0


def test_taking_over_notes_the_ports_that_went_down_while_following() -> None:
    async def scenario() -> tuple[bool, bool]:
        controller, switch = follower(), WireSwitch(1, ports=[3], down=[3])
        await joined(controller, switch)
        controller.fabric.add_switch(Switch(2, "s2"))
        controller.fabric.add_link((1, 3), (2, 1))  # the kept state, loaded before taking over
        await controller.lead(4)
        links, dormant = dict(controller.fabric.links), dict(controller.fabric.dormant)
        await ended(controller, switch)
        return (1, 3) in links, (1, 3) in dormant

    assert asyncio.run(scenario()) == (False, True)
