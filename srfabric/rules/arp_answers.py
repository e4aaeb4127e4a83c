"""ARP answered at the edge, for every known host: address resolution that goes on while no controller runs.

A host's neighbour entry goes stale within a minute of one-way traffic; the host then asks again (a unicast
probe, then broadcasts) and sends nothing while it waits. Answered only by the controller, every host's traffic
would stop within about a minute of the last instance going down, though the switches keep every path (fail
mode secure). So each switch with hosts answers a request for a known host's IPv4 address itself (Neutron's
Open vSwitch ARP responder does the same): the request becomes the reply in place and goes back out of the port
it came in on. A copy goes to the controller first, which learns from it as before and, seeing the cookie, does
not answer again.

Not answered here, so that the controller decides as before: probes (RFC 5227, sender 0.0.0.0), senders with a
group MAC (forged), and a host asking for its own address from its own port (a gratuitous request). IPv6
Neighbour Discovery stays with the controller: an answer needs an ICMPv6 checksum, which a switch cannot work out.

Known gaps: an address announced from another port than the fabric knows it at (an address taken over by
another MAC) is answered with the MAC known until the controller has learned the move, and a host that checks
for conflicts (RFC 5227) may see that answer as one; ports the controller holds in quarantine or past their
``max_hosts_per_port`` are answered as any other; hop-by-hop steering (a peer) still answers at the controller.

Examples
--------
>>> from srfabric.model.fabric import Host
>>> h2 = Host("h2", 0x02_00_00_00_00_02, "10.0.0.2", 1, 2)
>>> [type(action).__name__ for action in answer_entry(h2).actions][:3]
['ToController', 'MoveBits', 'SetField']
>>> answer_entry(h2) is answer_entry(Host("h2", 0x02_00_00_00_00_02, "10.0.0.2", 7, 9))  # one per address
True
"""

from __future__ import annotations

import ipaddress
from functools import lru_cache

from srfabric.model.fabric import Host
from srfabric.rules.entries import FlowEntry, Kind, MoveBits, Output, SetField, ToController, cookie, match
from srfabric.rules.pipeline import ARP_ETHERTYPE, HOST_IN, PRIO_ARP

IN_PORT = 0xFFFFFFF8  # OpenFlow's OFPP_IN_PORT: back out of the port the frame came in on
PRIO_ANSWER = PRIO_ARP + 10  # above the copy of every other ARP frame to the controller
PRIO_ASKED_BY_ITSELF = PRIO_ARP + 20  # above the answers: what the controller alone decides (each its own priority)
ARP_REQUEST, ARP_REPLY = 1, 2

PROBE = FlowEntry(HOST_IN, PRIO_ASKED_BY_ITSELF + 1, match(eth_type=ARP_ETHERTYPE, arp_spa=0), (ToController(),),
                  cookie=cookie(Kind.CONTROL))
"""An RFC 5227 probe (sender 0.0.0.0) asks whether an address is free: never answered at the edge."""

GROUP_SENDER = FlowEntry(HOST_IN, PRIO_ASKED_BY_ITSELF + 2, match(eth_type=ARP_ETHERTYPE,
                                                             arp_sha=(0x010000000000, 0x010000000000)),
                         (ToController(),), cookie=cookie(Kind.CONTROL))
"""A sender MAC with the group bit is a forgery the controller refuses: no answer, which would be broadcast."""


@lru_cache(maxsize=65536)
def _answer(mac: int, address: str) -> FlowEntry:
    ip = int(ipaddress.IPv4Address(address))  # parsed once per host: a compile asks at every switch with hosts
    actions = (
        ToController(),  # the request as it came, for learning (the controller does not answer it again)
        # Back to the asker, as its payload names it: a proxied function's frames reach this table with their
        # source MAC rewritten (``proxy``).
        MoveBits("arp_sha", 0, "eth_dst", 0, 48),
        SetField("eth_src", mac),
        SetField("arp_op", ARP_REPLY),
        MoveBits("arp_sha", 0, "arp_tha", 0, 48),
        MoveBits("arp_spa", 0, "arp_tpa", 0, 32),
        SetField("arp_sha", mac),
        SetField("arp_spa", ip),
        Output(IN_PORT),
    )
    return FlowEntry(HOST_IN, PRIO_ANSWER, match(eth_type=ARP_ETHERTYPE, arp_op=ARP_REQUEST, arp_tpa=ip), actions,
                     cookie=cookie(Kind.ANSWER))


def answer_entry(host: Host) -> FlowEntry:
    """The entry that answers a request for ``host``'s IPv4 address with its MAC: the same object at every
    switch (a fabric of many hosts holds one per host per switch with hosts, as it does default routes)."""
    return _answer(host.mac, host.ip)


@lru_cache(maxsize=65536)
def _asked_by_itself(port: int, address: str) -> FlowEntry:
    ip = int(ipaddress.IPv4Address(address))
    return FlowEntry(HOST_IN, PRIO_ASKED_BY_ITSELF, match(eth_type=ARP_ETHERTYPE, in_port=port, arp_tpa=ip),
                     (ToController(),), cookie=cookie(Kind.CONTROL))


def asked_by_itself(host: Host) -> FlowEntry:
    """At ``host``'s own switch: its request for its own address (gratuitous) goes to the controller only."""
    return _asked_by_itself(host.port, host.ip)
