"""The drivers' precommit check against a real ``srfabric serve``: what srfabric would refuse is named with its
own message, nothing changes there, and a srfabric that is away or lacks a resource lets the journal decide."""

from __future__ import annotations

from networking_srfabric.precheck import refusal
from networking_srfabric.sender import body, http_call
from tests.unit.neutron.test_sender import IDS, TOKEN, Serve, free_port, port


def test_srfabric_s_refusal_is_named_and_changes_nothing(serve: Serve) -> None:
    call = http_call(serve.url, TOKEN)
    for index, name in enumerate(("fw-in", "fw-out")):
        made = {**port(IDS[index], name), "mac_address": f"02:00:00:00:00:0{index + 1}",
                "binding:profile": {"switch": 1, "port": index + 3}}
        status, _ = call("POST", "/v2.0/ports", body("port", "create", made))
        assert status == 201
    pair = {"id": IDS[2], "name": "fw", "ingress": IDS[0], "egress": IDS[1], "project_id": "demo",
            "service_function_parameters": {"correlation": "mpls", "rewrites": ["ip_src"]}}
    status, reason = refusal(call, "port_pair", "create", pair) or (0, "")
    assert status == 400 and "rewrites are for an SR-unaware" in reason
    assert call("GET", "/v2.0/sfc/port_pairs", None) == (200, {"port_pairs": []})

    plain = {**pair, "service_function_parameters": {"correlation": "mpls"}}
    assert refusal(call, "port_pair", "create", plain) is None
    assert call("GET", "/v2.0/sfc/port_pairs", None) == (200, {"port_pairs": []})  # asked, not made
    # A group naming a pair srfabric has not been sent yet: the journal decides, later.
    group = {"id": IDS[3], "name": "g", "port_pairs": [IDS[2]], "project_id": "demo"}
    assert refusal(call, "port_pair_group", "create", group) is None


def test_a_srfabric_that_is_away_lets_the_journal_carry_the_change() -> None:
    call = http_call(f"http://127.0.0.1:{free_port()}", TOKEN, 1.0)
    assert refusal(call, "port_chain", "create", {"id": IDS[0], "port_pair_groups": []}) is None
