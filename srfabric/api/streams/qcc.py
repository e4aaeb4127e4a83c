"""IEEE 802.1Qcc stream requests: a talker and a listener in the form of ``ieee802-dot1q-tsn-types``'s groups
(``group-talker``, ``group-listener``, as JSON with the YANG names), turned into srfabric's stream body, and the
answer in the form of its status group (``group-status-stream`` with ``group-status-talker-listener``). Pure.

A request names its end stations by MAC address (``end-station-interfaces``); srfabric finds the ports of those
hosts. It schedules one frame per interval, time-triggered at priority 7 unless the VLAN tag asks otherwise.

>>> request = {"stream-id": "00-00-00-00-00-01:00-01",
...            "talker": {"end-station-interfaces": [{"mac-address": "00-00-00-00-00-01"}],
...                       "data-frame-specification": [{"index": 0, "ipv4-tuple": {"destination-port": 7000}}],
...                       "traffic-specification": {"interval": {"numerator": 1, "denominator": 1000},
...                                                 "max-frames-per-interval": 1, "max-frame-size": 200},
...                       "user-to-network-requirements": {"num-seamless-trees": 1, "max-latency": 500000}},
...            "listeners": [{"end-station-interfaces": [{"mac-address": "00-00-00-00-00-02"}]}]}
>>> asked = parse(request)
>>> asked.talker_mac, asked.period_ns, asked.size_bytes, asked.max_latency_ns, asked.udp_destination_port
('00:00:00:00:00:01', 1000000, 200, 500000, 7000)
>>> FAILURE_CODES[failure_code("max_latency_ns")]
'MaxLatency exceeded'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from srfabric.api.errors import ApiError, bad_request

STREAM_ID = re.compile(r"^[0-9a-fA-F]{2}(-[0-9a-fA-F]{2}){5}:[0-9a-fA-F]{2}-[0-9a-fA-F]{2}$")
MAC = re.compile(r"^[0-9a-fA-F]{2}([-:][0-9a-fA-F]{2}){5}$")
# IEEE 802.1Q Table 46-15 (the codes MSRP's Table 35-6 began), those srfabric can give.
FAILURE_CODES = {1: "Insufficient bandwidth", 2: "Insufficient Bridge resources",
                 3: "Insufficient bandwidth for Traffic Class", 4: "StreamID in use by another Talker",
                 7: "Latency has changed", 13: "Traffic Class is not an SR class",
                 14: "MaxFrameSize is too large for media", 21: "MaxLatency exceeded"}
# What refused an admission (the planner's field, or the API's error type) -> the code that fits.
REFUSAL_CODES = {"max_latency_ns": 21, "slot": 1, "path": 1, "duty_percent": 3, "StreamGatesRefused": 2,
                 "StreamGatesUnavailable": 2,
                 "StreamUnavailableId": 2, "StreamIdInUse": 4, "size_bytes": 14, "gptp": 2}


@dataclass(frozen=True)
class QccRequest:
    stream_id: str
    talker_mac: str
    listener_mac: str
    period_ns: int
    size_bytes: int
    max_latency_ns: int | None
    priority: int
    udp_source_port: int | None
    udp_destination_port: int | None
    seamless_trees: int


def _object(document: Any, where: str) -> dict[str, Any]:
    if not isinstance(document, dict):
        raise bad_request(f"{where}: must be an object")
    return document


def _integer(container: dict[str, Any], name: str, where: str, low: int, high: int, default: int | None = None
             ) -> int | None:
    value = container.get(name, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise bad_request(f"{where}.{name}: must be an integer in {low}..{high}, got {value!r}")
    return value


def _mac(group: dict[str, Any], where: str) -> str:
    interfaces = group.get("end-station-interfaces")
    if not isinstance(interfaces, list) or len(interfaces) != 1:
        raise bad_request(f"{where}.end-station-interfaces: srfabric takes exactly one interface per end station")
    mac = _object(interfaces[0], f"{where}.end-station-interfaces[0]").get("mac-address")
    if not isinstance(mac, str) or not MAC.match(mac):
        raise bad_request(f"{where}.end-station-interfaces[0].mac-address: must be six hex bytes, got {mac!r}")
    return mac.replace("-", ":").lower()


def _frame_fields(talker: dict[str, Any]) -> tuple[int, int | None, int | None]:
    """(priority, UDP source port, UDP destination port) from the data frame specification."""
    priority, source, destination = 7, None, None
    specification = talker.get("data-frame-specification", [])
    if not isinstance(specification, list):
        raise bad_request("talker.data-frame-specification: must be a list")
    for index, entry in enumerate(specification):
        where = f"talker.data-frame-specification[{index}]"
        entry = _object(entry, where)
        if "ieee802-vlan-tag" in entry:
            tag = _object(entry["ieee802-vlan-tag"], f"{where}.ieee802-vlan-tag")
            priority = _integer(tag, "priority-code-point", f"{where}.ieee802-vlan-tag", 0, 7, 7) or 0
        if "ipv4-tuple" in entry:
            ip = _object(entry["ipv4-tuple"], f"{where}.ipv4-tuple")
            if ip.get("protocol", 17) != 17:
                raise bad_request(f"{where}.ipv4-tuple.protocol: srfabric's streams are UDP (17), got "
                                  f"{ip.get('protocol')!r}")
            source = _integer(ip, "source-port", f"{where}.ipv4-tuple", 1, 65535)
            destination = _integer(ip, "destination-port", f"{where}.ipv4-tuple", 1, 65535)
    return priority, source, destination


def parse(document: Any) -> QccRequest:
    """The request, checked field by field (``ApiError`` 400 naming the field and the limit)."""
    document = _object(document, "stream")
    stream_id = document.get("stream-id")
    if not isinstance(stream_id, str) or not STREAM_ID.match(stream_id):
        raise bad_request(f"stream-id: must be a MAC address and a 16-bit id, as 00-00-00-00-00-01:00-01, got "
                          f"{stream_id!r}")
    talker = _object(document.get("talker"), "talker")
    listeners = document.get("listeners")
    if not isinstance(listeners, list) or len(listeners) != 1:
        raise bad_request("listeners: srfabric's streams have exactly one listener")
    listener = _object(listeners[0], "listeners[0]")
    spec = _object(talker.get("traffic-specification"), "talker.traffic-specification")
    interval = _object(spec.get("interval"), "talker.traffic-specification.interval")
    numerator = _integer(interval, "numerator", "talker.traffic-specification.interval", 1, 2**32 - 1)
    denominator = _integer(interval, "denominator", "talker.traffic-specification.interval", 1, 2**32 - 1)
    if numerator is None or denominator is None:
        raise bad_request("talker.traffic-specification.interval: needs numerator and denominator (seconds)")
    period = Fraction(numerator, denominator) * 10**9
    if period.denominator != 1 or not 1 <= period <= 10**12:
        raise bad_request(f"talker.traffic-specification.interval: must be a whole number of ns in 1..10^12, got "
                          f"{numerator}/{denominator} s")
    frames = _integer(spec, "max-frames-per-interval", "talker.traffic-specification", 1, 65535, 1)
    if frames != 1:
        raise bad_request(f"talker.traffic-specification.max-frames-per-interval: srfabric schedules 1 frame per "
                          f"interval, got {frames}")
    size = _integer(spec, "max-frame-size", "talker.traffic-specification", 1, 65535)
    if size is None:
        raise bad_request("talker.traffic-specification.max-frame-size: required")
    if spec.get("time-aware") not in (None, {}):
        raise bad_request("talker.traffic-specification.time-aware: srfabric picks the transmit offset itself; a "
                          "talker's window is not honoured yet, so leave it out")
    needs = _object(talker.get("user-to-network-requirements", {}), "talker.user-to-network-requirements")
    latency = _integer(needs, "max-latency", "talker.user-to-network-requirements", 1, 2**32 - 1)
    trees = _integer(needs, "num-seamless-trees", "talker.user-to-network-requirements", 1, 255, 1) or 1
    priority, source, destination = _frame_fields(talker)
    return QccRequest(stream_id.upper(), _mac(talker, "talker"), _mac(listener, "listeners[0]"), int(period), size,
                      latency, priority, source, destination, trees)


def failure_code(cause: str) -> int:
    """The Table 46-15 code for what refused a stream (2, Insufficient Bridge resources, when none fits better)."""
    return REFUSAL_CODES.get(cause, 2)


def refused_status(code: int) -> dict[str, Any]:
    """The status group of a request srfabric cannot meet."""
    return {"status-info": {"talker-status": "failed", "listener-status": "failed", "failure-code": code},
            "failure": FAILURE_CODES.get(code, "")}


def refusal(error: ApiError, cause: str) -> ApiError:
    """``error`` with the status group of its Table 46-15 code beside Neutron's error body."""
    error.extra = {"status": refused_status(failure_code(cause))}
    return error


