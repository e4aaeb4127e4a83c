"""Load-balanced, tapped and symmetric chains, walked through fake switches that run groups."""

from __future__ import annotations

from collections import Counter

import pytest

from srfabric.model import Alternative, Chain, FlowClassifier
from srfabric.model.fabric import ServiceFunction
from srfabric.rules.compile import compile_state
from srfabric.rules.entries import Kind, match_fields
from srfabric.rules.lb_split import reverse_fields
from srfabric_tools.simulate import walk
from tests.unit.rules.test_rules_walk import demo_fabric, udp

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


def with_reversed(fabric, *names: str):
    """``fabric`` plus ``<name>~rev`` for each function: its ports crossed the other way (a reverse chain's)."""
    for name in names:
        f = fabric.functions[name]
        fabric.add_function(ServiceFunction(name + "~rev", f.egress, f.ingress))
    return fabric


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
    fabric = with_reversed(demo_fabric(), "v1", "v4")
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


def chain_groups(state, dpid: int) -> list:
    """A switch's groups other than its default routes' (one indirect group per other switch with hosts)."""
    return [g for g in state.groups.get(dpid, []) if g.type != "indirect"]


def test_group_ids_are_per_chain_and_entries_point_at_them() -> None:
    fabric = demo_fabric()
    state = compile_state(fabric, [lb_chain(taps=("v7",))], "mac-nibble")
    ingress = fabric.hosts["h1"].dpid
    assert [(g.group_id, g.type) for g in chain_groups(state, ingress)] == [(37, "select"), (38, "all")]
    chain_entries = [e for e in state.entries[ingress] if e.kind == Kind.CHAIN and e.table == 1]
    assert {a.group_id for e in chain_entries for a in e.actions} == {38}


def first_functions(fabric, state, packets) -> list[str]:
    """The first service function each packet from h1 crosses (checking it reaches h16)."""
    seen = []
    for packet in packets:
        result = walk(fabric, state.entries, packet, *fabric_entry(fabric, "h1"), groups=state.groups)
        assert [host for host, _ in result.delivered] == ["h16"]
        seen.append(result.functions[0])
    return seen


def with_ports(fabric, sport: int, dport: int):
    packet = udp("h1", "h16", dport, fabric)
    packet.tp_src = sport
    return packet


@pytest.mark.parametrize("codec", CODECS)
def test_lb_fields_pick_the_path_and_keep_flows_that_share_them_together(codec: str) -> None:
    fabric = demo_fabric()
    state = compile_state(fabric, [lb_chain(lb_fields=("udp_src",))], codec)
    assert chain_groups(state, fabric.hosts["h1"].dpid) == []  # masked entries, no select group
    by_source = first_functions(fabric, state, [with_ports(fabric, sport, 10000) for sport in range(30000, 30400)])
    assert Counter(by_source) == {"v1": 100, "v2": 300}  # weights 1 and 3 over 16 entries: exact on 400 ports
    # Flows that agree on udp_src take one path whatever their other fields.
    for sport in (30000, 30001, 30007):
        packets = [with_ports(fabric, sport, dport) for dport in range(10000, 10050)]
        assert len(set(first_functions(fabric, state, packets))) == 1


@pytest.mark.parametrize("codec", CODECS)
def test_lb_fields_that_every_flow_shares_send_all_flows_one_way(codec: str) -> None:
    fabric = demo_fabric()
    state = compile_state(fabric, [lb_chain(lb_fields=("ip_src", "ip_dst"))], codec)
    assert len(set(first_functions(fabric, state, [with_ports(fabric, 30000 + i, 10000 + i) for i in range(50)]))) == 1


def test_lb_fields_the_traffic_lacks_leave_the_choice_to_the_switch_hash() -> None:
    fabric = demo_fabric()
    state = compile_state(fabric, [lb_chain(lb_fields=("tcp_src",))], "mac-nibble")  # a UDP chain
    assert [g.type for g in chain_groups(state, fabric.hosts["h1"].dpid)] == ["select"]


def test_lb_fields_with_a_tap_copy_every_path() -> None:
    fabric = demo_fabric()
    state = compile_state(fabric, [lb_chain(lb_fields=("udp_src",), taps=("v7",))], "mac-nibble")
    ingress = fabric.hosts["h1"].dpid
    assert [(hex(g.group_id), g.type) for g in chain_groups(state, ingress)] == [("0x40000240", "all"),
                                                                                ("0x40000241", "all")]
    for sport in range(30000, 30016):
        result = walk(fabric, state.entries, with_ports(fabric, sport, 10000), *fabric_entry(fabric, "h1"),
                      groups=state.groups)
        assert "v7" in result.functions and [host for host, _ in result.delivered] == ["h16"]


@pytest.mark.parametrize("codec", CODECS)
def test_a_symmetric_chain_on_lb_fields_sends_each_reply_back_through_its_requests_pair(codec: str) -> None:
    fabric = with_reversed(demo_fabric(), "v1", "v2")
    fields = ("udp_src", "ip_dst")
    forward = Chain("f", FlowClassifier(protocol="udp", destination_port_range=(5201, 5201)), (), "h1", "h16", 4,
                    alternatives=(Alternative(("v1",), 1), Alternative(("v2",), 3)), lb_fields=fields)
    back = Chain("b", FlowClassifier(protocol="udp", source_port_range=(5201, 5201)), (), "h16", "h1", 5,
                 alternatives=(Alternative(("v1~rev",), 1), Alternative(("v2~rev",), 3)),
                 lb_fields=reverse_fields(fields))
    state = compile_state(fabric, [forward, back], codec)
    seen = set()
    for sport in range(30000, 30032):
        there = walk(fabric, state.entries, with_ports(fabric, sport, 5201), *fabric_entry(fabric, "h1"),
                     groups=state.groups)
        reply = udp("h16", "h1", sport, fabric)
        reply.tp_src = 5201
        back_again = walk(fabric, state.entries, reply, *fabric_entry(fabric, "h16"), groups=state.groups)
        assert back_again.functions == [there.functions[0] + "~rev"], sport
        seen.add(there.functions[0])
    assert seen == {"v1", "v2"}


@pytest.mark.parametrize("lb_fields", [("ip_proto",), ("ip_proto", "udp_src"), ("udp_dst", "ip_src"), ("eth_dst",)])
def test_lb_split_keeps_what_the_classifier_fixed(lb_fields: tuple[str, ...]) -> None:
    from srfabric.rules.classify import classifier_matches
    from srfabric.rules.lb_split import split

    for base in classifier_matches(FlowClassifier(protocol="udp", destination_port_range=(5000, 5001)), in_port=3):
        parts = split(base, lb_fields, [1, 3]) or []
        assert parts
        for part, _ in parts:
            fields = match_fields(part)
            for name, value, mask in base:
                if mask is None:
                    assert fields[name] == (value, None), (name, part)
                else:
                    kept, narrower = fields[name]
                    assert narrower is None or narrower & mask == mask and kept & mask == value & mask
