"""A sync sends everything, then runs the caller's work, then awaits the barriers: no root, no switch."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence
from typing import Any

import pytest

from srfabric.controller.controller import Controller
from srfabric.model.fabric import Switch
from srfabric.southbound.ofbind import wire_cookie


class ScriptedSwitch:
    """Stands in for a switch connection: records what is sent; a barrier is answered when the test says."""

    def __init__(self) -> None:
        self.sent: list[Any] = []
        self.events: list[str] = []
        self.answer = asyncio.Event()

    def send(self, msg: Any) -> int:
        self.sent.append(msg)
        return len(self.sent)

    def start_barrier(self, timeout: float = 10.0, before: Sequence[Any] = ()) -> Awaitable[None]:
        self.sent.extend(before)
        self.events.append(f"barrier after {len(self.sent)} messages")

        async def reply() -> None:
            await self.answer.wait()
            self.events.append("barrier answered")

        return reply()


def controller_with(switch: ScriptedSwitch) -> Controller:
    controller = Controller()
    controller.fabric.add_switch(Switch(1, "s1"))
    controller.switches[1] = switch  # type: ignore[assignment]
    return controller


def synced_once() -> tuple[ScriptedSwitch, Controller]:
    """A controller after one sync with a switch that answers at once; what that sync sent is forgotten."""
    switch = ScriptedSwitch()
    controller = controller_with(switch)
    switch.answer.set()
    asyncio.run(controller.sync())
    switch.sent.clear()
    return switch, controller


def test_the_work_runs_between_sending_and_the_barrier_reply() -> None:
    switch = ScriptedSwitch()
    controller = controller_with(switch)

    def meanwhile() -> None:
        switch.events.append("meanwhile")
        switch.answer.set()

    asyncio.run(controller.sync(meanwhile))
    sent = len(switch.sent)
    assert sent > 0
    assert switch.events == [f"barrier after {sent} messages", "meanwhile", "barrier answered"]
    expected = {entry.key: wire_cookie(entry) for entry in controller.cache.state(controller.fabric, []).entries[1]}
    assert controller.installed[1] == expected


def test_a_failing_work_is_raised_once_the_switch_answered() -> None:
    switch = ScriptedSwitch()
    controller = controller_with(switch)

    def meanwhile() -> None:
        asyncio.get_running_loop().call_later(0.01, switch.answer.set)
        raise RuntimeError("database is away")

    with pytest.raises(RuntimeError, match="database is away"):
        asyncio.run(controller.sync(meanwhile))
    assert switch.events[-1] == "barrier answered"
    assert controller.installed[1]  # what the switch confirmed is known, so the next sync sends only a difference


def test_the_work_runs_when_nothing_needs_sending() -> None:
    switch, controller = synced_once()
    ran: list[bool] = []
    asyncio.run(controller.sync(lambda: ran.append(True)))
    assert ran == [True] and switch.sent == []


def test_a_switch_whose_table_was_read_again_is_compared_again() -> None:
    # A sync that wants what the last confirmed push left skips the switch; a table read back from the switch
    # (a new dict, as after a reconnect) is compared entry by entry, and what it lacks is sent.
    switch, controller = synced_once()
    asyncio.run(controller.sync())
    assert switch.sent == []
    read_back = dict(controller.installed[1])
    lost = next(iter(read_back))
    del read_back[lost]
    controller.installed[1] = read_back
    asyncio.run(controller.sync())
    assert len(switch.sent) == 1 and controller.installed[1].keys() == {lost, *read_back}
