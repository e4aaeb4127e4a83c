"""No stream is scheduled through a bridge whose gPTP clock is off its grandmaster by more than the bound: the
admission is refused naming the bridge and nothing changes; once the bridge is back within the bound, the same
request is admitted. The readings are passed in (``ClockWatch``'s reader), as pmc would give them."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from srfabric.api.errors import ApiError
from srfabric.tsn.model.gptp import ClockReading
from srfabric.tsn.runtime.clock_watch import ClockWatch
from tests.unit.api.test_streams_service import TWO_SLOTS, host_ports, make, state, stream


def test_a_stream_through_an_unsynchronised_bridge_waits_until_it_is_back(tmp_path: Path) -> None:
    service, gates = make(tmp_path, TWO_SLOTS)
    ports = asyncio.run(host_ports(service))
    offsets = {name: 100 for name in ("s1", "s2", "s3", "s4", "s5", "s6")}
    service.streams.clocks = ClockWatch({name: f"/run/ptp4l-{name}" for name in offsets}, 1000,
                                        lambda bridge, _: ClockReading(bridge, offsets[bridge], True, "gm",
                                                                       ("SLAVE",)))
    service.streams.clocks.poll()
    first = asyncio.run(service.create("streams", stream(ports, udp_destination_port=5001)))
    crossed = first["path"]
    offsets[crossed[0]] = 4_000  # the talker's edge bridge drifts
    service.streams.clocks.poll()
    before = state(service, gates)
    with pytest.raises(ApiError, match=f"gptp: bridge {crossed[0]} is not synchronised \\(offset 4000 ns") as refused:
        asyncio.run(service.create("streams", stream(ports, udp_destination_port=5002)))
    assert refused.value.status == 409 and state(service, gates) == before
    with pytest.raises(ApiError, match=f"bridge {crossed[0]}"):
        asyncio.run(service.reschedule(50))
    offsets[crossed[0]] = -300
    assert service.streams.clocks.poll() == [crossed[0]]
    second = asyncio.run(service.create("streams", stream(ports, udp_destination_port=5002)))
    assert second["slot"] is not None
    assert service.fabric_view()["clocks"][crossed[0]]["synced"]
