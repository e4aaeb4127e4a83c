"""Instances sharing a fabric (``srfabric serve --edges``): an instance is MASTER of the edges it claims even
while it follows, and sends nothing to the switches it holds as SLAVE but hears their topology; a leader lets
go of an edge another live instance claims and takes it back, reading it back, when that claim ends. Switches
on the wire (``WireSwitch``)."""

from __future__ import annotations

import asyncio

from os_ken.ofproto import ofproto_v1_3 as ofp

from srfabric.controller.controller import Controller
from tests.unit.controller.test_shell import ended, joined, until, wanted
from tests.unit.controller.wire_switch import WireSwitch

MASTER, SLAVE = ofp.OFPCR_ROLE_MASTER, ofp.OFPCR_ROLE_SLAVE


def test_a_following_instance_is_master_of_the_edge_it_claims_only() -> None:
    async def scenario() -> tuple[WireSwitch, WireSwitch, bool]:
        controller = Controller()
        controller.following, controller.generation_seen = True, lambda: 7
        controller.channels.edges = frozenset({"dp1"})
        mine, theirs = WireSwitch(1, ports=[1]), WireSwitch(2, ports=[1])
        await joined(controller, mine, theirs)
        await controller.sync()
        whole = mine.cookies == controller.installed[1] == wanted()
        await ended(controller, mine, theirs)
        return mine, theirs, whole

    mine, theirs, whole = asyncio.run(scenario())
    assert mine.roles == [(MASTER, 7)] and whole
    assert theirs.roles == [(SLAVE, 7)] and theirs.changes == theirs.reads == 0
    assert "async set" in theirs.events  # it hears the held switch's LLDP and ARP all the same


def test_a_leader_lets_go_of_an_edge_claimed_elsewhere_and_takes_it_back_when_the_claim_ends() -> None:
    async def scenario() -> tuple[WireSwitch, list[int], list[bool]]:
        controller = Controller()
        controller.generation = 3
        switch = WireSwitch(1)
        await joined(controller, switch)
        await controller.sync()
        changes, taken = [switch.changes], [1 in controller.core.taken]
        await controller.channels.claims(frozenset({"dp1"}))
        await controller.sync()
        changes.append(switch.changes)
        taken.append(1 in controller.core.taken)
        await controller.channels.claims(frozenset())  # the claimant died: its lock is free
        await until(lambda: 1 in controller.core.taken, "taken back")
        await controller.sync()
        changes.append(switch.changes)
        await ended(controller, switch)
        return switch, changes, taken

    switch, changes, taken = asyncio.run(scenario())
    assert switch.roles == [(MASTER, 3), (SLAVE, 3), (MASTER, 3)]
    assert taken == [True, False]
    assert switch.reads == 2  # read back when taken, and again when taken back
    assert changes[0] > 0 and changes[2] == changes[1] == changes[0]  # the table it kept is what is wanted
