"""Where each host is: ARP and Neighbour Discovery from hosts and SR-unaware functions teach the fabric its hosts
(their MAC, port and addresses); the controller answers for the hosts it knows and floods the rest only out of
host ports. Each handler returns the packet-outs to send (``Effects``). Pure: no I/O.
"""

from __future__ import annotations

import ipaddress
import logging
from collections import Counter
from collections.abc import Collection, Mapping
from dataclasses import replace

from srfabric.controller.config import ControllerConfig
from srfabric.controller.flows import Link
from srfabric.controller.neighbours import SOLICIT, parse_nd
from srfabric.controller.outbox import Effects, Send
from srfabric.controller.packets import ARP_REQUEST, lldp_frame, parse_arp
from srfabric.model.fabric import Fabric, Host, is_routable_ipv6
from srfabric.rules.openflow.ofbind import packet_out

log = logging.getLogger("srfabric.controller.controller")  # one logger for the controller's own story

MAX_IP6 = 8  # IPv6 addresses one host may have: each costs an entry at every ingress
MAX_UNCLAIMED = 1024  # (MAC, port)s whose IPv6 addresses wait for their ARP


def plausible_host(mac: int, ip: str) -> bool:
    """A host's MAC is unicast and not zero, and its address one a host can hold (not multicast, broadcast,
    loopback or unspecified): an ARP saying otherwise is forged or broken, and teaches nothing.

    >>> plausible_host(0x020000000001, "10.0.0.1"), plausible_host(0x330000000001, "10.0.0.1")
    (True, False)
    >>> plausible_host(0x020000000001, "224.0.0.5"), plausible_host(0x020000000001, "255.255.255.255")
    (False, False)
    """
    address = ipaddress.IPv4Address(ip)
    return mac != 0 and not (mac >> 40) & 1 and not (address.is_multicast or address.is_loopback
                                                     or address.is_unspecified or ip == "255.255.255.255")


