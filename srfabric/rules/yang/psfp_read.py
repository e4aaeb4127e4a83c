"""A bridge's per-stream filtering and policing read back from RFC 7951 JSON (as
:func:`~srfabric.rules.yang.psfp_document.psfp_document` writes it, or a controller serves it): one plan per stream
filter, joined with its stream identity, gate and meter by handle, and the interface its frames come in by. What an
edge needs to enforce them; each plan's ``stream`` is its handle and its ``talker`` that interface. Every
malformed or missing node is named with its limit; nothing is guessed.

Examples
--------
>>> from srfabric.rules.yang.psfp_document import ROOMY, psfp_document
>>> from srfabric.tsn.protect.psfp import FlowMeter, GateInterval, Identity, StreamGate, StreamProtection
>>> gate = StreamGate(1_000_000, 2_000_000_123, (GateInterval(True, 30_000), GateInterval(False, 970_000)))
>>> plan = StreamProtection(9, "cam", "s1", "h1", Identity("10.0.0.1", "10.0.0.3", udp_dst=5001), 7, 200, gate,
...                         FlowMeter(1_776_000, 444))
>>> document = psfp_document("s1", "00-00-00-00-00-01", [plan], {"h1": "s1-eth1"}, ROOMY)
>>> [back] = read_plans(document, "s1")
>>> back.talker, back.gate == plan.gate, back.meter == plan.meter, back.identity == plan.identity
('s1-eth1', True, True, True)
"""

from __future__ import annotations

import ipaddress
from typing import Any

from srfabric.errors import ModelError
from srfabric.rules.yang.psfp_document import PRIORITY_NAMES, PSFP, SID
from srfabric.tsn.protect.psfp import FlowMeter, GateInterval, Identity, StreamGate, StreamProtection

U32, U64 = 2**32 - 1, 2**64 - 1
MAX_STREAMS = 4096  # the most an edge holds (the XDP edge's map)


def read_plans(document: Any, bridge: str) -> list[StreamProtection]:
    """The plans of ``bridge``'s first component in ``document``; ``ModelError`` naming the node."""
    component = _component(document, bridge)
    identities = {_int(item, "handle", U32, "stream-identity"): item
                  for item in _list(document, f"{SID}:stream-identity", "stream-identity")}
    gates = {_int(item, "stream-gate-instance-id", U32, "stream-gate"): item
             for item in _list(_dict(component, f"{PSFP}:stream-gates"), "stream-gate-instance-table", "stream-gates")}
    meters = {_int(item, "flow-meter-instance-id", U32, "flow-meter"): item
              for item in _list(_dict(component, f"{PSFP}:flow-meters"), "flow-meter-instance-table", "flow-meters")}
    filters = _list(_dict(component, f"{PSFP}:stream-filters"), "stream-filter-instance-table", "stream-filters")
    if len(filters) > MAX_STREAMS:
        raise ModelError("stream-filter-instance-table",
                         f"{len(filters)} filters, over the {MAX_STREAMS} an edge holds")
    plans = []
    for item in filters:
        handle = _int(item, "stream-handle", U32, "stream-filter")
        where = f"stream-filter {handle}"
        gate_ref, meter_ref = _int(item, "stream-gate-ref", U32, where), _int(item, "flow-meter-ref", U32, where)
        for table, ref in ((identities, handle), (gates, gate_ref), (meters, meter_ref)):
            if ref not in table:
                raise ModelError(where, f"refers to {ref}, which the document does not hold")
        identity, port = _identity(identities[handle], f"stream-identity {handle}")
        priority = item.get("priority-spec")
        if priority != "wildcard" and priority not in PRIORITY_NAMES:
            raise ModelError(f"{where}.priority-spec", f"{priority!r} is not a priority or wildcard")
        level = None if priority == "wildcard" else PRIORITY_NAMES.index(priority)
        plans.append(StreamProtection(
            handle, str(handle), bridge, port, identity, level,
            _int(item, "max-sdu-size", U32, where), _gate(gates[gate_ref], f"stream-gate {gate_ref}"),
            _meter(meters[meter_ref], f"flow-meter {meter_ref}")))
    return plans


