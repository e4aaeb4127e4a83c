"""networking-sfc's rules for each create, update and delete, on an in-memory snapshot. Pure.

Each function takes the snapshot to change (a copy) and the validated body,
checks what networking-sfc checks (``db/sfc_db.py``, ``db/flowclassifier_db.py``)
and writes the new public record into the snapshot, or raises ``ApiError``
naming the field. Error ``type`` strings are networking-sfc's exception names.
"""

from __future__ import annotations

import ipaddress
import uuid
from typing import Any

from srfabric.api.errors import bad_request, in_use, not_found
from srfabric.api.repository import Record, Snapshot

PROTOCOLS = ("tcp", "udp", "icmp")
ETHERTYPES = {"ipv4": "IPv4", "ipv6": "IPv6"}


def _new_id() -> str:
    return str(uuid.uuid4())


def _owned(body: dict[str, Any], project: str) -> Record:
    owner = body.get("project_id") or body.get("tenant_id") or project
    return {"id": _new_id(), "name": body.get("name") or "", "project_id": owner, "tenant_id": owner}


NOT_FOUND = {"ports": ("PortNotFound", "Port"), "flow_classifiers": ("FlowClassifierNotFound", "Flow Classifier"),
             "port_pairs": ("PortPairNotFound", "Port Pair"),
             "port_pair_groups": ("PortPairGroupNotFound", "Port Pair Group"),
             "port_chains": ("PortChainNotFound", "Port Chain"),
             "service_graphs": ("ServiceGraphNotFound", "Service Graph"),
             "streams": ("StreamNotFound", "Stream")}


def find(snap: Snapshot, kind: str, ident: str) -> Record:
    """The resource, or the kind's own not-found error (404)."""
    error, what = NOT_FOUND[kind]
    return _need(snap, kind, ident, error, what)


def _need(snap: Snapshot, kind: str, ident: str, error: str, what: str) -> Record:
    record = snap[kind].get(ident)
    if record is None:
        raise not_found(error, what, ident)
    return record


def _no_duplicates(field: str, items: list[str]) -> None:
    seen = set()
    for item in items:
        if item in seen:
            raise bad_request(f"Invalid input for {field}. Reason: Duplicate items in the list: '{item}'.")
        seen.add(item)


# -- ports ---------------------------------------------------------------------------
def create_port(snap: Snapshot, body: dict[str, Any], project: str) -> Record:
    record = {**_owned(body, project), "mac_address": body.get("mac_address") or "",
              "fixed_ips": body.get("fixed_ips") or [], "device_owner": body.get("device_owner") or "",
              "device_id": body.get("device_id") or "", "binding:profile": body.get("binding_profile") or {},
              "status": "ACTIVE", "admin_state_up": True, "srfabric:discovered": False}
    for index, ip in enumerate(record["fixed_ips"]):
        try:
            ipaddress.ip_address(ip["ip_address"])
        except ValueError:
            raise bad_request(f"Invalid input for fixed_ips[{index}].ip_address. Reason: "
                              f"'{ip['ip_address']}' is not a valid IP address.") from None
    _check_binding(record["binding:profile"])
    snap["ports"][record["id"]] = record
    return record


def _check_binding(profile: dict[str, Any]) -> None:
    if not profile:
        return
    port = profile.get("port")
    if not isinstance(port, int) or isinstance(port, bool) or not 1 <= port <= 0xFFFFFF00:
        raise bad_request(f"Invalid input for binding:profile.port. Reason: {port!r} is not a port number "
                          "(1..4294967040).")
    switch = profile.get("switch")
    if not isinstance(switch, (str, int)) or isinstance(switch, bool) or switch == "":
        raise bad_request("Invalid input for binding:profile.switch. Reason: a switch name or datapath id is needed.")