class HostLearning:
    """Hosts learned from ARP and ND; IPv6 addresses seen before their host's ARP wait in ``unclaimed``."""

    def __init__(self, fabric: Fabric, config: ControllerConfig) -> None:
        self.fabric = fabric
        self.config = config
        self.unclaimed: dict[tuple[int, int, int], set[str]] = {}  # (MAC, switch, port): ND before ARP
        self.refused: Counter[tuple[int, int]] = Counter()  # (switch, port) -> ARP refused past the hosts' cap
        self._counted_at = -1  # the fabric version the hosts per port were counted at
        self._on_port: Counter[tuple[int, int]] = Counter()
        self._macs: set[tuple[int, int, int]] = set()

    def arp_in(self, dpid: int, in_port: int, data: bytes, ports: Mapping[int, Collection[int]],
               quarantine: Collection[Link], answered: bool = False) -> Effects:
        """``ports``: each connected switch's ports; ``quarantine``: ports where nothing is learned; ``answered``:
        the switch answered the request itself (its copy is for learning)."""
        arp = parse_arp(data)
        fabric = self.fabric
        effects = Effects()
        # An SR-unaware function (a router, a NAT) asks for its next hops as a host does, and its own addresses
        # (a NAT's outside one, where replies go) are learned; a known host is never moved onto its port.
        proxied = (dpid, in_port) in fabric.proxied_ports()
        if (fabric.port_role(dpid, in_port) != "host" and not proxied) or arp.sender_ip == "0.0.0.0" \
                or (dpid, in_port) in quarantine or not plausible_host(arp.sender_mac, arp.sender_ip):
            return effects  # probes (RFC 5227) say nothing about where a host is; nor does a forgery
        known = fabric.host_by_ip(arp.sender_ip)
        moved = known is not None and (known.dpid, known.port) != (dpid, in_port)
        if (known is None or (known.mac, known.dpid, known.port) != (arp.sender_mac, dpid, in_port)) \
                and not (proxied and (moved or arp.sender_ip == fabric.gateway_ip)):
            if self._port_full(dpid, in_port, known, arp.sender_mac):
                return effects
            name = self.config.host_names.get(arp.sender_mac, known.name if known else f"host-{arp.sender_ip}")
            # IPv6 addresses its Neighbour Discovery showed before its ARP did are its own too.
            ip6 = known.ip6 if known is not None and (known.dpid, known.port) == (dpid, in_port) else ()
            waiting = sorted(self.unclaimed.pop((arp.sender_mac, dpid, in_port), set()))
            ip6 += tuple(a for a in waiting if a not in ip6 and fabric.host_by_ip6(a) is None)[:MAX_IP6]
            fabric.add_host(Host(name, arp.sender_mac, arp.sender_ip, dpid, in_port, ip6))
            effects.sync = True
        if arp.sender_ip == arp.target_ip:
            return effects  # gratuitous: learning was all
        target = fabric.host_by_ip(arp.target_ip)
        if arp.op == ARP_REQUEST:
            if target is None:
                self.flood_to_hosts(effects, data, (dpid, in_port), ports, quarantine)
            elif not answered:  # else the switch answered it already
                effects.send(dpid, packet_out(in_port, arp.reply(target.mac).to_bytes()))
        elif target is not None and target.mac == arp.target_mac and target.dpid in ports:
            effects.send(target.dpid, packet_out(target.port, data))
        return effects

    def _port_full(self, dpid: int, in_port: int, known: Host | None, mac: int) -> bool:
        """True, counted and logged (first time per port), when the port has taught its ``max_hosts_per_port``
        hosts already and this would be another: a host already there (its address or its MAC) may change."""
        here = (dpid, in_port)
        if known is not None and (known.dpid, known.port) == here:
            return False
        if self._counted_at != self.fabric.version:  # a flood that is refused changes nothing: counted once
            self._counted_at = self.fabric.version
            self._on_port = Counter((host.dpid, host.port) for host in self.fabric.hosts.values())
            self._macs = {(host.mac, host.dpid, host.port) for host in self.fabric.hosts.values()}
        limit = self.config.max_hosts_per_port
        if self._on_port[here] < limit or (mac, dpid, in_port) in self._macs:
            return False
        if not self.refused[here]:
            log.warning("switch %#x port %d: teaches no more hosts (its %d already); ARP from others refused",
                        dpid, in_port, limit)
        self.refused[here] += 1
        return True

    def nd_in(self, dpid: int, in_port: int, data: bytes, ports: Mapping[int, Collection[int]],
              quarantine: Collection[Link]) -> Effects:
        """IPv6's ARP: a dual-stack host's addresses are learned from its solicitations (their source) and
        advertisements (their target), added to the host its IPv4 ARP taught (same MAC, same port); a
        solicitation for a known address is answered, others are flooded to host ports, and an advertisement
        goes back to the host that asked."""
        nd = parse_nd(data)
        here = (dpid, in_port)
        fabric = self.fabric
        effects = Effects()
        if (fabric.port_role(*here) != "host" and here not in fabric.proxied_ports()) or here in quarantine:
            return effects
        learned = nd.src if nd.kind == SOLICIT else nd.target
        mac = nd.lladdr if nd.lladdr is not None else nd.eth_src
        owner = next((h for h in fabric.hosts.values() if (h.mac, h.dpid, h.port) == (mac, *here)), None)
        if is_routable_ipv6(learned):
            effects.sync |= self.claim(owner, learned, (mac, *here))
        if nd.kind == SOLICIT:
            target = fabric.host_by_ip6(nd.target)
            if nd.src == "::" and target is not None and (target.mac == mac or (target.dpid, target.port) == here):
                return effects  # its owner checking it is still unique (DAD): an answer would make it give it up
            if target is not None:
                effects.send(dpid, packet_out(in_port, nd.advert_for(target.mac)))
            else:
                self.flood_to_hosts(effects, data, here, ports, quarantine)
            return effects
        asker = next((h for h in fabric.hosts.values() if h.mac == nd.eth_dst), None)
        if asker is not None and asker.dpid in ports:
            effects.send(asker.dpid, packet_out(asker.port, data))
        return effects

    def claim(self, owner: Host | None, address: str, where: tuple[int, int, int]) -> bool:
        """``address`` is ``owner``'s now (taken from any host that had it, as ARP moves an IPv4 address), or,
        with no host known there yet, kept for the host that ARP will show at ``where`` (MAC, switch, port).
        True when a host changed."""
        fabric = self.fabric
        if owner is None:
            waiting = self.unclaimed.get(where)
            if (waiting is None and len(self.unclaimed) < MAX_UNCLAIMED) or (
                    waiting is not None and len(waiting) < MAX_IP6):
                self.unclaimed.setdefault(where, set()).add(address)
            return False
        if address in owner.ip6 or len(owner.ip6) >= MAX_IP6:
            return False
        before = fabric.host_by_ip6(address)
        if before is not None:
            fabric.add_host(replace(before, ip6=tuple(a for a in before.ip6 if a != address)))
        fabric.add_host(replace(fabric.hosts[owner.name], ip6=(*owner.ip6, address)))
        return True

    def flood_to_hosts(self, effects: Effects, data: bytes, exclude: Link, ports: Mapping[int, Collection[int]],
                       quarantine: Collection[Link]) -> None:
        for dpid, numbers in ports.items():
            out = tuple(packet_out(port, data) for port in numbers
                        if (dpid, port) != exclude and self.fabric.port_role(dpid, port) == "host"
                        and (dpid, port) not in quarantine)
            if out:
                effects.sends.append(Send(dpid, out))

    def lldp_out(self, dpid: int, ports: Collection[int]) -> Send:
        """One LLDP frame out of each of the switch's ports but service functions' and learned hosts': a host has
        no use for it, and must not be handed frames signed by the controller to replay elsewhere."""
        key = self.config.lldp_key
        quiet = set(self.fabric.function_ports()) | {(host.dpid, host.port) for host in self.fabric.hosts.values()}
        now = self.config.lldp_clock()
        return Send(dpid, tuple(packet_out(port, lldp_frame(dpid, port, key=key, sent_ns=now)) for port in ports
                                if (dpid, port) not in quiet))
