"""The streams' shell carries out a decision's effects in order, and leaves nothing of a refused one: entries,
then gates at one base time after the switches confirmed; a gates adapter's refusal undoes the decision and puts
the previous streams and lists back."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from srfabric.controller.controller import Controller
from srfabric.controller.stream_install import GatesRefused, StreamInstaller
from srfabric.controller.stream_planning import StreamEffects, StreamPlanning
from srfabric.errors import ModelError
from srfabric.model.stream import SteeredStream
from srfabric.southbound.gates import RecordingGates
from srfabric.tsn.gates.gcl import PortGcl
from srfabric.tsn.model.network import Stream
from srfabric.tsn.runtime.live import CycleConfig
from tests.unit.api.test_streams_service import fig1_controller


class RefusingGates(RecordingGates):
    """Applies until told to refuse a port, as taprio refuses a schedule it cannot run."""

    def __init__(self) -> None:
        super().__init__()
        self.refuse: str | None = None

    def apply(self, gcls: Sequence[PortGcl]) -> None:
        if self.refuse and any(gcl.interface == self.refuse for gcl in gcls):
            raise ModelError(f"port {self.refuse}", "taprio refused the schedule")
        super().apply(gcls)


def admit(planning: StreamPlanning, controller: Controller, name: str, udp: int) -> StreamEffects:
    planner = planning.planner(controller.fabric, lambda: [], None)
    placed = planner.admit(Stream(name, "h1", "h3", period_ns=1_000_000, size_bytes=200))
    steered = {name: SteeredStream(name, udp - 6999, "h1", "h3", placed.path[1:-1], udp, 0, True)}
    return StreamEffects({**controller.streams, **steered},
                         planning.named_gcls(planner, controller.fabric, controller.port_name, 0),
                         [name], lambda: planner.remove(name))


def test_gates_go_out_after_the_entries_at_one_base_time_and_a_refusal_leaves_nothing() -> None:
    controller = fig1_controller(with_hosts=True)
    gates = RefusingGates()
    installer = StreamInstaller(controller, gates, clock=lambda: 5_000_000_000, lead_ns=200_000_000)
    planning = StreamPlanning(CycleConfig())

    async def scenario() -> None:
        first = await installer.install(admit(planning, controller, "cam", 7000), lambda: None)
        assert first.base_time_ns == 5_200_000_000 and set(controller.streams) == {"cam"}
        assert {gcl.base_time_ns for gcl in gates.ports.values()} == {5_200_000_000}
        before = (dict(controller.streams), dict(gates.ports))
        gates.refuse = "s1-eth3"
        second = admit(planning, controller, "mic", 7001)
        with pytest.raises(GatesRefused, match="port s1-eth3: taprio refused"):
            await installer.install(second, lambda: None)
        assert (dict(controller.streams), dict(gates.ports)) == before  # entries and gates as they were
        assert set(planning.planner(controller.fabric, lambda: [], None).streams) == {"cam"}  # decision undone

    asyncio.run(scenario())