def update_port(snap: Snapshot, ident: str, body: dict[str, Any]) -> Record:
    record = dict(find(snap, "ports", ident))
    for key in ("name", "device_owner", "device_id"):
        if body.get(key) is not None:
            record[key] = body[key]
    if body.get("binding_profile") is not None:
        _check_binding(body["binding_profile"])
        record["binding:profile"] = body["binding_profile"]
    snap["ports"][ident] = record
    return record


def delete_port(snap: Snapshot, ident: str) -> None:
    find(snap, "ports", ident)
    for kind, fields in (("flow_classifiers", ("logical_source_port", "logical_destination_port")),
                         ("port_pairs", ("ingress", "egress")), ("streams", ("talker", "listener"))):
        for record in snap[kind].values():
            if any(record[f] == ident for f in fields):
                raise in_use("PortInUse", f"Port {ident} in use by {kind[:-1]} {record['id']}.")
    del snap["ports"][ident]


# -- flow classifiers ----------------------------------------------------------------
def create_flow_classifier(snap: Snapshot, body: dict[str, Any], project: str) -> Record:
    if body.get("l7_parameters"):
        key = next(iter(body["l7_parameters"]))
        raise bad_request(f"l7_parameters: Invalid Flow Classifier parameters: Unknown key {key}.. Supported flow "
                          "classifier parameters are {}.", "FlowClassifierInvalidL7Parameter")
    ethertype = ETHERTYPES.get(str(body.get("ethertype") or "IPv4").lower())
    if ethertype is None:
        raise bad_request(f"ethertype: Flow Classifier does not support ethertype {body.get('ethertype')}. "
                          "Supported ethertype values are ['IPv4', 'IPv6'].", "FlowClassifierInvalidEthertype")
    protocol = body.get("protocol")
    if protocol is not None:
        protocol = protocol.lower()
        if protocol not in PROTOCOLS:
            raise bad_request(f"protocol: Flow Classifier does not support protocol {body['protocol']}. Supported "
                              "protocol values are ['tcp', 'udp', 'icmp'].", "FlowClassifierInvalidProtocol")
    record = {**_owned(body, project), "description": body.get("description") or "", "ethertype": ethertype,
              "protocol": protocol, "l7_parameters": {}}
    for side in ("source", "destination"):
        low, high = body.get(f"{side}_port_range_min"), body.get(f"{side}_port_range_max")
        if low is not None and high is not None and low > high:
            raise bad_request(f"{side}_port_range_min: Invalid IP protocol port range. min_port_range={low} must be "
                              f"lesser or equal to max_port_range={high}.", "FlowClassifierInvalidPortRange")
        if (low is not None or high is not None) and protocol not in ("tcp", "udp"):
            raise bad_request(f"{side}_port_range_{'min' if low is not None else 'max'}: IP protocol must be TCP or "
                              "UDP, if port range is given.", "FlowClassifierProtocolRequiredWithPorts")
        record[f"{side}_port_range_min"], record[f"{side}_port_range_max"] = low, high
    for side in ("source", "destination"):
        prefix = body.get(f"{side}_ip_prefix")
        if prefix is not None:
            try:
                network = ipaddress.ip_network(prefix, strict=False)
            except ValueError:
                raise bad_request(f"Invalid input for {side}_ip_prefix. Reason: '{prefix}' is not a valid IP "
                                  "subnet.") from None
            if f"IPv{network.version}" != ethertype:
                raise bad_request(f"{side}_ip_prefix: IP prefix {prefix} format conflicts with ethertype "
                                  f"{ethertype}.", "FlowClassifierIpPrefixFormatConflictWithEthertype")
            prefix = str(network)
        record[f"{side}_ip_prefix"] = prefix
    for field in ("logical_source_port", "logical_destination_port"):
        port = body.get(field)
        if port is not None and port not in snap["ports"]:
            raise not_found("FlowClassifierPortNotFound", "Flow Classifier Neutron Port", port)
        record[field] = port
    for other in snap["flow_classifiers"].values():
        if classifiers_conflict(record, other, logical=True):
            raise bad_request(f"flow_classifier: Flow Classifier conflicts with another Flow Classifier "
                              f"{other['id']}.", "FlowClassifierInConflict")
    snap["flow_classifiers"][record["id"]] = record
    return record


