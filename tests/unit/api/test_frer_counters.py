"""End-system eliminators' counters through the API: a report is kept as its interface's newest and shown in
``ieee802-dot1cb-frer``'s terms (the stream's handle, its counters, the sequence recovery's settings) and in
``/metrics``; a report that is not one is refused naming the field and the limit, and changes nothing."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from srfabric.api.web.app import create_app
from tests.unit.api.test_streams_service import host_ports, make, stream

HEADERS = {"X-Auth-Token": "tok"}


def call(app: object, method: str, path: str, body: Any = None) -> httpx.Response:
    async def go() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
        async with httpx.AsyncClient(transport=transport, base_url="http://api") as client:
            return await client.request(method, path, json=body, headers=HEADERS)

    return asyncio.run(go())


def report(passed: int = 3000, **changes: Any) -> dict[str, Any]:
    seen = {"source": "10.0.0.1", "source_port": 6001, "destination": "10.0.0.3", "destination_port": 6000,
            "counters": {"rx-passed-pkts": passed, "rx-discarded-pkts": 1500, "rx-rogue-pkts": 1}}
    return {"report": {"interface": "h3-eth0", "history_length": 32, "reset_ms": 2000, "streams": [seen], **changes}}


@pytest.fixture
def app(tmp_path: Path) -> Any:
    service, _ = make(tmp_path)
    ports = asyncio.run(host_ports(service))
    made = asyncio.run(service.create("streams", stream(ports, name="cam", priority=5, num_seamless_trees=2,
                                                        udp_source_port=6001, udp_destination_port=6000)))
    application = create_app(service, "tok")
    application.made = made  # type: ignore[attr-defined]
    return application


def test_a_report_is_shown_in_the_yang_modules_terms_and_in_metrics(app: Any) -> None:
    answer = call(app, "POST", "/v2.0/srfabric/frer/reports", report())
    assert (answer.status_code, answer.json()) == (201, {"report": {"interface": "h3-eth0", "streams": 1,
                                                                    "matched": 1}})
    call(app, "POST", "/v2.0/srfabric/frer/reports", report(passed=3500))  # the newest report counts
    document = call(app, "GET", "/v2.0/srfabric/frer").json()
    interface = document["ietf-interfaces:interfaces"]["interface"][0]
    counters = interface["statistics"]["ieee802-dot1cb-frer:frer"]["per-port-per-stream-counters"][0]
    handle = app.made["stream_id"]
    assert (interface["name"], counters["handle"], counters["direction-out-facing"]) == ("h3-eth0", handle, False)
    assert (counters["rx-passed-pkts"], counters["rx-discarded-pkts"], counters["rx-lost-pkts"]) == (3500, 1500, 0)
    recovery = document["ieee802-dot1cb-frer:frer"]["sequence-recovery"][0]
    assert (recovery["stream"], recovery["port"], recovery["history-length"], recovery["reset-timeout"]) == (
        [handle], ["h3-eth0"], 32, 2000)
    assert document["srfabric"]["handles"][str(handle)]["name"] == "cam"
    scraped = call(app, "GET", "/metrics").text
    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value
               for family in text_string_to_metric_families(scraped) for s in family.samples}
    labels = (("interface", "h3-eth0"), ("stream", app.made["id"]))
    assert samples[("srfabric_frer_rx_passed_pkts_total", labels)] == 3500
    assert samples[("srfabric_frer_rx_rogue_pkts_total", labels)] == 1


def test_a_stream_no_admitted_stream_matches_is_listed_apart(app: Any) -> None:
    stranger = report()
    stranger["report"]["streams"][0]["destination_port"] = 7000
    assert call(app, "POST", "/v2.0/srfabric/frer/reports", stranger).json()["report"]["matched"] == 0
    document = call(app, "GET", "/v2.0/srfabric/frer").json()
    assert document["srfabric"]["unmatched"] == [{"interface": "h3-eth0", "source": "10.0.0.1:6001",
                                                  "destination": "10.0.0.3:7000"}]
    assert document["ieee802-dot1cb-frer:frer"]["sequence-recovery"] == []


@pytest.mark.parametrize(("change", "field"), [
    ({"interface": "a-name-longer-than-15"}, "interface"),
    ({"history_length": 65}, "history_length"),
    ({"reset_ms": 0}, "reset_ms"),
    ({"streams": [{"source": "10.0.0.1", "source_port": 1, "destination": "10.0.0.300", "destination_port": 2,
                   "counters": {}}]}, "destination"),
    ({"streams": [{"source": "10.0.0.1", "source_port": 70000, "destination": "10.0.0.3", "destination_port": 2,
                   "counters": {}}]}, "source_port"),
    ({"streams": [{"source": "10.0.0.1", "source_port": 1, "destination": "10.0.0.3", "destination_port": 2,
                   "counters": {"rx-passed-pkts": -1}}]}, "rx-passed-pkts"),
    ({"streams": [{"source": "10.0.0.1", "source_port": 1, "destination": "10.0.0.3", "destination_port": 2,
                   "counters": {"frer-made-up": 1}}]}, "frer-made-up"),
    ({"streams": [report()["report"]["streams"][0]] * 4097}, "streams"),
])
def test_a_report_that_is_not_one_is_refused_naming_the_field_and_changes_nothing(app: Any, change: dict[str, Any],
                                                                                  field: str) -> None:
    before = call(app, "GET", "/v2.0/srfabric/frer").json()
    body = report()
    body["report"].update(change)
    answer = call(app, "POST", "/v2.0/srfabric/frer/reports", body)
    assert answer.status_code == 400 and field in answer.json()["NeutronError"]["message"]
    assert call(app, "GET", "/v2.0/srfabric/frer").json() == before


def test_reports_of_one_interface_name_on_two_hosts_are_kept_apart_and_summed_per_stream(app: Any) -> None:
    for reporter, passed in (("host-a", 10), ("host-b", 20)):
        body = report(passed=passed)
        body["report"]["reporter"] = reporter
        twice = dict(body["report"]["streams"][0], source_port=6001)
        body["report"]["streams"].append(twice)  # the eliminator holds two entries the stream matches
        assert call(app, "POST", "/v2.0/srfabric/frer/reports", body).status_code == 201
    interfaces = call(app, "GET", "/v2.0/srfabric/frer").json()["ietf-interfaces:interfaces"]["interface"]
    passed = {i["name"]: i["statistics"]["ieee802-dot1cb-frer:frer"]["per-port-per-stream-counters"][0]
              ["rx-passed-pkts"] for i in interfaces}
    assert passed == {"host-a/h3-eth0": 20, "host-b/h3-eth0": 40}
