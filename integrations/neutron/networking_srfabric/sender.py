"""How a journal row reaches srfabric: Neutron's resource as srfabric's networking-sfc API takes it (the fields it
keeps, under Neutron's id), and the answer as a journal outcome. A change sent twice is applied once: a create
whose id srfabric holds already is compared and, if it differs, updated; a delete of a record srfabric lacks is
done. The HTTP call is passed in (``Call``).

>>> body("port_pair", "create", {"id": "a", "name": "fw", "ingress": "p", "egress": "q", "tenant_id": "t",
...                              "project_id": "t", "description": "", "service_function_parameters":
...                              {"correlation": "mpls", "weight": 1}})
{'port_pair': {'description': '', 'egress': 'q', 'id': 'a', 'ingress': 'p', 'name': 'fw', 'project_id': 't', \
'service_function_parameters': {'correlation': 'mpls', 'weight': 1}}}
"""

from __future__ import annotations

import http.client
from collections.abc import Callable
from typing import Any

from networking_srfabric.journal import DONE, REJECTED, RETRY, Entry

Call = Callable[[str, str, dict[str, Any] | None], tuple[int, dict[str, Any]]]  # (method, path, body) -> answer
PATHS = {"port": "/v2.0/ports", "flow_classifier": "/v2.0/sfc/flow_classifiers", "port_pair": "/v2.0/sfc/port_pairs",
         "port_pair_group": "/v2.0/sfc/port_pair_groups", "port_chain": "/v2.0/sfc/port_chains",
         "service_graph": "/v2.0/sfc/service_graphs"}
OWNED = ("id", "name", "project_id")
CREATE = {
    "port": (*OWNED, "mac_address", "fixed_ips", "device_owner", "device_id", "binding:profile"),
    "flow_classifier": (*OWNED, "description", "ethertype", "protocol", "source_port_range_min",
                        "source_port_range_max", "destination_port_range_min", "destination_port_range_max",
                        "source_ip_prefix", "destination_ip_prefix", "logical_source_port",
                        "logical_destination_port", "l7_parameters"),
    "port_pair": (*OWNED, "description", "ingress", "egress", "service_function_parameters"),
    "port_pair_group": (*OWNED, "description", "port_pairs", "port_pair_group_parameters", "tap_enabled"),
    "port_chain": (*OWNED, "description", "chain_id", "port_pair_groups", "flow_classifiers", "chain_parameters"),
    "service_graph": (*OWNED, "description", "port_chains"),
}
UPDATE = {
    "port": ("name", "device_owner", "device_id", "binding:profile"),
    "flow_classifier": ("name", "description"),
    "port_pair": ("name", "description"),
    "port_pair_group": ("name", "description", "port_pairs"),
    "port_chain": ("name", "description", "port_pair_groups", "flow_classifiers"),
    "service_graph": ("name", "description"),
}
FIXED_IP = ("ip_address", "subnet_id")
CHANGED = "srfabric:changed"  # in an update's row: the fields that differ from the resource before


def body(kind: str, operation: str, resource: dict[str, Any]) -> dict[str, Any]:
    """The request body srfabric takes for ``resource`` (Neutron's dict): only the fields it keeps, none unset."""
    if kind not in PATHS:
        raise ValueError(f"object_type: {kind!r} is not one of {', '.join(PATHS)}")
    fields = CREATE[kind] if operation == "create" else UPDATE[kind]
    changed = resource.get(CHANGED)
    if operation == "update" and changed is not None:  # only what the change changed (Neutron's own request)
        fields = tuple(name for name in fields if name in changed)
    kept = {name: resource[name] for name in fields if resource.get(name) is not None}
    if "fixed_ips" in kept:
        kept["fixed_ips"] = [{k: ip[k] for k in FIXED_IP if ip.get(k) is not None} for ip in kept["fixed_ips"]]
    return {kind: dict(sorted(kept.items()))}


def send(call: Call, entry: Entry) -> tuple[str, str]:
    """One journal row to srfabric: DONE, RETRY (srfabric unreachable or failing: try again later) or REJECTED
    (srfabric refused the change; why)."""
    path = PATHS.get(entry.object_type)
    if path is None:
        return REJECTED, f"object_type: {entry.object_type!r} is not one of {', '.join(PATHS)}"
    item = f"{path}/{entry.object_uuid}"
    try:
        if entry.operation == "delete":
            status, answer = call("DELETE", item, None)
            return outcome(status, answer, gone_is_done=True)
        if entry.operation == "create":
            status, answer = call("POST", path, body(entry.object_type, "create", entry.data))
            if status != 409 or not error_type(answer).endswith("Exists"):
                return outcome(status, answer)
        status, answer = call("PUT", item, body(entry.object_type, "update", entry.data))  # update, or a replay
        return outcome(status, answer)
    except (OSError, http.client.HTTPException) as error:  # refused, reset, timed out, cut short: srfabric is away
        return RETRY, str(error) or type(error).__name__


def outcome(status: int, answer: dict[str, Any], gone_is_done: bool = False) -> tuple[str, str]:
    if 200 <= status < 300 or (gone_is_done and status == 404):
        return DONE, ""
    if status >= 500 or status in (401, 403, 408, 429):  # srfabric failing, or not yet taking our credential
        return RETRY, f"HTTP {status}: {message(answer)}"
    return REJECTED, f"HTTP {status} {error_type(answer)}: {message(answer)}"


def error_type(answer: dict[str, Any]) -> str:
    return str(answer.get("NeutronError", {}).get("type", ""))


def message(answer: dict[str, Any]) -> str:
    return str(answer.get("NeutronError", {}).get("message", ""))


def http_call(base_url: str, token: str, timeout_s: float = 10.0) -> Call:
    """``Call`` over HTTP to srfabric's API at ``base_url`` with the service token; a connection that fails raises
    ``OSError``."""
    import json
    import urllib.parse

    parsed = urllib.parse.urlsplit(base_url)
    connection_type = http.client.HTTPSConnection if parsed.scheme == "https" else http.client.HTTPConnection

    def call(method: str, path: str, payload: dict[str, Any] | None) -> tuple[int, dict[str, Any]]:
        connection = connection_type(parsed.netloc, timeout=timeout_s)
        try:
            headers = {"X-Auth-Token": token, "Content-Type": "application/json"}
            connection.request(method, path, None if payload is None else json.dumps(payload), headers)
            response = connection.getresponse()
            raw = response.read()
            try:
                answer = json.loads(raw) if raw else {}
            except ValueError:
                answer = {}
            return response.status, answer if isinstance(answer, dict) else {}
        finally:
            connection.close()

    return call
