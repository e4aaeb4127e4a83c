"""networking-sfc's rules for port chains and service graphs, on an in-memory snapshot (see ``checks``). Pure."""

from __future__ import annotations

import uuid
from typing import Any

from srfabric.api.errors import bad_request, in_use
from srfabric.api.resources.checks import classifiers_conflict
from srfabric.api.resources.common import find, no_duplicates, owned, renamed
from srfabric.api.storage.repository import Record, Snapshot


# -- port chains ---------------------------------------------------------------------
def _check_groups(snap: Snapshot, groups: list[str], chain: str | None, correlation: str | None) -> None:
    if not groups:
        raise bad_request("port_pair_groups: Port Pair Group is not specified in Port Chain.",
                          "PortPairGroupNotSpecified")
    no_duplicates("port_pair_groups", groups)
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
    no_duplicates("flow_classifiers", classifiers)
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
    record = {**owned(snap, "port_chains", body, project),
              "description": body.get("description") or "", "chain_id": chain_id,
              "port_pair_groups": groups, "flow_classifiers": classifiers, "chain_parameters": parameters}
    snap["port_chains"][record["id"]] = record
    return record


def _in_graph(snap: Snapshot, chain: str) -> bool:
    return any(chain in sg["port_chains"] or any(chain in dsts for dsts in sg["port_chains"].values())
               for sg in snap["service_graphs"].values())


def update_port_chain(snap: Snapshot, ident: str, body: dict[str, Any]) -> Record:
    record = renamed(snap, "port_chains", ident, body)
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
    record = {**owned(snap, "service_graphs", body, project),
              "description": body.get("description") or "",
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
    return renamed(snap, "service_graphs", ident, body)


def delete_service_graph(snap: Snapshot, ident: str) -> None:
    find(snap, "service_graphs", ident)
    del snap["service_graphs"][ident]
