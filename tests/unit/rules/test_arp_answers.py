"""ARP answered at the edge (``arp_answers``): a request for a known host comes back to the asker as that host's
reply, from its own switch, with a copy for the controller; probes, a host asking for its own address and
unknown addresses go to the controller alone. Checked by walking frames through the compiled tables."""

from __future__ import annotations

import ipaddress

import pytest

from srfabric.controller.config import ControllerConfig
from srfabric.controller.core import ControllerCore
from srfabric.controller.packets import ARP_REQUEST, ArpPacket
from srfabric.model.fabric import Host, Switch
from srfabric.rules.compile import compile_state
from srfabric_tools.simulate import Packet, walk
from tests.unit.rules.test_rules_walk import CODECS, demo_fabric

BROADCAST = 0xFFFFFFFFFFFF


def request(asker: Host, target_ip: str, sender_ip: str | None = None, eth_dst: int = BROADCAST) -> Packet:
    ip = int(ipaddress.IPv4Address(asker.ip if sender_ip is None else sender_ip))
    return Packet(asker.mac, eth_dst, 0x0806, arp={"arp_op": 1, "arp_sha": asker.mac, "arp_spa": ip,
                                                   "arp_tha": 0, "arp_tpa": int(ipaddress.IPv4Address(target_ip))})


@pytest.mark.parametrize("codec", CODECS)
def test_a_request_for_a_known_host_is_answered_at_the_askers_edge_with_its_mac(codec: str) -> None:
    fabric = demo_fabric()
    state = compile_state(fabric, [], codec)
    h1 = fabric.hosts["h1"]
    for name in ("h2", "h5", "h16"):  # on h1's switch and on others
        target = fabric.hosts[name]
        for eth_dst in (BROADCAST, target.mac):  # a new request, and the unicast probe of a stale entry
            result = walk(fabric, state.entries, request(h1, target.ip, eth_dst=eth_dst), h1.dpid, h1.port,
                          groups=state.groups)
            assert result.switches == [h1.dpid] and result.to_controller == [h1.dpid]
            [(to, reply)] = result.delivered
            assert to == "h1"
            assert (reply.eth_src, reply.eth_dst) == (target.mac, h1.mac)
            assert reply.arp == {"arp_op": 2, "arp_sha": target.mac, "arp_spa": int(ipaddress.IPv4Address(target.ip)),
                                 "arp_tha": h1.mac, "arp_tpa": int(ipaddress.IPv4Address(h1.ip))}


@pytest.mark.parametrize("codec", CODECS)
def test_probes_forgeries_its_own_address_and_unknown_addresses_go_to_the_controller_alone(codec: str) -> None:
    fabric = demo_fabric()
    state = compile_state(fabric, [], codec)
    h1, h2 = fabric.hosts["h1"], fabric.hosts["h2"]
    forged = request(h1, h2.ip)
    forged.arp["arp_sha"] = 0x01_00_5E_00_00_01  # a group MAC: its answer would go to every host of the port
    for packet in (request(h1, h2.ip, sender_ip="0.0.0.0"),  # RFC 5227: is h2's address free?
                   request(h1, h1.ip),  # gratuitous: h1 announces itself
                   request(h1, "10.99.0.1"),  # nobody the fabric knows
                   forged):
        result = walk(fabric, state.entries, packet, h1.dpid, h1.port, groups=state.groups)
        assert (result.to_controller, result.delivered) == ([h1.dpid], [])


def test_the_controller_learns_from_the_copy_and_does_not_answer_it_again() -> None:
    core = ControllerCore(ControllerConfig())
    core.fabric.add_switch(Switch(1, "s1"))
    core.switch_ready(1, [1, 2], {}, {})
    core.packet_in(1, 2, ArpPacket(ARP_REQUEST, 0x02_00_00_00_00_02, "10.0.0.2", 0, "10.0.0.2",
                                   0x02_00_00_00_00_02, BROADCAST).to_bytes())  # h2 announces itself
    asking = ArpPacket(ARP_REQUEST, 0x02_00_00_00_00_01, "10.0.0.1", 0, "10.0.0.2", 0x02_00_00_00_00_01,
                       BROADCAST).to_bytes()
    answered = core.packet_in(1, 1, asking, answered=True)
    assert core.fabric.host_by_ip("10.0.0.1") is not None and answered.sync
    assert not answered.sends  # nothing out of s1: it answered already
    asked = core.packet_in(1, 1, asking)  # a switch that did not answer it (no entry yet): the controller does
    assert [send.dpid for send in asked.sends] == [1]


@pytest.mark.parametrize("codec", CODECS)
def test_the_answer_goes_to_the_asker_its_payload_names(codec: str) -> None:
    """An SR-unaware function's frames reach the edge's host table with their source MAC rewritten (the proxy,
    under mac-nibble): its answer still goes to its own MAC."""
    fabric = demo_fabric()
    state = compile_state(fabric, [], codec)
    h1, h2 = fabric.hosts["h1"], fabric.hosts["h2"]
    packet = request(h1, h2.ip)
    packet.eth_src = 0x02_00_00_00_AB_CD
    [(_, reply)] = walk(fabric, state.entries, packet, h1.dpid, h1.port, groups=state.groups).delivered
    assert reply.eth_dst == h1.mac
