"""Streams asked for in IEEE 802.1Qcc's talker/listener form: admitted with the status group in the answer, and
refused with the Table 46-15 code that fits (MaxLatency exceeded, insufficient bandwidth, StreamID in use, a frame
too large), each refusal changing nothing."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from srfabric.api.errors import ApiError
from srfabric.api.streams import qcc_streams
from srfabric.codecs.macaddr import mac_to_str
from srfabric.model.topo import tsn_fig1
from tests.unit.api.test_streams_service import TWO_SLOTS, host_ports, make


def mac(name: str) -> str:
    return mac_to_str(tsn_fig1().to_fabric().hosts[name].mac).replace(":", "-")


def request(number: int, port: int, latency_ns: int | None = None, size: int = 100, trees: int = 1,
            talker: str = "h1", listener: str = "h3", interval: tuple[int, int] = (1, 1000)) -> dict[str, Any]:
    needs: dict[str, Any] = {"num-seamless-trees": trees}
    if latency_ns is not None:
        needs["max-latency"] = latency_ns
    return {"stream-id": f"{mac(talker)}:00-{number:02x}",
            "talker": {"stream-rank": {"rank": 1}, "end-station-interfaces": [{"mac-address": mac(talker)}],
                       "data-frame-specification": [{"index": 0, "ipv4-tuple": {"protocol": 17,
                                                                                "destination-port": port}}],
                       "traffic-specification": {"interval": {"numerator": interval[0],
                                                                              "denominator": interval[1]},
                                                 "max-frames-per-interval": 1, "max-frame-size": size},
                       "user-to-network-requirements": needs},
            "listeners": [{"end-station-interfaces": [{"mac-address": mac(listener)}]}]}


def refused(service: Any, document: dict[str, Any]) -> ApiError:
    before = dict(service.snapshot["streams"])
    with pytest.raises(ApiError) as caught:
        asyncio.run(qcc_streams.create(service, document))
    assert dict(service.snapshot["streams"]) == before
    return caught.value


def test_a_qcc_request_is_admitted_and_answered_with_the_status_group(tmp_path: Path) -> None:
    service, _ = make(tmp_path)
    asyncio.run(host_ports(service))
    answer = asyncio.run(qcc_streams.create(service, request(1, 5001, latency_ns=900_000)))
    status = answer["status"]
    assert status["status-info"] == {"talker-status": "ready", "listener-status": "ready", "failure-code": 0}
    assert 0 < status["talker"]["accumulated-latency"] <= 900_000
    config = status["talker"]["interface-configuration"]["interface-list"][0]["config-list"]
    assert config[0]["ieee802-mac-addresses"]["destination-mac-address"] == mac("h3").upper()
    assert config[-1]["time-aware-offset"] >= 0
    record = answer["stream"]
    assert (record["name"], record["period_ns"], record["udp_destination_port"]) == (status["stream-id"], 10**6,
                                                                                    5001)
    again = refused(service, request(1, 5002))
    assert (again.status, again.body()["status"]["status-info"]["failure-code"]) == (409, 4)


def test_two_seamless_trees_are_two_paths_in_one_slot_with_the_slower_trees_latency(tmp_path: Path) -> None:
    service, gates = make(tmp_path)
    asyncio.run(host_ports(service))
    one = asyncio.run(qcc_streams.create(service, request(1, 5001)))
    two = asyncio.run(qcc_streams.create(service, request(2, 5002, trees=2, talker="h2")))
    assert two["stream"]["second_path"] and two["stream"]["slot"] is not None
    assert two["status"]["status-info"]["failure-code"] == 0
    latency = [answer["status"]["talker"]["accumulated-latency"] for answer in (one, two)]
    assert latency[1] > latency[0]  # one link more, and a frame behind the other copy
    assert {"s1-eth4", "s3-eth2", "s4-eth2"} <= set(gates.ports)


def test_what_srfabric_cannot_meet_is_refused_with_the_code_that_fits(tmp_path: Path) -> None:
    service, _ = make(tmp_path, TWO_SLOTS)
    asyncio.run(host_ports(service))
    every_60_us = (3, 50_000)  # seconds: the cycle's base period
    code = {}
    code["latency"] = refused(service, request(2, 5001, 1_000, interval=every_60_us)).body()["status"]
    code["size"] = refused(service, request(3, 5001, size=9_001, interval=every_60_us)).body()["status"]
    code["trees"] = refused(service, request(4, 5001, trees=3, interval=every_60_us)).body()["status"]
    for number in (5, 6):  # h1's link holds two slots per base period
        asyncio.run(qcc_streams.create(service, request(number, 5000 + number, interval=every_60_us)))
    code["full"] = refused(service, request(7, 5007, interval=every_60_us)).body()["status"]
    assert {name: s["status-info"]["failure-code"] for name, s in code.items()} == \
        {"latency": 21, "size": 14, "trees": 2, "full": 1}
    assert code["latency"]["failure"] == "MaxLatency exceeded"


@pytest.mark.parametrize(("change", "field"), [
    (lambda r: r.update({"stream-id": "h1:1"}), "stream-id"),
    (lambda r: r["talker"]["traffic-specification"].update({"max-frames-per-interval": 3}),
     "max-frames-per-interval"),
    (lambda r: r["talker"]["traffic-specification"]["interval"].update({"denominator": 3}), "interval"),
    (lambda r: r.update({"listeners": []}), "listeners"),
    (lambda r: r["listeners"][0]["end-station-interfaces"][0].update({"mac-address": "02-00-00-00-00-99"}),
     "listeners[0].end-station-interfaces[0].mac-address"),
    (lambda r: r["talker"]["data-frame-specification"][0]["ipv4-tuple"].update({"protocol": 6}), "protocol"),
])
def test_a_bad_request_names_its_field(tmp_path: Path, change: Any, field: str) -> None:
    service, _ = make(tmp_path)
    asyncio.run(host_ports(service))
    document = request(8, 5008)
    change(document)
    error = refused(service, document)
    assert error.status == 400 and field in error.message, error.message
