"""``/metrics`` as Prometheus reads it: the text format, the token as a bearer token or X-Auth-Token, and the
figures following what the API and the controller hold (streams, gate changes, gPTP states)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
from prometheus_client.parser import text_string_to_metric_families

from srfabric.api.web.app import create_app
from srfabric.tsn.model.gptp import ClockReading
from srfabric.tsn.runtime.clock_watch import ClockWatch
from tests.unit.api.test_streams_service import TWO_SLOTS, host_ports, make, stream


def scrape(app: object, headers: dict[str, str]) -> httpx.Response:
    async def go() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
        async with httpx.AsyncClient(transport=transport, base_url="http://api") as client:
            return await client.get("/metrics", headers=headers)

    return asyncio.run(go())


def test_metrics_follow_the_streams_the_gates_and_the_clocks(tmp_path: Path) -> None:
    service, _ = make(tmp_path, TWO_SLOTS)
    service.streams.clocks = ClockWatch({"s1": "/run/ptp4l-s1", "s2": "/run/ptp4l-s2"}, 1000,
                                        lambda bridge, _: ClockReading(bridge, 250 if bridge == "s1" else 9000, True,
                                                                       "gm", ("SLAVE",)))
    service.streams.clocks.poll()
    ports = asyncio.run(host_ports(service))
    service.streams.clocks.sockets.pop("s2")  # (s2 off its grandmaster would refuse the stream's path)
    service.controller.core.hosts.refused[(1, 3)] = 4  # as host learning and link discovery count refusals
    service.controller.core.links.refused["replayed"] = 2
    asyncio.run(service.create("streams", stream(ports)))
    app = create_app(service, "tok")
    assert scrape(app, {}).status_code == 401
    answer = scrape(app, {"Authorization": "Bearer tok"})
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/plain")
    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value
               for family in text_string_to_metric_families(answer.text) for s in family.samples}
    assert samples[("srfabric_streams", ())] == 1
    assert samples[("srfabric_gate_schedule_changes_total", ())] == 1
    assert samples[("srfabric_switches_connected", ())] == 0
    assert samples[("srfabric_gptp_synced", (("bridge", "s1"),))] == 1
    assert samples[("srfabric_gptp_offset_nanoseconds", (("bridge", "s2"),))] == 9000
    assert samples[("srfabric_reactive_setup_seconds_count", ())] == 0
    assert samples[("srfabric_sync_seconds_count", ())] == 0  # no switch connected: no sync sent anything
    assert samples[("srfabric_packet_ins_total", ())] == 0
    assert samples[("srfabric_hosts_refused_total", (("port", "3"), ("switch", "s1")))] == 4
    assert samples[("srfabric_lldp_refused_total", (("reason", "replayed"),))] == 2
    assert scrape(app, {"X-Auth-Token": "tok"}).status_code == 200
