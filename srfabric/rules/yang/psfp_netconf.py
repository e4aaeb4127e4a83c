"""PSFP over NETCONF: what a bridge starts with, and what srfabric sends it.

A bridge holds its own bridge component and its PSFP limits (``startup_psfp``): the stream gates' capability
leaves, which the published ``must`` statements compare each gate with (the bridge's server refuses a gate list
longer than it takes, or a cycle or interval over its maximum), and ``max-flow-meter-instances``, which the
flow meter table's ``must`` reads (as ``count(.)``, one entry at a time, so it bounds no count: it only has to
be there). The bridge's name must be the switch's name in srfabric's fabric: the edit names it by key.

srfabric's edit (``psfp_edit``) names the bridge and component by their keys only and carries the streams'
identities, filters, gates and meters with their configuration leaves, never the bridge's address, types or
limits, nor the counters. Each entry replaces the one the bridge holds (a shorter gate list keeps no tail), and
what the bridge holds (``held_psfp``) that the edge has not is removed: srfabric keeps the bridge's PSFP tables.

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
>>> held = Held({2: 7}, {"flow-meter-instance-table": {7}})
>>> psfp_edit(psfp_document("s1", "00-00-00-00-00-01", [], {}, ROOMY), held)[SID + ":stream-identity"]
[{'@': {'ietf-netconf:operation': 'remove'}, 'index': 2}]
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from xml.etree import ElementTree
from xml.sax.saxutils import escape

from srfabric.errors import ModelError
from srfabric.rules.yang.psfp_document import COMPONENT, PSFP, SID, psfp_document
from srfabric.rules.yang.psfp_read import U32
from srfabric.rules.yang.sched_tables import reply_root
from srfabric.rules.yang.xml_document import OPERATION, namespace
from srfabric.tsn.gates.capabilities import PortCapabilities
from srfabric.tsn.protect.policing import COUNTERS

__all__ = ["REPLACED", "Held", "held_filter", "held_psfp", "psfp_document", "psfp_edit", "startup_psfp"]

# Each table's container and its key (every key is the stream's handle)
TABLES = {"flow-meters": ("flow-meter-instance-table", "flow-meter-instance-id"),
          "stream-filters": ("stream-filter-instance-table", "stream-filter-instance-id"),
          "stream-gates": ("stream-gate-instance-table", "stream-gate-instance-id")}
REPLACED = frozenset({"stream-identity", *(table for table, _ in TABLES.values())})  # entries replaced, not merged
MAC = re.compile(r"[0-9a-fA-F]{2}(-[0-9a-fA-F]{2}){5}")  # ieee802-types' mac-address
NAME_MAX = 32  # a bridge's and a component's name (ieee802-dot1q-types' name-type)


def startup_psfp(bridge: str, address: str, gates: PortCapabilities, meters: int,
                 component: str = COMPONENT) -> dict[str, Any]:
    """The bridge component a bridge starts with, holding its PSFP limits: its stream gates' ``gates`` and
    ``meters`` flow meters. ``ModelError`` naming the leaf when ``address`` or ``meters`` is not one it takes."""
    if not 1 <= len(bridge) <= NAME_MAX or not bridge.isprintable():
        raise ModelError("bridge name", f"{bridge!r} is not 1 to {NAME_MAX} printable characters (dot1q-types' name)")
    if not MAC.fullmatch(address):
        raise ModelError("address", f"{address!r} is not a MAC address as ieee802-types writes one (aa-bb-cc-dd-ee-ff)")
    if not 1 <= meters <= U32:
        raise ModelError("max-flow-meter-instances (--flow-meters)", f"{meters} is not between 1 and {U32}")
    return {"ieee802-dot1q-bridge:bridges": {"bridge": [{
        "name": bridge, "address": address, "bridge-type": "ieee802-dot1q-bridge:customer-vlan-bridge",
        "component": [{
            "name": component, "type": "ieee802-dot1q-bridge:c-vlan-component",
            f"{PSFP}:flow-meters": {"max-flow-meter-instances": meters},
            f"{PSFP}:stream-gates": gates.to_yang()}]}]}}


def psfp_edit(document: dict[str, Any], held: Held | None = None) -> dict[str, Any]:
    """``psfp_document``'s document as srfabric edits a bridge with it (sent with ``REPLACED``): the bridge and its
    component by key, the streams' tables with their configuration leaves only (no counters), the bridge's own
    leaves left out; what the bridge holds (``held``) that the document has not is removed."""
    bridge = document["ieee802-dot1q-bridge:bridges"]["bridge"][0]
    component = bridge["component"][0]
    held = held or Held({}, {})
    identities = list(document.get(f"{SID}:stream-identity", []))
    gone = sorted(set(held.identities) - {identity["index"] for identity in identities})
    tables = {}
    for container, (table, key) in TABLES.items():
        rows = [{k: v for k, v in row.items() if k not in COUNTERS}
                for row in component.get(f"{PSFP}:{container}", {}).get(table, [])]
        stale = sorted(held.tables.get(table, set()) - {row[key] for row in rows})
        tables[f"{PSFP}:{container}"] = {table: rows + [_removed(key, number) for number in stale]}
    return {f"{SID}:stream-identity": identities + [_removed("index", index) for index in gone],
            "ieee802-dot1q-bridge:bridges": {"bridge": [{
                "name": bridge["name"], "component": [{"name": component["name"], **tables}]}]}}


def _removed(key: str, number: int) -> dict[str, Any]:
    return {"@": {OPERATION: "remove"}, key: number}


@dataclass(frozen=True)
class Held:
    """What a bridge's PSFP holds: its stream identities (index -> handle), and each table's entries' ids."""

    identities: dict[int, int]
    tables: dict[str, set[int]]

    @property
    def handles(self) -> set[int]:
        return set(self.identities.values())