def _ranges_meet(a: Record, b: Record, side: str) -> bool:
    a_min, a_max = a[f"{side}_port_range_min"], a[f"{side}_port_range_max"]
    b_min, b_max = b[f"{side}_port_range_min"], b[f"{side}_port_range_max"]
    return (a_min is None or b_max is None or a_min <= b_max) and (a_max is None or b_min is None or b_min <= a_max)


def _prefixes_meet(a: str | None, b: str | None) -> bool:
    return a is None or b is None or ipaddress.ip_network(a).overlaps(ipaddress.ip_network(b))


def classifiers_conflict(a: Record, b: Record, logical: bool) -> bool:
    """networking-sfc's conflict test: every field overlaps (an unset one matches anything).

    ``logical`` also asks the logical ports to agree (the test on create; chains drop it).
    """
    if a["ethertype"] != b["ethertype"]:
        return False
    if a["protocol"] and b["protocol"] and a["protocol"] != b["protocol"]:
        return False
    if not all(_prefixes_meet(a[f"{s}_ip_prefix"], b[f"{s}_ip_prefix"]) for s in ("source", "destination")):
        return False
    if not all(_ranges_meet(a, b, s) for s in ("source", "destination")):
        return False
    if logical:
        for field in ("logical_source_port", "logical_destination_port"):
            if a[field] and b[field] and a[field] != b[field]:
                return False
    return True


def _renamed(snap: Snapshot, kind: str, ident: str, body: dict[str, Any]) -> Record:
    record = dict(find(snap, kind, ident))
    for key in ("name", "description"):
        if body.get(key) is not None:
            record[key] = body[key]
    snap[kind][ident] = record
    return record


def update_flow_classifier(snap: Snapshot, ident: str, body: dict[str, Any]) -> Record:
    return _renamed(snap, "flow_classifiers", ident, body)


def _delete_unless_listed(snap: Snapshot, kind: str, ident: str, by: str, error: str, label: str) -> None:
    """Delete a resource that no ``by`` resource lists (in its ``kind`` field); 409 ``error`` otherwise."""
    find(snap, kind, ident)
    if any(ident in record[kind] for record in snap[by].values()):
        raise in_use(error, f"{label} {ident} in use.")
    del snap[kind][ident]


def delete_flow_classifier(snap: Snapshot, ident: str) -> None:
    _delete_unless_listed(snap, "flow_classifiers", ident, "port_chains", "FlowClassifierInUse", "Flow Classifier")


# -- port pairs ----------------------------------------------------------------------
def create_port_pair(snap: Snapshot, body: dict[str, Any], project: str) -> Record:
    ports = {}
    for field in ("ingress", "egress"):
        ports[field] = _need(snap, "ports", body[field], "PortPairPortNotFound", "Port Pair port")
        if not ports[field]["binding:profile"]:
            raise bad_request(f"{field}: Port Pair {field} port {body[field]} does not belong to a host "
                              "(it has no binding:profile {switch, port}).", f"PortPair{field.title()}NoHost")
    for other in snap["port_pairs"].values():
        if (other["ingress"], other["egress"]) == (body["ingress"], body["egress"]):
            raise bad_request(f"ingress: Port Pair with ingress port {body['ingress']} and egress port "
                              f"{body['egress']} is already used by another Port Pair {other['id']}.",
                              "PortPairIngressEgressInUse")
    devices = (ports["ingress"]["device_id"], ports["egress"]["device_id"])
    if devices[0] and devices[1] and devices[0] != devices[1]:
        raise bad_request(f"egress: Port Pair ingress port {body['ingress']} and egress port {body['egress']} not in "
                          "the same host.", "PortPairIngressEgressDifferentHost")
    parameters = {"correlation": None, "weight": 1, **(body.get("service_function_parameters") or {})}
    if parameters.get("rewrites") and parameters["correlation"] is not None:
        raise bad_request(f"service_function_parameters: rewrites are for an SR-unaware function (correlation None); "
                          f"one with correlation {parameters['correlation']} returns the flow untouched.",
                          "PortPairRewritesNeedProxy")
    record = {**_owned(body, project), "description": body.get("description") or "", "ingress": body["ingress"],
              "egress": body["egress"], "service_function_parameters": parameters}
    snap["port_pairs"][record["id"]] = record
    return record


