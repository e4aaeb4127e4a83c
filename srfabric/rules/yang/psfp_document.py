"""A bridge's per-stream filtering and policing as RFC 7951 JSON: its streams' identities
(``ieee802-dot1cb-stream-identification``) and, on its bridge component, their filters, gates and meters
(``ieee802-dot1q-psfp-bridge``, which carries the stream filters and gates of
``ieee802-dot1q-stream-filters-gates`` with PSFP's gate lists and flow meters), each under the stream's handle.
The stream gates' capability leaves go beside the lists: the published ``must`` statements compare each list
with them.

Examples
--------
>>> from srfabric.tsn.protect.psfp import FlowMeter, GateInterval, Identity, StreamGate, StreamProtection
>>> gate = StreamGate(1_000_000, 1_700_000_000_000_000_000, (GateInterval(True, 30_000), GateInterval(False, 970_000)))
>>> plan = StreamProtection(9, "cam", "s1", "h1", Identity("10.0.0.1", "10.0.0.3", udp_dst=5001), 7, 200, gate,
...                         FlowMeter(1_776_000, 444))
>>> document = psfp_document("s1", "00-00-00-00-00-01", [plan], {"h1": "s1-eth1"}, ROOMY)
>>> component = document["ieee802-dot1q-bridge:bridges"]["bridge"][0]["component"][0]
>>> gates = component[PSFP + ":stream-gates"]["stream-gate-instance-table"][0]
>>> [entry["gate-state-value"] for entry in gates["admin-control-list"]["gate-control-entry"]]
['open', 'closed']
>>> gates["admin-cycle-time"], gates["admin-base-time"]
({'numerator': 1, 'denominator': 1000}, {'seconds': '1700000000', 'nanoseconds': 0})
>>> document["ieee802-dot1cb-stream-identification:stream-identity"][0]["in-facing"]
{'input-port': ['s1-eth1']}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from srfabric.errors import ModelError
from srfabric.tsn.gates.capabilities import PortCapabilities, list_over
from srfabric.tsn.gates.render import ptp_time, rational_seconds
from srfabric.tsn.protect.psfp import StreamProtection

PSFP = "ieee802-dot1q-psfp-bridge"
SID = "ieee802-dot1cb-stream-identification"
COMPONENT = "c0"  # the one bridge component a bridge of srfabric's has
PRIORITY_NAMES = ("zero", "one", "two", "three", "four", "five", "six", "seven")


ROOMY = PortCapabilities(list_max=64, cycle_max=(1, 1), interval_max_ns=1_000_000_000)  # a bridge's stream gates


def psfp_document(bridge: str, address: str, plans: Sequence[StreamProtection], ports: Mapping[str, str],
                  capabilities: PortCapabilities, component: str = COMPONENT) -> dict[str, Any]:
    """``bridge``'s identities, filters, gates and meters for ``plans`` (its own streams); ``ports`` names the
    interface each talker's frames come in by; ``capabilities``: its stream gates' (the leaves a port's gates
    have). ``ModelError`` naming the stream and the leaf when a plan does not fit the bridge."""
    identities, filters, gates, meters = [], [], [], []
    for plan in sorted(plans, key=lambda p: p.handle):
        where = f"stream {plan.stream}"
        if plan.bridge != bridge:
            raise ModelError(where, f"its edge is {plan.bridge}, not {bridge}")
        if plan.talker not in ports:
            raise ModelError(where, f"no port of {bridge} faces its talker {plan.talker}")
        reason = list_over([i.duration_ns for i in plan.gate.intervals], plan.gate.cycle_ns, capabilities,
                           "the bridge", "entries")
        if reason is not None:
            raise ModelError(where, reason)
        identities.append(_identity(plan, ports[plan.talker]))
        filters.append(_filter(plan))
        gates.append(_gate(plan))
        meters.append({"flow-meter-instance-id": plan.handle, "committed-information-rate": str(plan.meter.cir_bps),
                       "committed-burst-size": plan.meter.cbs_bytes, "excess-information-rate": "0",
                       "excess-burst-size": 0, "coupling-flag": "zero", "color-mode": "color-blind",
                       "drop-on-yellow": True, "mark-all-frames-red-enable": False})
    interfaces = [{"name": name, "type": "iana-if-type:ethernetCsmacd"} for name in sorted(set(ports.values()))]
    return {
        "ietf-interfaces:interfaces": {"interface": interfaces},
        f"{SID}:stream-identity": identities,
        "ieee802-dot1q-bridge:bridges": {"bridge": [{
            "name": bridge, "address": address, "bridge-type": "ieee802-dot1q-bridge:customer-vlan-bridge",
            "component": [{
                "name": component, "type": "ieee802-dot1q-bridge:c-vlan-component",
                f"{PSFP}:flow-meters": {"flow-meter-instance-table": meters},
                f"{PSFP}:stream-filters": {"stream-filter-instance-table": filters},
                f"{PSFP}:stream-gates": {**capabilities.to_yang(), "stream-gate-instance-table": gates},
            }]}]},
    }


def edge_address(bridge: str) -> str:
    """A locally administered address standing for a bridge given none, the same for the same name (the API's
    documents and ``srfabric bridge serve`` use it alike).

    >>> edge_address("s1")
    '02-00-00-00-73-31'
    """
    tail = bridge.encode()[-4:].rjust(4, b"\0")
    return "-".join(f"{octet:02X}" for octet in b"\x02\x00" + tail)


def _identity(plan: StreamProtection, port: str) -> dict[str, Any]:
    identity = plan.identity
    match: dict[str, Any] = {"ip-source": identity.ipv4_source, "ip-destination": identity.ipv4_destination,
                             "next-protocol": "udp"}
    if identity.destination_mac is not None:
        match["destination-mac"] = identity.destination_mac.replace(":", "-").upper()
    if identity.udp_src is not None:
        match["source-port"] = identity.udp_src
    if identity.udp_dst is not None:
        match["destination-port"] = identity.udp_dst
    return {"index": plan.handle, "handle": plan.handle, "in-facing": {"input-port": [port]},
            "ip-stream-identification": match}


def _filter(plan: StreamProtection) -> dict[str, Any]:
    return {"stream-filter-instance-id": plan.handle, "stream-handle": plan.handle,
            "priority-spec": "wildcard" if plan.priority is None else PRIORITY_NAMES[plan.priority],
            "max-sdu-size": plan.max_sdu_bytes, "stream-blocked-due-to-oversize-frame-enabled": False,
            "stream-gate-ref": plan.handle, "flow-meter-ref": plan.handle, "flow-meter-enable": True}


def _gate(plan: StreamProtection) -> dict[str, Any]:
    gate = plan.gate
    entries = [{"index": index, "operation-name": "ieee802-dot1q-psfp:set-gate-and-ipv",
                "time-interval-value": interval.duration_ns, "gate-state-value": "open" if interval.open else "closed",
                "ipv-spec": "null"} for index, interval in enumerate(gate.intervals)]
    return {"stream-gate-instance-id": plan.handle, "gate-enable": True, "admin-gate-states": "closed",
            "admin-ipv": "null", "admin-control-list": {"gate-control-entry": entries},
            "admin-cycle-time": rational_seconds(gate.cycle_ns), "admin-cycle-time-extension": 0,
            "admin-base-time": ptp_time(gate.base_time_ns), "config-change": True}