def held_filter(bridge: str, component: str = COMPONENT) -> list[str]:
    """A ``get-config`` subtree filter's two selections for what ``held_psfp`` reads: the identities' keys and
    handles, and the keys of the tables of ``bridge``'s ``component``."""
    tables = "".join(f'<{container} xmlns="{namespace(PSFP)}"><{table}><{key}/></{table}></{container}>'
                     for container, (table, key) in TABLES.items())
    return [f'<stream-identity xmlns="{namespace(SID)}"><index/><handle/></stream-identity>',
            f'<bridges xmlns="{namespace("ieee802-dot1q-bridge")}"><bridge><name>{escape(bridge)}</name>'
            f"<component><name>{escape(component)}</name>{tables}</component></bridge></bridges>"]


def held_psfp(reply: str | bytes, bridge: str, name: str, component: str = COMPONENT) -> Held:
    """What a bridge's reply (``get-config`` of ``held_filter(name, component)``) shows it holds: its identities and
    the tables of its bridge ``name``'s ``component``. ``ModelError`` naming the bridge when it has no such
    component (its name is not the switch's), or the node of a reply that is not one.

    >>> sid, dot1q = namespace(SID), namespace("ieee802-dot1q-bridge")
    >>> held_psfp(f'<data><stream-identity xmlns="{sid}"><index>1</index><handle>4</handle></stream-identity>'
    ...           f'<bridges xmlns="{dot1q}"><bridge><name>s1</name><component><name>c0</name></component></bridge>'
    ...           '</bridges></data>', "s1", "s1")
    Held(identities={1: 4}, tables={})
    """
    root = reply_root(reply, bridge)
    identities = {}
    for identity in root.iter(f"{{{namespace(SID)}}}stream-identity"):
        where = f"bridge {bridge} stream-identity"
        identities[_uint32(identity, f"{{{namespace(SID)}}}index", where)] = _uint32(
            identity, f"{{{namespace(SID)}}}handle", where)
    dot1q = f"{{{namespace('ieee802-dot1q-bridge')}}}"
    mine = [held for node in root.iter(f"{dot1q}bridge") if (node.findtext(f"{dot1q}name") or "").strip() == name
            for held in node.findall(f"{dot1q}component") if (held.findtext(f"{dot1q}name") or "").strip() == component]
    if not mine:
        raise ModelError(f"bridge {bridge}", f"holds no bridge {name!r} with a component {component!r}: a bridge's "
                                             "name must be its switch's (srfabric bridge serve --name)")
    tables: dict[str, set[int]] = {}
    psfp = f"{{{namespace(PSFP)}}}"
    for table, key in TABLES.values():
        for row in mine[0].iter(f"{psfp}{table}"):
            tables.setdefault(table, set()).add(_uint32(row, f"{psfp}{key}", f"bridge {bridge} {table}"))
    return Held(identities, tables)


def _uint32(node: ElementTree.Element, leaf: str, where: str) -> int:
    text = (node.findtext(leaf) or "").strip()
    if not (text.isascii() and text.isdigit()) or int(text) > U32:
        raise ModelError(where, f"{leaf.rpartition('}')[2]} {text!r} is not a uint32")
    return int(text)
