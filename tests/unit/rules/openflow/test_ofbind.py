"""Every compiled entry binds to an OpenFlow 1.3 message that serializes and parses back."""

from __future__ import annotations

import pytest
from os_ken.ofproto import ofproto_parser

from srfabric.model import Chain, FlowClassifier
from srfabric.model.topo import fat_tree
from srfabric.rules.compile import compile_fabric
from srfabric.rules.entries import FlowEntry, Output, match
from srfabric.rules.openflow.ofbind import PROTOCOL, bind_match, flow_add, flow_delete


@pytest.mark.parametrize("codec", ["mac-nibble", "mac-vlan-mpls"])
def test_every_entry_round_trips(codec: str) -> None:
    topo = fat_tree(4)
    topo.add_function("v1", "e3")
    chain = Chain("c", FlowClassifier(protocol="tcp", destination_port_range=(80, 90)), ("v1",), "h1", "h16", 5)
    tables = compile_fabric(topo.to_fabric(), [chain], codec)
    for entries in tables.values():
        for xid, entry in enumerate(entries, start=1):
            for msg in (flow_add(entry), flow_delete(entry)):
                msg.set_xid(xid)
                msg.serialize()
                parsed = ofproto_parser.msg(PROTOCOL, 4, msg.msg_type, len(msg.buf), xid, bytes(msg.buf))
                assert parsed.priority == entry.priority and parsed.table_id == entry.table


def test_nicira_only_fields_keep_their_prerequisite_first() -> None:
    bound = bind_match(match(eth_type=0x8847, mpls_ttl=3))
    bound.serialize(bytearray(), 0)
    names = [name for name, _ in bound.items()]
    assert names.index("eth_type_nxm") < names.index("mpls_ttl")


@pytest.mark.parametrize("lb_fields", [("eth_src",), ("ip_src", "ip_dst"), ("tcp_src", "tcp_dst"), ("ip_proto",)])
def test_lb_split_matches_read_back_as_sent(lb_fields: tuple[str, ...]) -> None:
    """A switch's read-back of the masked entries equals them, so a reconnect finds nothing to fix."""
    from srfabric.rules.classify import classifier_matches
    from srfabric.rules.lb_split import split
    from srfabric.rules.openflow.readback import match_from_ofp

    classifier = FlowClassifier(protocol="tcp", destination_port_range=(8000, 8099), source_ip_prefix="10.0.0.0/8")
    for base in classifier_matches(classifier, in_port=3):
        for part, _ in split(base, lb_fields, [1, 3]) or []:
            msg = flow_add(FlowEntry(1, 100, part, (Output(2),)))
            msg.set_xid(1)
            msg.serialize()
            parsed = ofproto_parser.msg(PROTOCOL, 4, msg.msg_type, len(msg.buf), 1, bytes(msg.buf))
            assert match_from_ofp(parsed.match) == part
