"""How the controller learns the fabric from the switches: LLDP between switches (links, and their aging when
LLDP stops) and ARP from hosts and SR-unaware functions (where each host is; the controller answers for the
hosts it knows and floods the rest only out of host ports).

A mixin of :class:`srfabric.controller.controller.Controller`, which holds the state named below.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from srfabric.controller.neighbours import SOLICIT, parse_nd
from srfabric.controller.packets import ARP_REQUEST, lldp_frame, parse_arp, parse_lldp
from srfabric.model.fabric import Fabric, Host, is_routable_ipv6
from srfabric.southbound.channel import SwitchConnection
from srfabric.southbound.ofbind import packet_out

if TYPE_CHECKING:
    from srfabric.controller.controller import ControllerConfig

log = logging.getLogger("srfabric.controller.controller")  # one logger for the controller's own story
MAX_IP6 = 8  # IPv6 addresses one host may have: each costs an entry at every ingress
MAX_UNCLAIMED = 1024  # (MAC, port)s whose IPv6 addresses wait for their ARP


class Discovery:
    """LLDP and ARP handling; the controller's state it works on is declared here for the type checker."""

    fabric: Fabric
    config: ControllerConfig
    switches: dict[int, SwitchConnection]
    _lldp_seen: dict[tuple[int, int], int]
    _aged: dict[frozenset[tuple[int, int]], int]
    _quarantine: set[tuple[int, int]]
    _unclaimed_ip6: dict[tuple[int, int, int], set[str]]
    _dormant_up: dict[tuple[int, int], int]
    _dirty: asyncio.Event
    _urgent: asyncio.Event
    following: bool
    _forget_flows_over: Callable[[set[tuple[int, int]]], None]

    def _lldp_in(self, conn: SwitchConnection, in_port: int, data: bytes) -> None:
        peer = parse_lldp(data)
        here = (conn.dpid, in_port)
        functions = self.fabric.function_ports()
        if peer[0] not in self.fabric.switches or here in functions or peer in functions:
            return
        if any((h.dpid, h.port) in (here, peer) for h in self.fabric.hosts.values()):
            return  # a port with a learned host never becomes a trusted fabric port
        self._lldp_seen[here] = self.config.clock()
        if self.fabric.links.get(here) == peer:
            return
        pair = frozenset((here, peer))
        aged = self._aged.get(pair)
        if aged is not None:  # it went silent in one direction: one direction heard again is not enough
            if self._lldp_seen.get(peer, -1) < aged:
                return
            del self._aged[pair]
            self._quarantine -= pair
        else:
            self._lldp_seen.pop(peer, None)  # the other direction's time starts now, not at an old sighting
        for known in (here, peer):
            self._dormant_up.pop(known, None)
        log.info("link %#x:%d - %#x:%d is up (%s)", *peer, *here, "LLDP both ways" if aged else "LLDP")
        self.fabric.add_link(peer, here)
        self._dirty.set()

    def age_links(self, now_ns: int) -> list[tuple[int, int]]:
        """Take down every link between connected switches on whose either end no LLDP arrived for
        ``lldp_missed`` intervals (a link first looked at gets the whole time); the ends taken down."""
        if self.config.lldp_missed <= 0:
            return []
        horizon = now_ns - int(self.config.lldp_missed * self.config.lldp_interval * 1e9)
        down = []
        for end, peer in list(self.fabric.links.items()):
            if end[0] not in self.switches or peer[0] not in self.switches or end not in self.fabric.links:
                continue  # a switch not connected sends no LLDP; its links go with its connection
            if self._lldp_seen.setdefault(end, now_ns) < horizon:
                log.warning("link %#x:%d - %#x:%d is down: no LLDP for %d intervals", *peer, *end,
                            self.config.lldp_missed)
                self.fabric.remove_link(end)
                self._forget_flows_over({end, peer})
                self._aged[frozenset((end, peer))] = now_ns
                self._quarantine |= {end, peer}
                for gone in (end, peer):
                    self._lldp_seen.pop(gone, None)
                down.append(end)
        for end, since in list(self._dormant_up.items()):  # carrier back, but no LLDP: not a fabric link now
            if end not in self.fabric.dormant:
                del self._dormant_up[end]
            elif since < horizon:
                log.warning("port %#x:%d is up without LLDP: no longer a fabric port", *end)
                self.fabric.remove_link(end)
                del self._dormant_up[end]
                down.append(end)
        if down:
            self._urgent.set()
            self._dirty.set()
        return down

    def _arp_in(self, conn: SwitchConnection, in_port: int, data: bytes) -> None:
        arp = parse_arp(data)
        # An SR-unaware function (a router, a NAT) asks for its next hops as a host does, and its own addresses
        # (a NAT's outside one, where replies go) are learned; a known host is never moved onto its port.
        proxied = (conn.dpid, in_port) in self.fabric.proxied_ports()
        if (self.fabric.port_role(conn.dpid, in_port) != "host" and not proxied) or arp.sender_ip == "0.0.0.0" \
                or (conn.dpid, in_port) in self._quarantine:
            return  # probes (RFC 5227) say nothing about where a host is
        known = self.fabric.host_by_ip(arp.sender_ip)
        moved = known is not None and (known.dpid, known.port) != (conn.dpid, in_port)
        if (known is None or (known.mac, known.dpid, known.port) != (arp.sender_mac, conn.dpid, in_port)) \
                and not (proxied and (moved or arp.sender_ip == self.fabric.gateway_ip)):
            name = self.config.host_names.get(arp.sender_mac, known.name if known else f"host-{arp.sender_ip}")
            # IPv6 addresses its Neighbour Discovery showed before its ARP did are its own too.
            ip6 = known.ip6 if known is not None and (known.dpid, known.port) == (conn.dpid, in_port) else ()
            waiting = sorted(self._unclaimed_ip6.pop((arp.sender_mac, conn.dpid, in_port), set()))
            ip6 += tuple(a for a in waiting if a not in ip6 and self.fabric.host_by_ip6(a) is None)[:MAX_IP6]
            self.fabric.add_host(Host(name, arp.sender_mac, arp.sender_ip, conn.dpid, in_port, ip6))
            self._dirty.set()
        if arp.sender_ip == arp.target_ip:
            return  # gratuitous: learning was all
        target = self.fabric.host_by_ip(arp.target_ip)
        if arp.op == ARP_REQUEST:
            if target is not None:
                conn.send(packet_out(in_port, arp.reply(target.mac).to_bytes()))
            else:
                self._flood_to_hosts(data, exclude=(conn.dpid, in_port))
        elif target is not None and target.mac == arp.target_mac:
            out = self.switches.get(target.dpid)
            if out is not None:
                out.send(packet_out(target.port, data))

    def _nd_in(self, conn: SwitchConnection, in_port: int, data: bytes) -> None:
        """IPv6's ARP: a dual-stack host's addresses are learned from its solicitations (their source) and
        advertisements (their target), added to the host its IPv4 ARP taught (same MAC, same port); a
        solicitation for a known address is answered, others are flooded to host ports, and an advertisement
        goes back to the host that asked."""
        nd = parse_nd(data)
        here = (conn.dpid, in_port)
        if (self.fabric.port_role(*here) != "host" and here not in self.fabric.proxied_ports()) \
                or here in self._quarantine:
            return
        learned = nd.src if nd.kind == SOLICIT else nd.target
        mac = nd.lladdr if nd.lladdr is not None else nd.eth_src
        owner = next((h for h in self.fabric.hosts.values() if (h.mac, h.dpid, h.port) == (mac, *here)), None)
        if is_routable_ipv6(learned):
            self._claim(owner, learned, (mac, *here))
        if nd.kind == SOLICIT:
            target = self.fabric.host_by_ip6(nd.target)
            if nd.src == "::" and target is not None and (target.mac == mac or (target.dpid, target.port) == here):
                return  # its owner checking it is still unique (DAD): an answer would make it give it up
            if target is not None:
                conn.send(packet_out(in_port, nd.advert_for(target.mac)))
            else:
                self._flood_to_hosts(data, exclude=here)
            return
        asker = next((h for h in self.fabric.hosts.values() if h.mac == nd.eth_dst), None)
        out = self.switches.get(asker.dpid) if asker is not None else None
        if asker is not None and out is not None:
            out.send(packet_out(asker.port, data))

    def _claim(self, owner: Host | None, address: str, where: tuple[int, int, int]) -> None:
        """``address`` is ``owner``'s now (taken from any host that had it, as ARP moves an IPv4 address), or,
        with no host known there yet, kept for the host that ARP will show at ``where`` (MAC, switch, port)."""
        if owner is None:
            waiting = self._unclaimed_ip6.get(where)
            if (waiting is None and len(self._unclaimed_ip6) < MAX_UNCLAIMED) or (
                    waiting is not None and len(waiting) < MAX_IP6):
                self._unclaimed_ip6.setdefault(where, set()).add(address)
            return
        if address in owner.ip6 or len(owner.ip6) >= MAX_IP6:
            return
        before = self.fabric.host_by_ip6(address)
        if before is not None:
            self.fabric.add_host(replace(before, ip6=tuple(a for a in before.ip6 if a != address)))
        self.fabric.add_host(replace(self.fabric.hosts[owner.name], ip6=(*owner.ip6, address)))
        self._dirty.set()

    def _flood_to_hosts(self, data: bytes, exclude: tuple[int, int]) -> None:
        for dpid, conn in self.switches.items():
            for port in conn.ports:
                if ((dpid, port) != exclude and self.fabric.port_role(dpid, port) == "host"
                        and (dpid, port) not in self._quarantine):
                    conn.send(packet_out(port, data))

    def _send_lldp(self, conn: SwitchConnection) -> None:
        functions = self.fabric.function_ports()
        for port in conn.ports:
            if (conn.dpid, port) not in functions:
                conn.send(packet_out(port, lldp_frame(conn.dpid, port)))

    async def _lldp_loop(self) -> None:
        while True:
            await asyncio.sleep(self.config.lldp_interval)
            if self.following:
                continue  # a SLAVE may not send packets; the leader discovers
            self.age_links(self.config.clock())
            for conn in list(self.switches.values()):
                with contextlib.suppress(Exception):
                    self._send_lldp(conn)
