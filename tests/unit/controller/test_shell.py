"""The controller's shell with switches on the wire (``WireSwitch``, over TCP to its real OpenFlow server): a sync
sends everything, then runs the caller's work, then awaits the barriers; a follower holds its switches as SLAVE
and changes nothing, and once elected takes them as MASTER, reads back what they hold and sends only what
differs; a new flow whose later switches need entries first does not hold up its switch's read loop."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from srfabric.controller.config import ControllerConfig
from srfabric.controller.controller import Controller
from srfabric.model.fabric import Fabric, Switch
from srfabric.model.topo import fat_tree
from srfabric.rules.compile import compile_state
from srfabric.rules.openflow.ofbind import wire_cookie
from srfabric.xdp.frames import udp_frame
from tests.unit.controller.wire_switch import WireSwitch


async def until(condition: Callable[[], bool], what: str, timeout: float = 5.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        assert loop.time() < deadline, f"{what} not reached within {timeout} s"
        await asyncio.sleep(0.01)


async def joined(controller: Controller, *switches: WireSwitch) -> int:
    """Start the controller's OpenFlow server (no sync or LLDP loop: the test syncs) and connect ``switches``;
    the server's port."""
    port = await controller.server.start("127.0.0.1", 0)
    for switch in switches:
        await switch.connect(port)
    await until(lambda: all(s.dpid in controller.switches for s in switches), "switches taken")
    return port


async def ended(controller: Controller, *switches: WireSwitch) -> None:
    for switch in switches:
        await switch.close()
    await controller.stop()


def wanted(dpid: int = 1) -> dict[tuple[int, int, tuple[tuple[str, int, int | None], ...]], int]:
    """What a lone switch should hold, by key, with the cookies it is sent with."""
    fabric = Fabric()
    fabric.add_switch(Switch(dpid, f"dp{dpid}"))
    return {entry.key: wire_cookie(entry) for entry in compile_state(fabric, [], "mac-nibble").entries[dpid]}


def test_the_work_runs_between_sending_and_the_barrier_reply() -> None:
    async def scenario() -> tuple[list[tuple[list[str], int]], list[str], bool]:
        controller, switch = Controller(), WireSwitch(1, hold_barriers=True)
        await joined(controller, switch)
        seen: list[tuple[list[str], int]] = []

        def meanwhile() -> None:  # everything is written by now, and no barrier reply has come
            seen.append((list(switch.events), controller.switches[1].counters.messages_sent))
            switch.release.set()

        await controller.sync(meanwhile)
        holds = switch.cookies == controller.installed[1] == wanted()
        await ended(controller, switch)
        return seen, switch.events, holds

    seen, events, holds = asyncio.run(scenario())
    ((answered, sent),) = seen
    assert "barrier answered" not in answered and sent > len(wanted())  # the entries, then the barrier request
    assert events == [f"barrier after {len(wanted())} messages", "barrier answered"]
    assert holds  # the switch holds what the controller records, and that is the compiled table


def test_a_sync_that_sent_something_is_timed_from_its_plan_to_the_barrier_reply() -> None:
    async def scenario() -> list[float]:
        ticks = iter(range(0, 10**12, 250_000_000))  # each reading of the clock is a quarter second later
        controller, switch = Controller(ControllerConfig(clock=lambda: next(ticks))), WireSwitch(1)
        await joined(controller, switch)
        await controller.sync()
        await controller.sync()  # nothing left to send: not timed
        await ended(controller, switch)
        return list(controller.sync_seconds)

    (seconds,) = asyncio.run(scenario())
    assert seconds > 0 and seconds % 0.25 == 0


def test_a_failing_work_is_raised_once_the_switch_answered() -> None:
    async def scenario() -> tuple[list[str], bool]:
        controller, switch = Controller(), WireSwitch(1, hold_barriers=True)
        await joined(controller, switch)

        def meanwhile() -> None:
            asyncio.get_running_loop().call_later(0.01, switch.release.set)
            raise RuntimeError("database is away")

        with pytest.raises(RuntimeError, match="database is away"):
            await controller.sync(meanwhile)
        known = controller.installed[1] == switch.cookies  # so the next sync sends only a difference
        await ended(controller, switch)
        return switch.events, known

    events, known = asyncio.run(scenario())
    assert events[-1] == "barrier answered" and known


def test_the_work_runs_when_nothing_needs_sending_and_a_table_read_again_is_compared_again() -> None:
    async def scenario() -> tuple[list[bool], int, int, bool]:
        controller, switch = Controller(), WireSwitch(1)
        port = await joined(controller, switch)
        await controller.sync()
        before = switch.changes
        ran: list[bool] = []
        await controller.sync(lambda: ran.append(True))
        again = switch.changes - before
        # The switch comes back having lost an entry (a restart of its own): read back, only that one is sent.
        kept = dict(switch.table)
        del kept[next(iter(kept))]
        await switch.close()
        await until(lambda: 1 not in controller.switches, "switch gone")
        back = WireSwitch(1, table=kept.values())
        await back.connect(port)
        await until(lambda: 1 in controller.switches, "switch back")
        await controller.sync()
        whole = back.cookies == wanted()
        await ended(controller, back)
        return ran, again, back.changes, whole

    ran, again, resent, whole = asyncio.run(scenario())
    assert ran == [True] and again == 0
    assert resent == 1 and whole


def test_two_edges_waiting_for_each_other_both_finish() -> None:
    """Hop-by-hop rules: each edge's new flow waits for the other edge's barrier reply; neither read loop is
    held up by its own flow, so both flows are set up once the barriers are answered."""
    spec = fat_tree(4)

    async def scenario() -> tuple[int, int, list[int]]:
        controller = Controller(ControllerConfig(steering="hop-by-hop", reactive=True))
        controller.fabric = spec.to_fabric()
        switches = {sw.dpid: WireSwitch(sw.dpid, hold_barriers=True) for sw in spec.switches.values()}
        await joined(controller, *switches.values())
        a, b = spec.hosts["h1"], spec.hosts["h16"]
        edge_a, edge_b = switches[spec.dpid(a.switch)], switches[spec.dpid(b.switch)]
        edge_a.packet_in(a.port, udp_frame(b.mac, a.mac, a.ip, b.ip, 4000, 5009))
        edge_b.packet_in(b.port, udp_frame(a.mac, b.mac, b.ip, a.ip, 4001, 5009))
        asked = lambda: sum(event.startswith("barrier after") for s in switches.values() for event in s.events)  # noqa: E731
        await until(lambda: asked() == 8, "both flows' barriers asked")  # four later switches each
        waiting = len(controller.setups)
        for switch in switches.values():
            switch.release.set()
        await until(lambda: len(controller.setups) == 2, "both flows set up")
        await asyncio.sleep(0.05)
        outs = [len(edge.fake.frames) for edge in (edge_a, edge_b)]
        await ended(controller, *switches.values())
        return waiting, len(controller.setups), outs

    assert asyncio.run(scenario()) == (0, 2, [1, 1])  # each first packet sent on by its own edge
