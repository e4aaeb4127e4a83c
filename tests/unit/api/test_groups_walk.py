"""Load-balanced, tapped and symmetric chains, walked through fake switches that run groups."""

from __future__ import annotations

from collections import Counter

import pytest

from srfabric.model import Alternative, Chain, FlowClassifier
from srfabric.model.fabric import ServiceFunction
from srfabric.rules.compile import compile_state
from srfabric.rules.entries import Kind
from srfabric.rules.simulate import walk
from tests.unit.test_rules_walk import demo_fabric, udp

CODECS = ["mac-nibble", "mac-vlan-mpls"]


def lb_chain(**extra) -> Chain:
    return Chain("lb", FlowClassifier(protocol="udp", destination_port_range=(10000, 10399)), (), "h1", "h16", 9,
                 alternatives=(Alternative(("v1", "v4"), 1), Alternative(("v2", "v4"), 3)), **extra)


@pytest.mark.parametrize("codec", CODECS)
def test_weights_split_distinct_flows(codec: str) -> None:
    fabric = demo_fabric()
    state = compile_state(fabric, [lb_chain()], codec)
    seen: Counter[str] = Counter()
    for port in range(10000, 10400):
        result = walk(fabric, state.entries, udp("h1", "h16", port, fabric), *fabric_entry(fabric, "h1"),
                      groups=state.groups)
        assert [host for host, _ in result.delivered] == ["h16"]
        assert result.functions[1] == "v4"
        seen[result.functions[0]] += 1
    assert abs(seen["v2"] / 400 - 0.75) <= 0.10, seen


def fabric_entry(fabric, host: str) -> tuple[int, int]:
    h = fabric.hosts[host]
    return h.dpid, h.port


@pytest.mark.parametrize("codec", CODECS)
def test_tap_gets_a_copy_that_ends_there(codec: str) -> None:
    fabric = demo_fabric()
    chain = Chain("t", FlowClassifier(protocol="udp"), ("v1", "v4"), "h1", "h16", 3, taps=("v7",))
    state = compile_state(fabric, [chain], codec)
    result = walk(fabric, state.entries, udp("h1", "h16", 5001, fabric), *fabric_entry(fabric, "h1"),
                  groups=state.groups)
    assert sorted(result.functions) == ["v1", "v4", "v7"]
    assert [host for host, _ in result.delivered] == ["h16"]  # one delivery: the copy never reaches a host
    assert result.functions.index("v1") < result.functions.index("v4")


@pytest.mark.parametrize("codec", CODECS)
def test_reverse_chain_crosses_functions_backwards(codec: str) -> None:
    fabric = demo_fabric()
    for name in ("v1", "v4"):
        f = fabric.functions[name]
        fabric.add_function(ServiceFunction(name + "~rev", f.egress, f.ingress))
    forward = Chain("f", FlowClassifier(protocol="tcp", destination_port_range=(5201, 5201)), ("v1", "v4"), "h1",
                    "h16", 4)
    back = Chain("b", FlowClassifier(protocol="tcp", source_port_range=(5201, 5201)), ("v4~rev", "v1~rev"), "h16",
                 "h1", 5)
    state = compile_state(fabric, [forward, back], codec)
    reply = udp("h16", "h1", 40000, fabric)
    reply.ip_proto, reply.tp_src = 6, 5201
    result = walk(fabric, state.entries, reply, *fabric_entry(fabric, "h16"), groups=state.groups)
    assert result.functions == ["v4~rev", "v1~rev"]
    assert [host for host, _ in result.delivered] == ["h1"]


def test_group_ids_are_per_chain_and_entries_point_at_them() -> None:
    fabric = demo_fabric()
    state = compile_state(fabric, [lb_chain(taps=("v7",))], "mac-nibble")
    ingress = fabric.hosts["h1"].dpid
    assert [(g.group_id, g.type) for g in state.groups[ingress]] == [(37, "select"), (38, "all")]
    chain_entries = [e for e in state.entries[ingress] if e.kind == Kind.CHAIN and e.table == 1]
    assert {a.group_id for e in chain_entries for a in e.actions} == {38}