def update_port_pair(snap: Snapshot, ident: str, body: dict[str, Any]) -> Record:
    return _renamed(snap, "port_pairs", ident, body)


def delete_port_pair(snap: Snapshot, ident: str) -> None:
    _delete_unless_listed(snap, "port_pairs", ident, "port_pair_groups", "PortPairInUse", "Port Pair")


# -- port pair groups ----------------------------------------------------------------
def _check_members(snap: Snapshot, pairs: list[str], tap: bool, group: str | None) -> None:
    _no_duplicates("port_pairs", pairs)
    correlations = set()
    for pair_id in pairs:
        pair = find(snap, "port_pairs", pair_id)
        for other in snap["port_pair_groups"].values():
            if other["id"] != group and pair_id in other["port_pairs"]:
                raise in_use("PortPairInUse", f"port_pairs: Port Pair {pair_id} in use by Port Pair Group "
                                              f"{other['id']}.")
        correlations.add(pair["service_function_parameters"].get("correlation"))
    if len(correlations) > 1:
        raise bad_request("port_pairs: Port Pair Group attempted creation included Port Pairs with inconsistent "
                          "correlation types.", "InconsistentCorrelations")
    if tap and len(pairs) > 1:
        raise bad_request("port_pairs: Multiple port pairs in Tap port-pair-group is not allowed.",
                          "MultiplePortPairsInTapPPGNotSupported")


def create_port_pair_group(snap: Snapshot, body: dict[str, Any], project: str) -> Record:
    pairs = body.get("port_pairs") or []
    tap = bool(body.get("tap_enabled"))
    _check_members(snap, pairs, tap, None)
    parameters = body.get("port_pair_group_parameters") or {}
    parameters = {"lb_fields": parameters.get("lb_fields", []),
                  "ppg_n_tuple_mapping": parameters.get("ppg_n_tuple_mapping")
                  or {"ingress_n_tuple": {}, "egress_n_tuple": {}}}
    used = {g["group_id"] for g in snap["port_pair_groups"].values()}
    group_id = next(i for i in range(1, len(used) + 2) if i not in used)
    record = {**_owned(body, project), "description": body.get("description") or "", "group_id": group_id,
              "port_pairs": list(pairs), "port_pair_group_parameters": parameters, "tap_enabled": tap}
    snap["port_pair_groups"][record["id"]] = record
    return record


def update_port_pair_group(snap: Snapshot, ident: str, body: dict[str, Any]) -> Record:
    record = _renamed(snap, "port_pair_groups", ident, body)
    if body.get("port_pairs") is not None:
        _check_members(snap, body["port_pairs"], record["tap_enabled"], ident)
        record["port_pairs"] = list(body["port_pairs"])
    return record


def delete_port_pair_group(snap: Snapshot, ident: str) -> None:
    _delete_unless_listed(snap, "port_pair_groups", ident, "port_chains", "PortPairGroupInUse", "Port Pair Group")


