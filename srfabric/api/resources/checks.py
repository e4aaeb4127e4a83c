"""networking-sfc's rules for each create, update and delete, on an in-memory snapshot. Pure.

Each function takes the snapshot to change (a copy) and the validated body,
checks what networking-sfc checks (``db/sfc_db.py``, ``db/flowclassifier_db.py``)
and writes the new public record into the snapshot, or raises ``ApiError``
naming the field. Error ``type`` strings are networking-sfc's exception names.
"""

from __future__ import annotations

import functools
import ipaddress
from typing import Any

from srfabric.api.errors import bad_request, in_use, not_found
from srfabric.api.resources.common import delete_unless_listed, find, need, no_duplicates, owned, renamed
from srfabric.api.storage.repository import Record, Snapshot

PROTOCOLS = ("tcp", "udp", "icmp")
ETHERTYPES = {"ipv4": "IPv4", "ipv6": "IPv6"}


# -- ports ---------------------------------------------------------------------------
def create_port(snap: Snapshot, body: dict[str, Any], project: str) -> Record:
    record = {**owned(snap, "ports", body, project),
              "mac_address": body.get("mac_address") or "",
              "fixed_ips": body.get("fixed_ips") or [], "device_owner": body.get("device_owner") or "",
              "device_id": body.get("device_id") or "", "binding:profile": body.get("binding_profile") or {},
              "status": "ACTIVE", "admin_state_up": True, "srfabric:discovered": False}
    for index, ip in enumerate(record["fixed_ips"]):
        try:
            ipaddress.ip_address(ip["ip_address"])
        except ValueError:
            raise bad_request(f"Invalid input for fixed_ips[{index}].ip_address. Reason: "
                              f"'{ip['ip_address']}' is not a valid IP address.") from None
    record["binding:profile"] = _binding(record["binding:profile"])
    snap["ports"][record["id"]] = record
    return record


def _binding(profile: dict[str, Any]) -> dict[str, Any]:
    """The profile checked, its port a number: ``openstack port create --binding-profile port=3`` sends text."""
    if not profile:
        return profile
    port = profile.get("port")
    if isinstance(port, str) and port.isdecimal() and len(port) <= 10:
        port = int(port)
        profile = {**profile, "port": port}
    if not isinstance(port, int) or isinstance(port, bool) or not 1 <= port <= 0xFFFFFF00:
        raise bad_request(f"Invalid input for binding:profile.port. Reason: {port!r} is not a port number "
                          "(1..4294967040).")
    switch = profile.get("switch")
    if not isinstance(switch, (str, int)) or isinstance(switch, bool) or switch == "":
        raise bad_request("Invalid input for binding:profile.switch. Reason: a switch name or datapath id is needed.")
    return profile


def update_port(snap: Snapshot, ident: str, body: dict[str, Any]) -> Record:
    record = dict(find(snap, "ports", ident))
    for key in ("name", "device_owner", "device_id"):
        if body.get(key) is not None:
            record[key] = body[key]
    if body.get("binding_profile") is not None:
        record["binding:profile"] = _binding(body["binding_profile"])
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
    record = {**owned(snap, "flow_classifiers", body, project),
              "description": body.get("description") or "", "ethertype": ethertype,
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


def _ranges_meet(a: Record, b: Record, low_key: str, high_key: str) -> bool:
    a_min, a_max, b_min, b_max = a[low_key], a[high_key], b[low_key], b[high_key]
    return (a_min is None or b_max is None or a_min <= b_max) and (a_max is None or b_min is None or b_min <= a_max)


def _prefixes_meet(a: str | None, b: str | None) -> bool:
    return a is None or b is None or a == b or _network(a).overlaps(_network(b))


@functools.lru_cache(maxsize=65536)
def _network(prefix: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
    """Parsed once: a new classifier is checked against every other one."""
    return ipaddress.ip_network(prefix)


def classifiers_conflict(a: Record, b: Record, logical: bool) -> bool:
    """networking-sfc's conflict test: every field overlaps (an unset one matches anything).

    ``logical`` also asks the logical ports to agree (the test on create; chains drop it). The port ranges are
    compared before the networks, and with the fields' names spelled out: a new classifier is checked against
    every other one, so this runs as often as there are classifiers.
    """
    if a["ethertype"] != b["ethertype"]:
        return False
    if a["protocol"] and b["protocol"] and a["protocol"] != b["protocol"]:
        return False
    if not (_ranges_meet(a, b, "destination_port_range_min", "destination_port_range_max")
            and _ranges_meet(a, b, "source_port_range_min", "source_port_range_max")):
        return False
    if not (_prefixes_meet(a["source_ip_prefix"], b["source_ip_prefix"])
            and _prefixes_meet(a["destination_ip_prefix"], b["destination_ip_prefix"])):
        return False
    if logical:
        for field in ("logical_source_port", "logical_destination_port"):
            if a[field] and b[field] and a[field] != b[field]:
                return False
    return True


def update_flow_classifier(snap: Snapshot, ident: str, body: dict[str, Any]) -> Record:
    return renamed(snap, "flow_classifiers", ident, body)


def delete_flow_classifier(snap: Snapshot, ident: str) -> None:
    delete_unless_listed(snap, "flow_classifiers", ident, "port_chains", "FlowClassifierInUse", "Flow Classifier")


# -- port pairs ----------------------------------------------------------------------
def create_port_pair(snap: Snapshot, body: dict[str, Any], project: str) -> Record:
    ports = {}
    for field in ("ingress", "egress"):
        ports[field] = need(snap, "ports", body[field], "PortPairPortNotFound", "Port Pair port")
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
    record = {**owned(snap, "port_pairs", body, project),
              "description": body.get("description") or "", "ingress": body["ingress"],
              "egress": body["egress"], "service_function_parameters": parameters}
    snap["port_pairs"][record["id"]] = record
    return record


def update_port_pair(snap: Snapshot, ident: str, body: dict[str, Any]) -> Record:
    return renamed(snap, "port_pairs", ident, body)


def delete_port_pair(snap: Snapshot, ident: str) -> None:
    delete_unless_listed(snap, "port_pairs", ident, "port_pair_groups", "PortPairInUse", "Port Pair")


# -- port pair groups ----------------------------------------------------------------
def _check_members(snap: Snapshot, pairs: list[str], tap: bool, group: str | None) -> None:
    no_duplicates("port_pairs", pairs)
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
    record = {**owned(snap, "port_pair_groups", body, project),
              "description": body.get("description") or "", "group_id": group_id,
              "port_pairs": list(pairs), "port_pair_group_parameters": parameters, "tap_enabled": tap}
    snap["port_pair_groups"][record["id"]] = record
    return record


def update_port_pair_group(snap: Snapshot, ident: str, body: dict[str, Any]) -> Record:
    record = renamed(snap, "port_pair_groups", ident, body)
    if body.get("port_pairs") is not None:
        _check_members(snap, body["port_pairs"], record["tap_enabled"], ident)
        record["port_pairs"] = list(body["port_pairs"])
    return record


def delete_port_pair_group(snap: Snapshot, ident: str) -> None:
    delete_unless_listed(snap, "port_pair_groups", ident, "port_chains", "PortPairGroupInUse", "Port Pair Group")
