"""What every resource kind's checks share: new ids and owners, finding a resource (or its kind's 404), and
the renames and in-use deletes networking-sfc does alike for every kind. Pure."""

from __future__ import annotations

import uuid
from typing import Any

from srfabric.api.errors import bad_request, in_use, not_found
from srfabric.api.storage.repository import Record, Snapshot
from srfabric.codecs.macaddr import mac_to_str
from srfabric.model.fabric import Fabric, Host


def new_id() -> str:
    return str(uuid.uuid4())


def owned(snap: Snapshot, kind: str, body: dict[str, Any], project: str) -> Record:
    """A new record's id (the body's, when it names one that no record of ``kind`` has; else a fresh one), name
    and owner."""
    ident = body.get("id")
    if ident and ident in snap[kind]:
        error, what = NOT_FOUND[kind]
        raise in_use(error.replace("NotFound", "Exists"), f"{what} {ident} exists already.")
    owner = body.get("project_id") or body.get("tenant_id") or project
    return {"id": ident or new_id(), "name": body.get("name") or "", "project_id": owner, "tenant_id": owner}


NOT_FOUND = {"ports": ("PortNotFound", "Port"), "flow_classifiers": ("FlowClassifierNotFound", "Flow Classifier"),
             "port_pairs": ("PortPairNotFound", "Port Pair"),
             "port_pair_groups": ("PortPairGroupNotFound", "Port Pair Group"),
             "port_chains": ("PortChainNotFound", "Port Chain"),
             "service_graphs": ("ServiceGraphNotFound", "Service Graph"),
             "streams": ("StreamNotFound", "Stream")}


def find(snap: Snapshot, kind: str, ident: str) -> Record:
    """The resource, or the kind's own not-found error (404)."""
    error, what = NOT_FOUND[kind]
    return need(snap, kind, ident, error, what)


def need(snap: Snapshot, kind: str, ident: str, error: str, what: str) -> Record:
    record = snap[kind].get(ident)
    if record is None:
        raise not_found(error, what, ident)
    return record


def no_duplicates(field: str, items: list[str]) -> None:
    seen = set()
    for item in items:
        if item in seen:
            raise bad_request(f"Invalid input for {field}. Reason: Duplicate items in the list: '{item}'.")
        seen.add(item)


def renamed(snap: Snapshot, kind: str, ident: str, body: dict[str, Any]) -> Record:
    record = dict(find(snap, kind, ident))
    for key in ("name", "description"):
        if body.get(key) is not None:
            record[key] = body[key]
    snap[kind][ident] = record
    return record


def delete_unless_listed(snap: Snapshot, kind: str, ident: str, by: str, error: str, label: str) -> None:
    """Delete a resource that no ``by`` resource lists (in its ``kind`` field); 409 ``error`` otherwise."""
    find(snap, kind, ident)
    if any(ident in record[kind] for record in snap[by].values()):
        raise in_use(error, f"{label} {ident} in use.")
    del snap[kind][ident]


def discovered_port_id(mac: int) -> str:
    """A learned host's port id: the same for the same MAC address across restarts."""
    return str(uuid.uuid5(uuid.NAMESPACE_OID, f"srfabric-host-{mac:012x}"))


def select_fields(record: Record, fields: list[str]) -> Record:
    return {k: v for k, v in record.items() if k in fields} if fields else record


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def matches_filters(record: Record, filters: dict[str, list[str]]) -> bool:
    """Neutron's list filters: one key's values are alternatives, keys all apply, unknown keys are ignored."""
    for key, values in filters.items():
        if key not in record or isinstance(record[key], (dict, list)):
            continue
        if _text(record[key]).lower() not in {v.lower() for v in values}:
            return False
    return True


def host_port_record(host: Host, fabric: Fabric, project: str) -> Record:
    """A learned host as the port record that keeps it (``srfabric:discovered``), so a restart routes as before."""
    switch = fabric.switches.get(host.dpid)
    return {"id": discovered_port_id(host.mac), "name": host.name, "project_id": project, "tenant_id": project,
            "mac_address": mac_to_str(host.mac),
            "fixed_ips": [{"ip_address": address, "subnet_id": None} for address in (host.ip, *host.ip6)],
            "device_owner": "compute:srfabric", "device_id": host.name,
            "binding:profile": {"switch": switch.name if switch else host.dpid, "port": host.port},
            "status": "ACTIVE", "admin_state_up": True, "srfabric:discovered": True}