# -- port chains ---------------------------------------------------------------------
def _check_groups(snap: Snapshot, groups: list[str], chain: str | None, correlation: str | None) -> None:
    if not groups:
        raise bad_request("port_pair_groups: Port Pair Group is not specified in Port Chain.",
                          "PortPairGroupNotSpecified")
    _no_duplicates("port_pair_groups", groups)
    taps = [find(snap, "port_pair_groups", g)["tap_enabled"] for g in groups]
    if any(a and b for a, b in zip(taps, taps[1:], strict=False)):
        raise bad_request("port_pair_groups: Consecutive Tap PPG in port-chain is not supported now.",
                          "ConsecutiveTapPPGNotSupported")
    if all(taps):
        raise bad_request("port_pair_groups: a chain needs at least one group that is not a tap.",
                          "PortPairGroupNotSpecified")
    for other in snap["port_chains"].values():
        if other["id"] != chain and other["port_pair_groups"] == groups:
            raise in_use("InvalidPortPairGroups", f"port_pair_groups: Port Pair Group(s) {groups} in use by Port "
                                                  f"Chain {other['id']}.")
    if correlation is not None:
        for g in groups:
            for pair_id in snap["port_pair_groups"][g]["port_pairs"]:
                found = snap["port_pairs"][pair_id]["service_function_parameters"].get("correlation")
                if found not in (None, correlation):
                    raise bad_request(f"port_pair_groups: Port Chain attempted creation included a Port Pair Group "
                                      f"({g}) with a different protocol used as correlation type.",
                                      "PortChainInconsistentCorrelations")


def _check_classifiers(snap: Snapshot, classifiers: list[str], chain: str | None) -> None:
    _no_duplicates("flow_classifiers", classifiers)
    for fc_id in classifiers:
        fc = find(snap, "flow_classifiers", fc_id)
        for other in snap["port_chains"].values():
            if other["id"] == chain:
                continue
            if fc_id in other["flow_classifiers"]:
                raise in_use("FlowClassifierInUse", f"flow_classifiers: Flow Classifier {fc_id} in use.")
            for other_fc in other["flow_classifiers"]:
                if classifiers_conflict(fc, snap["flow_classifiers"][other_fc], logical=False):
                    raise bad_request(f"flow_classifiers: Flow Classifier {fc_id} conflicts with Flow Classifier "
                                      f"{other_fc} in port chain {other['id']}.", "PortChainFlowClassifierInConflict")


def create_port_chain(snap: Snapshot, body: dict[str, Any], project: str) -> Record:
    parameters = {"correlation": "mpls", "symmetric": False, **(body.get("chain_parameters") or {})}
    groups, classifiers = list(body["port_pair_groups"]), list(body.get("flow_classifiers") or [])
    _check_groups(snap, groups, None, parameters["correlation"])
    _check_classifiers(snap, classifiers, None)
    used = {pc["chain_id"]: pc["id"] for pc in snap["port_chains"].values()}
    chain_id = body.get("chain_id") or 0
    if chain_id in used:
        raise bad_request(f"chain_id: Chain id {chain_id} conflicts with Chain id in port chain {used[chain_id]}.",
                          "PortChainChainIdInConflict")
    if chain_id == 0:
        chain_id = next((i for i in range(1, 65535) if i not in used), 0)
        if chain_id == 0:
            raise bad_request("chain_id: no chain id is free in 1..65534.", "PortChainUnavailableChainId")
    record = {**_owned(body, project), "description": body.get("description") or "", "chain_id": chain_id,
              "port_pair_groups": groups, "flow_classifiers": classifiers, "chain_parameters": parameters}
    snap["port_chains"][record["id"]] = record
    return record


def _in_graph(snap: Snapshot, chain: str) -> bool:
    return any(chain in sg["port_chains"] or any(chain in dsts for dsts in sg["port_chains"].values())
               for sg in snap["service_graphs"].values())