def status(asked: QccRequest, accumulated_latency_ns: int, offset_ns: int | None) -> dict[str, Any]:
    """The status group of an admitted stream: ready both ways, the latency srfabric bounds, and the talker's
    interface configuration (addresses, the VLAN priority and, when scheduled, the transmit offset)."""
    def dashed(mac: str) -> str:
        return mac.replace(":", "-").upper()

    config: list[dict[str, Any]] = [
        {"index": 0, "ieee802-mac-addresses": {"destination-mac-address": dashed(asked.listener_mac),
                                               "source-mac-address": dashed(asked.talker_mac)}},
        {"index": 1, "ieee802-vlan-tag": {"priority-code-point": asked.priority, "vlan-id": 0}}]
    if offset_ns is not None:
        config.append({"index": 2, "time-aware-offset": offset_ns})
    return {"stream-id": asked.stream_id,
            "status-info": {"talker-status": "ready", "listener-status": "ready", "failure-code": 0},
            "failed-interfaces": [],
            "talker": {"accumulated-latency": accumulated_latency_ns, "interface-configuration": {
                "interface-list": [{"mac-address": dashed(asked.talker_mac), "interface-name": "",
                                    "config-list": config}]}},
            "listeners": [{"accumulated-latency": accumulated_latency_ns, "interface-configuration": {
                "interface-list": []}}]}
