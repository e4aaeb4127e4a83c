"""Every resource's create, list, show, update and delete, and networking-sfc's validation errors,
against a running ``srfabric serve`` over real HTTP."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from srfabric_tools.testbed.api_lab import ApiLab

MISSING = "00000000-0000-4000-8000-000000000000"


def http(lab: ApiLab) -> httpx.Client:
    return httpx.Client(base_url=lab.serve.url, headers={"X-Auth-Token": lab.serve.token}, timeout=30)


def ok(response: httpx.Response, status: int) -> Any:
    assert response.status_code == status, response.text
    return response.json() if response.content else None


def error(response: httpx.Response, status: int, kind: str, field: str) -> None:
    assert response.status_code == status, response.text
    body = response.json()["NeutronError"]
    assert body["type"] == kind, body
    assert field in body["message"], body
    assert body["detail"] == ""


def test_token_is_required(lab: ApiLab) -> None:
    for headers in ({}, {"X-Auth-Token": "wrong"}):
        response = httpx.get(f"{lab.serve.url}/v2.0/sfc/port_chains", headers=headers)
        error(response, 401, "HTTPUnauthorized", "X-Auth-Token")
    assert httpx.get(f"{lab.serve.url}/openapi.json").status_code == 200


def test_learned_hosts_are_ports(lab: ApiLab) -> None:
    with http(lab) as c:
        ports = {p["id"]: p for p in ok(c.get("/v2.0/ports"), 200)["ports"]}
    for name, host in lab.spec.hosts.items():
        port = ports[lab.ports[name]]
        assert port["binding:profile"]["port"] == host.port and port["srfabric:discovered"] is True
        assert port["fixed_ips"][0]["ip_address"] == host.ip


def test_crud_of_every_resource(lab: ApiLab) -> None:
    with http(lab) as c:
        spare = {"name": "spare", "device_id": "x", "binding:profile": {"switch": 0x102, "port": 14}}
        port = ok(c.post("/v2.0/ports", json={"port": spare}), 201)["port"]
        renamed_port = ok(c.put(f"/v2.0/ports/{port['id']}", json={"port": {"name": "spare2"}}), 200)["port"]
        assert renamed_port["name"] == "spare2"
        fc = ok(c.post("/v2.0/sfc/flow_classifiers", json={"flow_classifier": {
            "name": "web", "protocol": "TCP", "destination_port_range_min": 80, "destination_port_range_max": 80,
            "logical_source_port": lab.ports["h1"], "logical_destination_port": lab.ports["h2"]}}), 201)
        fc = fc["flow_classifier"]
        assert (fc["protocol"], fc["ethertype"], fc["l7_parameters"]) == ("tcp", "IPv4", {})
        pp = ok(c.post("/v2.0/sfc/port_pairs", json={"port_pair": {
            "name": "p1", "ingress": lab.ports["v1-in"], "egress": lab.ports["v1-out"]}}), 201)["port_pair"]
        assert pp["service_function_parameters"] == {"correlation": None, "weight": 1}
        ppg = ok(c.post("/v2.0/sfc/port_pair_groups",
                        json={"port_pair_group": {"name": "g1", "port_pairs": [pp["id"]]}}), 201)["port_pair_group"]
        assert ppg["group_id"] >= 1 and ppg["tap_enabled"] is False
        assert ppg["port_pair_group_parameters"]["lb_fields"] == []
        pc = ok(c.post("/v2.0/sfc/port_chains", json={"port_chain": {
            "name": "c1", "port_pair_groups": [ppg["id"]], "flow_classifiers": [fc["id"]]}}), 201)["port_chain"]
        assert pc["chain_parameters"] == {"correlation": "mpls", "symmetric": False} and pc["chain_id"] >= 1
        pc2_fc = ok(c.post("/v2.0/sfc/flow_classifiers", json={"flow_classifier": {
            "protocol": "tcp", "destination_port_range_min": 81, "destination_port_range_max": 81,
            "logical_source_port": lab.ports["h1"], "logical_destination_port": lab.ports["h2"]}}), 201)
        pc2 = ok(c.post("/v2.0/sfc/port_chains", json={"port_chain": {
            "name": "c2", "port_pair_groups": [ppg["id"]], "flow_classifiers": []}}), 409)
        assert pc2["NeutronError"]["type"] == "InvalidPortPairGroups"
        for kind, member, item in (("sfc/flow_classifiers", "flow_classifier", fc),
                                   ("sfc/port_pairs", "port_pair", pp),
                                   ("sfc/port_pair_groups", "port_pair_group", ppg),
                                   ("sfc/port_chains", "port_chain", pc), ("ports", "port", port)):
            listed = ok(c.get(f"/v2.0/{kind}"), 200)[kind.split("/")[-1]]
            assert item["id"] in {i["id"] for i in listed}
            shown = ok(c.get(f"/v2.0/{kind}/{item['id']}"), 200)[member]
            assert shown["id"] == item["id"]
            only = ok(c.get(f"/v2.0/{kind}/{item['id']}", params=[("fields", "id"), ("fields", "name")]), 200)[member]
            assert set(only) == {"id", "name"}
            by_name = ok(c.get(f"/v2.0/{kind}", params={"name": shown["name"]}), 200)[kind.split("/")[-1]]
            assert {i["id"] for i in by_name} >= {item["id"]} and all(i["name"] == shown["name"] for i in by_name)
            renamed = ok(c.put(f"/v2.0/{kind}/{item['id']}", json={member: {"name": "renamed"}}), 200)[member]
            assert renamed["name"] == "renamed"
        # Updating a chain's classifiers: the new one's traffic is steered, nothing else changes.
        ok(c.put(f"/v2.0/sfc/port_chains/{pc['id']}", json={"port_chain": {
            "flow_classifiers": [fc["id"], pc2_fc["flow_classifier"]["id"]]}}), 200)
        ok(c.delete(f"/v2.0/sfc/port_chains/{pc['id']}"), 204)
        error(c.get(f"/v2.0/sfc/port_chains/{pc['id']}"), 404, "PortChainNotFound", pc["id"])
        for kind, item in (("sfc/port_pair_groups", ppg), ("sfc/port_pairs", pp), ("sfc/flow_classifiers", fc),
                           ("sfc/flow_classifiers", pc2_fc["flow_classifier"]), ("ports", port)):
            ok(c.delete(f"/v2.0/{kind}/{item['id']}"), 204)
            assert c.get(f"/v2.0/{kind}/{item['id']}").status_code == 404


def test_service_graph_lifecycle(lab: ApiLab) -> None:
    with http(lab) as c:
        chains = []
        for index, function in enumerate(("v1", "v2")):
            fc = ok(c.post("/v2.0/sfc/flow_classifiers", json={"flow_classifier": {
                "protocol": "udp", "destination_port_range_min": 7000 + index,
                "destination_port_range_max": 7000 + index,
                "logical_source_port": lab.ports["h1"], "logical_destination_port": lab.ports["h2"]}}), 201)
            pp = ok(c.post("/v2.0/sfc/port_pairs", json={"port_pair": {
                "ingress": lab.ports[f"{function}-in"], "egress": lab.ports[f"{function}-out"]}}), 201)
            ppg = ok(c.post("/v2.0/sfc/port_pair_groups", json={"port_pair_group": {
                "port_pairs": [pp["port_pair"]["id"]]}}), 201)
            chains.append(ok(c.post("/v2.0/sfc/port_chains", json={"port_chain": {
                "port_pair_groups": [ppg["port_pair_group"]["id"]],
                "flow_classifiers": [fc["flow_classifier"]["id"]]}}), 201)["port_chain"])
        a, b = chains
        error(c.post("/v2.0/sfc/service_graphs", json={"service_graph": {"port_chains": {a["id"]: [a["id"]]}}}),
              400, "ServiceGraphLoopDetected", "port_chains")
        error(c.post("/v2.0/sfc/service_graphs", json={"service_graph": {"port_chains": {"x": [a["id"]]}}}),
              400, "InvalidUUID", "port_chains")
        error(c.post("/v2.0/sfc/service_graphs", json={"service_graph": {"port_chains": {a["id"]: [MISSING]}}}),
              404, "PortChainNotFound", MISSING)
        sg = ok(c.post("/v2.0/sfc/service_graphs", json={"service_graph": {"name": "g",
                                                                           "port_chains": {a["id"]: [b["id"]]}}}),
                201)["service_graph"]
        assert sg["port_chains"] == {a["id"]: [b["id"]]}
        error(c.post("/v2.0/sfc/service_graphs", json={"service_graph": {"port_chains": {b["id"]: [a["id"]]}}}),
              409, "ServiceGraphInvalidPortChains", "port_chains")
        error(c.delete(f"/v2.0/sfc/port_chains/{a['id']}"), 409, "ServiceGraphPortChainInUse", a["id"])
        error(c.put(f"/v2.0/sfc/service_graphs/{sg['id']}", json={"service_graph": {"port_chains": {}}}),
              400, "HTTPBadRequest", "port_chains")
        assert ok(c.put(f"/v2.0/sfc/service_graphs/{sg['id']}", json={"service_graph": {"name": "h"}}),
                  200)["service_graph"]["name"] == "h"
        ok(c.delete(f"/v2.0/sfc/service_graphs/{sg['id']}"), 204)
        _remove_chains(c, chains)


def _remove_chains(c: httpx.Client, chains: list[dict[str, Any]]) -> None:
    for chain in chains:
        ok(c.delete(f"/v2.0/sfc/port_chains/{chain['id']}"), 204)
        for group_id in chain["port_pair_groups"]:
            group = ok(c.get(f"/v2.0/sfc/port_pair_groups/{group_id}"), 200)["port_pair_group"]
            if c.delete(f"/v2.0/sfc/port_pair_groups/{group_id}").status_code == 204:
                for pair in group["port_pairs"]:
                    ok(c.delete(f"/v2.0/sfc/port_pairs/{pair}"), 204)
        for fc in chain["flow_classifiers"]:
            ok(c.delete(f"/v2.0/sfc/flow_classifiers/{fc}"), 204)


CASES = [
    # (what, method, path, body, status, type, field named in the message)
    ("port range without tcp/udp", "POST", "/v2.0/sfc/flow_classifiers",
     {"flow_classifier": {"destination_port_range_min": 5}}, 400, "FlowClassifierProtocolRequiredWithPorts",
     "destination_port_range_min"),
    ("range reversed", "POST", "/v2.0/sfc/flow_classifiers",
     {"flow_classifier": {"protocol": "udp", "source_port_range_min": 9, "source_port_range_max": 1}}, 400,
     "FlowClassifierInvalidPortRange", "source_port_range_min"),
    ("port out of range", "POST", "/v2.0/sfc/flow_classifiers",
     {"flow_classifier": {"protocol": "udp", "source_port_range_min": 70000}}, 400, "HTTPBadRequest",
     "source_port_range_min"),
    ("prefix not matching ethertype", "POST", "/v2.0/sfc/flow_classifiers",
     {"flow_classifier": {"ethertype": "IPv6", "source_ip_prefix": "10.0.0.0/8"}}, 400,
     "FlowClassifierIpPrefixFormatConflictWithEthertype", "source_ip_prefix"),
    ("bad prefix", "POST", "/v2.0/sfc/flow_classifiers", {"flow_classifier": {"destination_ip_prefix": "10.0.0.300/8"}},
     400, "HTTPBadRequest", "destination_ip_prefix"),
    ("bad protocol", "POST", "/v2.0/sfc/flow_classifiers", {"flow_classifier": {"protocol": "sctp"}}, 400,
     "FlowClassifierInvalidProtocol", "protocol"),
    ("l7 parameters", "POST", "/v2.0/sfc/flow_classifiers", {"flow_classifier": {"l7_parameters": {"url": "x"}}}, 400,
     "FlowClassifierInvalidL7Parameter", "l7_parameters"),
    ("unknown logical port", "POST", "/v2.0/sfc/flow_classifiers",
     {"flow_classifier": {"logical_source_port": MISSING}}, 404, "FlowClassifierPortNotFound", MISSING),
    ("unknown attribute", "POST", "/v2.0/sfc/flow_classifiers", {"flow_classifier": {"colour": "red"}}, 400,
     "HTTPBadRequest", "colour"),
    ("no wrapper", "POST", "/v2.0/sfc/port_pairs", {"ingress": MISSING}, 400, "HTTPBadRequest", "port_pair"),
    ("missing egress", "POST", "/v2.0/sfc/port_pairs", {"port_pair": {"ingress": MISSING}}, 400, "HTTPBadRequest",
     "egress"),
    ("unknown port", "POST", "/v2.0/sfc/port_pairs", {"port_pair": {"ingress": MISSING, "egress": MISSING}}, 404,
     "PortPairPortNotFound", MISSING),
    ("negative weight", "POST", "/v2.0/sfc/port_pairs", {"port_pair": {
        "ingress": MISSING, "egress": MISSING, "service_function_parameters": {"weight": -1}}}, 400, "HTTPBadRequest",
     "weight"),
    ("bad correlation", "POST", "/v2.0/sfc/port_chains", {"port_chain": {
        "port_pair_groups": [MISSING], "chain_parameters": {"correlation": "vxlan"}}}, 400, "HTTPBadRequest",
     "correlation"),
    ("no groups", "POST", "/v2.0/sfc/port_chains", {"port_chain": {"port_pair_groups": []}}, 400,
     "PortPairGroupNotSpecified", "port_pair_groups"),
    ("unknown group", "POST", "/v2.0/sfc/port_chains", {"port_chain": {"port_pair_groups": [MISSING]}}, 404,
     "PortPairGroupNotFound", MISSING),
    ("chain id out of range", "POST", "/v2.0/sfc/port_chains", {"port_chain": {"port_pair_groups": [MISSING],
                                                                             "chain_id": 70000}}, 400, "HTTPBadRequest",
     "chain_id"),
    ("bad lb field", "POST", "/v2.0/sfc/port_pair_groups", {"port_pair_group": {
        "port_pair_group_parameters": {"lb_fields": ["tcp_flags"]}}}, 400, "HTTPBadRequest", "lb_fields"),
    ("unknown pair", "POST", "/v2.0/sfc/port_pair_groups", {"port_pair_group": {"port_pairs": [MISSING]}}, 404,
     "PortPairNotFound", MISSING),
    ("read-only on update", "PUT", f"/v2.0/sfc/flow_classifiers/{MISSING}", {"flow_classifier": {"protocol": "udp"}},
     400, "HTTPBadRequest", "protocol"),
    ("unknown classifier", "GET", f"/v2.0/sfc/flow_classifiers/{MISSING}", None, 404, "FlowClassifierNotFound",
     MISSING),
    ("unknown chain delete", "DELETE", f"/v2.0/sfc/port_chains/{MISSING}", None, 404, "PortChainNotFound", MISSING),
    ("not JSON", "POST", "/v2.0/sfc/port_chains", "{", 400, "HTTPBadRequest", "Body"),
]


@pytest.mark.parametrize(("what", "method", "path", "body", "status", "kind", "field"), CASES,
                         ids=[case[0] for case in CASES])
def test_validation_error(lab: ApiLab, what: str, method: str, path: str, body: Any, status: int, kind: str,
                          field: str) -> None:
    with http(lab) as c:
        before = {kind_: len(ok(c.get(f"/v2.0/sfc/{kind_}"), 200)[kind_]) for kind_ in ("flow_classifiers",
                                                                                         "port_chains")}
        if isinstance(body, str):
            response = c.request(method, path, content=body, headers={"Content-Type": "application/json"})
        else:
            response = c.request(method, path, json=body)
        error(response, status, kind, field)
        after = {kind_: len(ok(c.get(f"/v2.0/sfc/{kind_}"), 200)[kind_]) for kind_ in before}
        assert after == before  # an error changes nothing


def test_conflicts_and_resources_in_use(lab: ApiLab) -> None:
    with http(lab) as c:
        base = {"protocol": "udp", "destination_port_range_min": 6000, "destination_port_range_max": 6010,
                "logical_source_port": lab.ports["h1"], "logical_destination_port": lab.ports["h2"]}
        fc = ok(c.post("/v2.0/sfc/flow_classifiers", json={"flow_classifier": base}), 201)["flow_classifier"]
        error(c.post("/v2.0/sfc/flow_classifiers", json={"flow_classifier": {**base, "destination_port_range_min": 6005,
                                                                             "destination_port_range_max": 6005}}),
              400, "FlowClassifierInConflict", fc["id"])
        pp = ok(c.post("/v2.0/sfc/port_pairs", json={"port_pair": {"ingress": lab.ports["v3-in"],
                                                                   "egress": lab.ports["v3-out"]}}), 201)["port_pair"]
        error(c.post("/v2.0/sfc/port_pairs", json={"port_pair": {"ingress": lab.ports["v3-in"],
                                                                 "egress": lab.ports["v3-out"]}}),
              400, "PortPairIngressEgressInUse", "ingress")
        g1 = ok(c.post("/v2.0/sfc/port_pair_groups", json={"port_pair_group": {"port_pairs": [pp["id"]]}}),
                201)["port_pair_group"]
        error(c.post("/v2.0/sfc/port_pair_groups", json={"port_pair_group": {"port_pairs": [pp["id"]]}}),
              409, "PortPairInUse", "port_pairs")
        error(c.delete(f"/v2.0/sfc/port_pairs/{pp['id']}"), 409, "PortPairInUse", pp["id"])
        pc = ok(c.post("/v2.0/sfc/port_chains", json={"port_chain": {"port_pair_groups": [g1["id"]],
                                                                     "flow_classifiers": [fc["id"]]}}),
                201)["port_chain"]
        error(c.delete(f"/v2.0/sfc/port_pair_groups/{g1['id']}"), 409, "PortPairGroupInUse", g1["id"])
        error(c.delete(f"/v2.0/sfc/flow_classifiers/{fc['id']}"), 409, "FlowClassifierInUse", fc["id"])
        error(c.post("/v2.0/sfc/port_chains", json={"port_chain": {"port_pair_groups": [g1["id"]]}}),
              409, "InvalidPortPairGroups", "port_pair_groups")
        error(c.post("/v2.0/sfc/port_chains", json={"port_chain": {"port_pair_groups": [g1["id"], g1["id"]]}}),
              400, "HTTPBadRequest", "port_pair_groups")
        empty = ok(c.post("/v2.0/sfc/port_pair_groups", json={"port_pair_group": {}}), 201)["port_pair_group"]
        error(c.post("/v2.0/sfc/port_chains", json={"port_chain": {"port_pair_groups": [empty["id"]],
                                                                   "chain_id": pc["chain_id"]}}),
              400, "PortChainChainIdInConflict", "chain_id")
        error(c.post("/v2.0/sfc/port_chains", json={"port_chain": {"port_pair_groups": [empty["id"]]}}),
              400, "SfcBadRequest", "port_pair_groups[0]")  # a group without pairs cannot be crossed
        ok(c.delete(f"/v2.0/sfc/port_pair_groups/{empty['id']}"), 204)
        error(c.post("/v2.0/sfc/port_chains", json={"port_chain": {"port_pair_groups": [MISSING],
                                                                   "flow_classifiers": [fc["id"]]}}),
              404, "PortPairGroupNotFound", MISSING)
        tap_pp = ok(c.post("/v2.0/sfc/port_pairs", json={"port_pair": {"ingress": lab.ports["v4-in"],
                                                                       "egress": lab.ports["v4-out"]}}),
                    201)["port_pair"]
        error(c.post("/v2.0/sfc/port_pair_groups", json={"port_pair_group": {"port_pairs": [tap_pp["id"], MISSING],
                                                                             "tap_enabled": True}}),
              404, "PortPairNotFound", MISSING)
        ok(c.delete(f"/v2.0/sfc/port_pairs/{tap_pp['id']}"), 204)
        _remove_chains(c, [pc])