def update_port_chain(snap: Snapshot, ident: str, body: dict[str, Any]) -> Record:
    record = _renamed(snap, "port_chains", ident, body)
    steering = body.get("port_pair_groups") is not None or body.get("flow_classifiers") is not None
    if steering and _in_graph(snap, ident):
        raise in_use("ServiceGraphPortChainInUse", f"Port Chain {ident} in use.")
    if body.get("port_pair_groups") is not None:
        _check_groups(snap, body["port_pair_groups"], ident, None)
        record["port_pair_groups"] = list(body["port_pair_groups"])
    if body.get("flow_classifiers") is not None:
        _check_classifiers(snap, body["flow_classifiers"], ident)
        record["flow_classifiers"] = list(body["flow_classifiers"])
    return record


def delete_port_chain(snap: Snapshot, ident: str) -> None:
    find(snap, "port_chains", ident)
    if _in_graph(snap, ident):
        raise in_use("ServiceGraphPortChainInUse", f"Port Chain {ident} in use.")
    del snap["port_chains"][ident]


# -- service graphs ------------------------------------------------------------------
def _valid_uuid(text: str) -> bool:
    try:
        uuid.UUID(text)
    except ValueError:
        return False
    return True


def create_service_graph(snap: Snapshot, body: dict[str, Any], project: str) -> Record:
    edges: dict[str, list[str]] = body["port_chains"]
    for src, dsts in edges.items():
        if not _valid_uuid(src):
            raise bad_request(f"port_chains: An invalid UUID was specified: UUID of source Port-Chain is invalid: "
                              f"{src}. Make sure only valid UUIDs are provided.", "InvalidUUID")
        for dst in dsts:
            if not _valid_uuid(dst):
                raise bad_request(f"port_chains: An invalid UUID was specified: UUID of destination Port-Chain is "
                                  f"invalid: {dst}. Make sure only valid UUIDs are provided.", "InvalidUUID")
    chains = set(edges) | {d for dsts in edges.values() for d in dsts}
    for chain in sorted(chains):
        find(snap, "port_chains", chain)
        if _in_graph(snap, chain):
            raise in_use("ServiceGraphInvalidPortChains", f"port_chains: Some of the Port Chain(s): {chain}, are "
                                                          "already in use by a Service Graph.")
    for src, dsts in edges.items():
        if len(set(dsts)) != len(dsts):
            raise bad_request(f"port_chains: Port Chain {src} is duplicated on one of the branching points being "
                              "created.", "ServiceGraphPortChainInConflict")
        fcs = [fc for dst in dsts for fc in snap["port_chains"][dst]["flow_classifiers"]]
        for i, a in enumerate(fcs):
            for b in fcs[i + 1:]:
                if classifiers_conflict(snap["flow_classifiers"][a], snap["flow_classifiers"][b], logical=False):
                    raise bad_request(f"port_chains: Flow Classifier {a} conflicts with Flow Classifier {b} on one of "
                                      "the branching points being created.", "ServiceGraphFlowClassifierInConflict")
    if _has_loop(edges):
        raise bad_request("port_chains: Service Graph defined contains at least one port chain loop.",
                          "ServiceGraphLoopDetected")
    record = {**_owned(body, project), "description": body.get("description") or "",
              "port_chains": {src: list(dsts) for src, dsts in edges.items()}}
    snap["service_graphs"][record["id"]] = record
    return record


def _has_loop(edges: dict[str, list[str]]) -> bool:
    state: dict[str, int] = {}  # 1: on the current walk, 2: done

    def visit(node: str) -> bool:
        if state.get(node) == 1:
            return True
        if state.get(node) == 2:
            return False
        state[node] = 1
        if any(visit(nxt) for nxt in edges.get(node, [])):
            return True
        state[node] = 2
        return False

    return any(visit(node) for node in list(edges))


def update_service_graph(snap: Snapshot, ident: str, body: dict[str, Any]) -> Record:
    return _renamed(snap, "service_graphs", ident, body)


def delete_service_graph(snap: Snapshot, ident: str) -> None:
    find(snap, "service_graphs", ident)
    del snap["service_graphs"][ident]