def _component(document: Any, bridge: str) -> dict[str, Any]:
    bridges = _list(_dict(document, "ieee802-dot1q-bridge:bridges"), "bridge", "bridges")
    for item in bridges:
        if isinstance(item, dict) and item.get("name") == bridge:
            components = _list(item, "component", f"bridge {bridge}")
            if not components or not isinstance(components[0], dict):
                raise ModelError(f"bridge {bridge}", "has no component")
            return components[0]
    raise ModelError("bridges", f"no bridge named {bridge!r}")


def _identity(item: dict[str, Any], where: str) -> tuple[Identity, str]:
    match = _dict(item, "ip-stream-identification", where)
    ports = _dict(item, "in-facing", where).get("input-port")
    if not isinstance(ports, list) or len(ports) != 1 or not isinstance(ports[0], str):
        raise ModelError(f"{where}.in-facing.input-port", "must name one interface")
    if match.get("next-protocol", "udp") != "udp":
        raise ModelError(f"{where}.next-protocol", "only UDP streams are identified")
    ends = []
    for name in ("ip-source", "ip-destination"):
        try:
            ends.append(str(ipaddress.IPv4Address(match.get(name))))
        except ValueError:
            raise ModelError(f"{where}.{name}", f"{match.get(name)!r} is not an IPv4 address") from None
    udp = [None if match.get(name) is None else _int(match, name, 65535, where)
           for name in ("source-port", "destination-port")]
    mac = match.get("destination-mac")
    return Identity(ends[0], ends[1], udp[0], udp[1], None if mac is None else str(mac)), ports[0]


def _gate(item: dict[str, Any], where: str) -> StreamGate:
    entries = _list(_dict(item, "admin-control-list", where), "gate-control-entry", f"{where}.admin-control-list")
    intervals = []
    for entry in sorted(entries, key=lambda e: _int(e, "index", U32, where)):
        state = entry.get("gate-state-value")
        if state not in ("open", "closed"):
            raise ModelError(f"{where}.gate-state-value", f"{state!r} is not open or closed")
        intervals.append(GateInterval(state == "open", _int(entry, "time-interval-value", U32, where)))
    cycle = _dict(item, "admin-cycle-time", where)
    numerator, denominator = _int(cycle, "numerator", U32, where), _int(cycle, "denominator", U32, where)
    if denominator == 0 or numerator * 1_000_000_000 % denominator:
        raise ModelError(f"{where}.admin-cycle-time", f"{numerator}/{denominator} s is not a whole number of ns")
    cycle_ns = numerator * 1_000_000_000 // denominator
    if not intervals or sum(i.duration_ns for i in intervals) != cycle_ns:
        raise ModelError(f"{where}.admin-control-list", f"its intervals do not add up to the {cycle_ns} ns cycle")
    base = _dict(item, "admin-base-time", where)
    base_ns = _int(base, "seconds", U64, where) * 1_000_000_000 + _int(base, "nanoseconds", 999_999_999, where)
    return StreamGate(cycle_ns, base_ns, tuple(intervals))


def _meter(item: dict[str, Any], where: str) -> FlowMeter:
    return FlowMeter(_int(item, "committed-information-rate", U64, where),
                     _int(item, "committed-burst-size", U32, where))


def _int(item: Any, name: str, limit: int, where: str) -> int:
    """A whole number in 0..limit (RFC 7951 writes 64-bit ones as strings)."""
    value = item.get(name) if isinstance(item, dict) else None
    try:
        number = int(value) if isinstance(value, (int, str)) and not isinstance(value, bool) else None
    except ValueError:
        number = None
    if number is None or not 0 <= number <= limit:
        raise ModelError(f"{where}.{name}", f"must be a whole number in 0..{limit}, got {value!r}")
    return number


def _dict(item: Any, name: str, where: str = "") -> dict[str, Any]:
    value = item.get(name) if isinstance(item, dict) else None
    if not isinstance(value, dict):
        raise ModelError(f"{where}.{name}" if where else name, "is missing or not an object")
    return value


def _list(item: Any, name: str, where: str) -> list[Any]:
    value = item.get(name, []) if isinstance(item, dict) else None
    if not isinstance(value, list):
        raise ModelError(f"{where}.{name}", "must be a list")
    return value
