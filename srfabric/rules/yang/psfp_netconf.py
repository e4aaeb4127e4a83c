"""PSFP over NETCONF: what a bridge starts with, and what srfabric sends it.

A bridge holds its own bridge component and its PSFP limits (``startup_psfp``): the stream gates' capability
leaves and ``max-flow-meter-instances``, which the published ``must`` statements compare the tables with, so the
bridge's server refuses a gate list longer than it takes or more meters than it has. srfabric's edit
(``psfp_edit``) names the bridge and component by their keys only and carries the streams' identities, filters,
gates and meters, never the bridge's address, types or limits. Each entry replaces the one the bridge holds
(a shorter gate list keeps no tail), and the streams the bridge holds that the edge no longer has are removed
from each table.

Examples
--------
>>> from srfabric.rules.yang.psfp_document import ROOMY
>>> start = startup_psfp("s1", "02-00-00-00-00-01", ROOMY, 32)
>>> component = start["ieee802-dot1q-bridge:bridges"]["bridge"][0]["component"][0]
>>> component["ieee802-dot1q-psfp-bridge:flow-meters"]
{'max-flow-meter-instances': 32}
>>> edit = psfp_edit(psfp_document("s1", "00-00-00-00-00-01", [], {}, ROOMY))
>>> edit["ieee802-dot1q-bridge:bridges"]["bridge"][0]["component"][0]["name"]
'c0'
>>> sorted(edit)
['ieee802-dot1cb-stream-identification:stream-identity', 'ieee802-dot1q-bridge:bridges']
>>> psfp_edit(psfp_document("s1", "00-00-00-00-00-01", [], {}, ROOMY), held=[7])[SID + ":stream-identity"]
[{'@': {'ietf-netconf:operation': 'remove'}, 'index': 7}]
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from srfabric.errors import ModelError
from srfabric.rules.yang.psfp_document import COMPONENT, PSFP, SID, psfp_document
from srfabric.rules.yang.sched_tables import reply_root
from srfabric.rules.yang.xml_document import OPERATION, namespace
from srfabric.tsn.gates.capabilities import PortCapabilities

__all__ = ["HELD_FILTER", "REPLACED", "held_handles", "psfp_document", "psfp_edit", "startup_psfp"]

# Each table's container and its key (every key is the stream's handle)
TABLES = {"flow-meters": ("flow-meter-instance-table", "flow-meter-instance-id"),
          "stream-filters": ("stream-filter-instance-table", "stream-filter-instance-id"),
          "stream-gates": ("stream-gate-instance-table", "stream-gate-instance-id")}
REPLACED = frozenset({"stream-identity", *(table for table, _ in TABLES.values())})  # entries replaced, not merged
HELD_FILTER = f'<stream-identity xmlns="{namespace(SID)}"><index/><handle/></stream-identity>'  # a get-config's
MAC = re.compile(r"[0-9a-fA-F]{2}(-[0-9a-fA-F]{2}){5}")  # ieee802-types' mac-address
MAX_METERS = 4_294_967_295  # max-flow-meter-instances is a uint32


def startup_psfp(bridge: str, address: str, gates: PortCapabilities, meters: int,
                 component: str = COMPONENT) -> dict[str, Any]:
    """The bridge component a bridge starts with, holding its PSFP limits: its stream gates' ``gates`` and
    ``meters`` flow meters. ``ModelError`` naming the leaf when ``address`` or ``meters`` is not one it takes."""
    if not MAC.fullmatch(address):
        raise ModelError("address", f"{address!r} is not a MAC address as ieee802-types writes one (aa-bb-cc-dd-ee-ff)")
    if not 1 <= meters <= MAX_METERS:
        raise ModelError("max-flow-meter-instances", f"{meters} is not between 1 and {MAX_METERS}")
    return {"ieee802-dot1q-bridge:bridges": {"bridge": [{
        "name": bridge, "address": address, "bridge-type": "ieee802-dot1q-bridge:customer-vlan-bridge",
        "component": [{
            "name": component, "type": "ieee802-dot1q-bridge:c-vlan-component",
            f"{PSFP}:flow-meters": {"max-flow-meter-instances": meters},
            f"{PSFP}:stream-gates": gates.to_yang()}]}]}}


def psfp_edit(document: dict[str, Any], held: Iterable[int] = ()) -> dict[str, Any]:
    """``psfp_document``'s document as srfabric edits a bridge with it (sent with ``REPLACED``): the bridge and its
    component by key, the streams' tables, the bridge's own leaves left out; the streams the bridge holds
    (``held``, their handles) that the document has not are removed."""
    bridge = document["ieee802-dot1q-bridge:bridges"]["bridge"][0]
    component = bridge["component"][0]
    identities = list(document.get(f"{SID}:stream-identity", []))
    gone = sorted(set(held) - {identity["handle"] for identity in identities})
    tables = {f"{PSFP}:{container}": {table: component.get(f"{PSFP}:{container}", {}).get(table, [])
                                      + [_removed(key, handle) for handle in gone]}
              for container, (table, key) in TABLES.items()}
    return {f"{SID}:stream-identity": identities + [_removed("index", handle) for handle in gone],
            "ieee802-dot1q-bridge:bridges": {"bridge": [{
                "name": bridge["name"], "component": [{"name": component["name"], **tables}]}]}}


def _removed(key: str, handle: int) -> dict[str, Any]:
    return {"@": {OPERATION: "remove"}, key: handle}


def held_handles(reply: str | bytes, bridge: str) -> set[int]:
    """The handles of the streams a bridge's reply (``get-config`` of ``HELD_FILTER``) shows it identifies;
    ``ModelError`` naming the bridge and what is wrong with a reply that is not one.

    >>> held_handles('<data><stream-identity xmlns="' + namespace(SID) + '"><handle>4</handle></stream-identity>'
    ...              '</data>', "s1")
    {4}
    """
    root = reply_root(reply, bridge)
    handles = set()
    for identity in root.iter(f"{{{namespace(SID)}}}stream-identity"):
        text = (identity.findtext(f"{{{namespace(SID)}}}handle") or "").strip()
        if not text.isdigit() or int(text) > MAX_METERS:
            raise ModelError(f"bridge {bridge} stream-identity", f"handle {text!r} is not a uint32")
        handles.add(int(text))
    return handles
