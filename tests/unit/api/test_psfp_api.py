"""Per-stream filtering and policing through the API: an admitted time-triggered stream is protected at its
talker's edge, whose document (``ieee802-dot1q-psfp-bridge``) names its filter, gate and meter under the stream's
``stream_id``; an edge's report is shown as the filters' counters and in ``/metrics``; a report that is not one is
refused naming the field and changes nothing; a switch the controller does not know is a 404."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from srfabric.api.web.app import create_app
from srfabric.rules.yang.psfp_read import read_plans
from tests.unit.api.test_frer_counters import call
from tests.unit.api.test_streams_service import host_ports, make, stream

FILTERS = ("ieee802-dot1q-bridge:bridges", "bridge", 0, "component", 0, "ieee802-dot1q-psfp-bridge:stream-filters",
           "stream-filter-instance-table")


@pytest.fixture
def app(tmp_path: Path) -> Any:
    service, _ = make(tmp_path)
    ports = asyncio.run(host_ports(service))
    made = asyncio.run(service.create("streams", stream(ports, name="cam", priority=7, period_ns=1_000_000,
                                                        udp_destination_port=6000)))
    application = create_app(service, "tok")
    application.made = made  # type: ignore[attr-defined]
    application.sfc = service  # type: ignore[attr-defined]
    return application


def report(handle: int, red: int = 7, **changes: Any) -> dict[str, Any]:
    seen = {"handle": handle, "counters": {"matching-frames-count": 20, "not-passing-frames-count": 3,
                                           "red-frames-count": red}}
    return {"report": {"bridge": "s1", "streams": [seen], **changes}}


def filters(document: dict[str, Any]) -> list[dict[str, Any]]:
    node: Any = document
    for step in FILTERS:
        node = node[step]
    return list(node)


def test_an_admitted_stream_is_protected_at_its_talkers_edge(app: Any) -> None:
    handle = app.made["stream_id"]
    assert call(app, "GET", "/v2.0/srfabric/psfp").json() == {
        "edges": [{"bridge": "s1", "streams": [handle], "reported_at": None}]}
    document = call(app, "GET", "/v2.0/srfabric/psfp/s1").json()
    [plan] = read_plans(document, "s1")
    assert (plan.handle, plan.identity.udp_dst, plan.max_sdu_bytes) == (handle, 6000, app.made["size_bytes"])
    assert plan.gate.cycle_ns == 4_000_000 and len(plan.gate.open_windows()) == 4  # its slot, every period
    assert plan.meter.cir_bps == (app.made["size_bytes"] + 22) * 8 * 1000  # one frame per ms


def test_a_report_is_shown_as_the_filters_counters_and_in_metrics(app: Any) -> None:
    handle = app.made["stream_id"]
    answer = call(app, "POST", "/v2.0/srfabric/psfp/reports", report(handle))
    assert (answer.status_code, answer.json()) == (201, {"report": {"bridge": "s1", "streams": 1, "matched": 1}})
    [shown] = filters(call(app, "GET", "/v2.0/srfabric/psfp/s1").json())
    assert (shown["matching-frames-count"], shown["red-frames-count"], shown["passing-frames-count"]) == (20, 7, 0)
    scraped = call(app, "GET", "/metrics").text
    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value
               for family in text_string_to_metric_families(scraped) for s in family.samples}
    assert samples[("srfabric_psfp_red_frames_total", (("bridge", "s1"), ("stream", app.made["id"])))] == 7


@pytest.mark.parametrize(("change", "field"), [
    ({"bridge": ""}, "bridge"),
    ({"bridge": "s1; rm -rf"}, "bridge"),
    ({"streams": [{"handle": -1, "counters": {}}]}, "handle"),
    ({"streams": [{"handle": 1, "counters": {"red-frames-count": 2**64}}]}, "red-frames-count"),
    ({"streams": [{"handle": 1, "counters": {"made-up-count": 1}}]}, "made-up-count"),
    ({"streams": [{"handle": 1, "counters": {}}] * 4097}, "streams"),
])
def test_a_report_that_is_not_one_is_refused_naming_the_field_and_changes_nothing(app: Any, change: dict[str, Any],
                                                                                  field: str) -> None:
    before = call(app, "GET", "/v2.0/srfabric/psfp/s1").json()
    body = report(app.made["stream_id"])
    body["report"].update(change)
    answer = call(app, "POST", "/v2.0/srfabric/psfp/reports", body)
    assert answer.status_code == 400 and field in answer.json()["NeutronError"]["message"]
    assert call(app, "GET", "/v2.0/srfabric/psfp/s1").json() == before


def test_a_switch_the_controller_does_not_know_is_not_found(app: Any) -> None:
    answer = call(app, "GET", "/v2.0/srfabric/psfp/s99")
    assert answer.status_code == 404 and "s99" in answer.json()["NeutronError"]["message"]
    assert filters(call(app, "GET", "/v2.0/srfabric/psfp/s2").json()) == []  # a switch with no talker: nothing


def test_a_follower_sends_an_edge_to_the_leader_rather_than_take_its_protections_off(app: Any) -> None:
    app.sfc.leader_elsewhere = lambda: "http://10.0.0.1:9696"
    for method, path, body in (("GET", "/v2.0/srfabric/psfp/s1", None),
                               ("POST", "/v2.0/srfabric/psfp/reports", report(app.made["stream_id"]))):
        answer = call(app, method, path, body)
        assert answer.status_code == 307 and answer.json()["NeutronError"]["detail"] == "http://10.0.0.1:9696"
    app.sfc.leader_elsewhere = lambda: ""  # an election under way
    assert call(app, "GET", "/v2.0/srfabric/psfp/s1").status_code == 503
    assert app.sfc.streams.psfp.reports == {}


@pytest.mark.parametrize("tolerance", ["-1", "1000001"])
def test_a_tolerance_out_of_range_is_refused_before_anything_listens(tolerance: str) -> None:
    from srfabric.api.serve_options import check_args
    from srfabric.errors import SrfabricError
    from tests.unit.api.test_keystone_tokens import parse

    with pytest.raises(SrfabricError, match=r"--psfp-tolerance-ns: must be in 0\.\.1000000"):
        check_args(parse("--openflow-insecure", "--no-auth", "--psfp-tolerance-ns", tolerance))


def test_a_tolerance_widens_every_protected_streams_gate(app: Any) -> None:
    [narrow] = read_plans(call(app, "GET", "/v2.0/srfabric/psfp/s1").json(), "s1")
    app.sfc.streams.psfp.tolerance_ns = 2_000
    [wide] = read_plans(call(app, "GET", "/v2.0/srfabric/psfp/s1").json(), "s1")
    def open_ns(plan: Any) -> int:
        return sum(end - start for start, end in plan.gate.open_windows())

    assert open_ns(wide) == open_ns(narrow) + 4 * 4_000  # 2 µs each side of each of its four slots (one may wrap)


def test_a_gate_the_edge_cannot_hold_is_a_409_naming_the_stream_and_the_leaf(app: Any,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from dataclasses import replace

    from srfabric.api.streams import psfp_book

    monkeypatch.setattr(psfp_book, "EDGE_CAPABILITIES", replace(psfp_book.EDGE_CAPABILITIES, list_max=2))
    answer = call(app, "GET", "/v2.0/srfabric/psfp/s1")
    assert answer.status_code == 409 and "supported-list-max" in answer.json()["NeutronError"]["message"]
    assert f"stream {app.made['id']}" in answer.json()["NeutronError"]["message"]
