"""A bridge's scheduler capabilities (802.1Qcw ``supported-list-max`` and the rest) are honoured before anything
is sent: a stream whose gates a bridge on its path cannot run is refused (409) naming the bridge, the port and the
limit, and nothing changes; a duty cycle a bridge cannot run is refused the same way."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from srfabric.api.errors import ApiError
from srfabric.tsn.gates.capabilities import PortCapabilities
from tests.unit.api.test_streams_service import host_ports, make, state, stream

TWO_ENTRIES = PortCapabilities(list_max=2, cycle_max=(1, 100), interval_max_ns=10_000_000)


def test_a_stream_over_a_bridges_list_max_is_refused_naming_it_and_changes_nothing(tmp_path: Path) -> None:
    service, gates = make(tmp_path)
    service.streams.planning.capabilities = {"s2": TWO_ENTRIES}

    async def scenario() -> ApiError:
        await service.start()
        ports = await host_ports(service)
        before = state(service, gates)
        with pytest.raises(ApiError) as refused:
            await service.create("streams", stream(ports, period_ns=1_000_000))  # 3 entries a period, 4 periods
        assert state(service, gates) == before and not service.streams.planner().streams
        return refused.value

    refused = asyncio.run(scenario())
    assert refused.status == 409 and refused.kind == "StreamNotAdmitted"
    assert refused.message == ("bridge s2 port s2-eth2: supported-list-max: 12 gate control entries, over the 2 the "
                               "port supports")


def test_the_same_stream_is_admitted_where_the_bridges_can_run_it(tmp_path: Path) -> None:
    service, gates = make(tmp_path)
    service.streams.planning.capabilities = {name: PortCapabilities(16, (1, 100), 10_000_000)
                                             for name in ("s1", "s2", "s5")}

    async def scenario() -> None:
        await service.start()
        await service.create("streams", stream(await host_ports(service), period_ns=1_000_000))

    asyncio.run(scenario())
    assert sorted(gates.ports) == ["s1-eth3", "s2-eth2", "s5-eth4"]


def test_a_duty_cycle_a_bridge_cannot_run_is_refused(tmp_path: Path) -> None:
    service, gates = make(tmp_path)
    short = PortCapabilities(list_max=64, cycle_max=(1, 100), interval_max_ns=400_000)

    async def scenario() -> ApiError:
        await service.start()
        await service.create("streams", stream(await host_ports(service), period_ns=1_000_000))
        before = dict(gates.ports)
        service.streams.planning.capabilities = {"s1": short}
        with pytest.raises(ApiError) as refused:
            await service.reschedule(50)  # 500 us open for the time-triggered class: one interval over 400 us
        assert gates.ports == before and service.streams.planner().duty_percent is None
        return refused.value

    refused = asyncio.run(scenario())
    assert refused.status == 409 and refused.message.startswith("bridge s1 port s1-eth3: supported-interval-max")
