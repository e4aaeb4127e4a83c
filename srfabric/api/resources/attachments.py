"""Where the API's ports are: a ``binding:profile``'s switch and port resolved against the fabric, the hosts ports
stand for, and an index of them by attachment and address. Pure.
"""

from __future__ import annotations

import functools
import ipaddress
from collections.abc import Iterable
from typing import Any

from srfabric.codecs.macaddr import mac_from_str
from srfabric.model.fabric import Endpoint, Fabric, Host, Switch, is_routable_ipv6
from srfabric.rules.entries import ipv4_number

Record = dict[str, Any]
mac_number = functools.lru_cache(maxsize=65536)(mac_from_str)  # every change translates every port again


def switch_names(fabric: Fabric, switches: dict[int, tuple[str, str]] | None = None) -> dict[str, int]:
    """Each switch name a ``binding:profile`` may give, to its datapath id: the controller's names first, then
    the ones the API was told about."""
    names = {name: dpid for dpid, (name, _) in (switches or {}).items()}
    names.update((switch.name, dpid) for dpid, switch in fabric.switches.items())
    return names


def resolve_switch(fabric: Fabric, value: Any, switches: dict[int, tuple[str, str]] | None = None,
                   names: dict[str, int] | None = None) -> int | None:
    """A datapath id for a ``binding:profile`` switch: a name the controller knows, or a datapath id
    (``names``: :func:`switch_names`, made once by a caller that resolves many)."""
    if isinstance(value, str):
        dpid = (names if names is not None else switch_names(fabric, switches)).get(value)
        if dpid is not None:
            return dpid
        try:
            return int(value, 0)
        except ValueError:
            return None
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return None


def attachment(fabric: Fabric, port: Record, switches: dict[int, tuple[str, str]] | None = None,
               names: dict[str, int] | None = None) -> Endpoint | None:
    profile = port.get("binding:profile") or {}
    number = profile.get("port")
    dpid = resolve_switch(fabric, profile.get("switch"), switches, names)
    if dpid is None or not isinstance(number, int) or isinstance(number, bool):
        return None
    return dpid, number


def port_host(fabric: Fabric, port: Record, switches: dict[int, tuple[str, str]] | None = None,
              names: dict[str, int] | None = None) -> Host | None:
    """The host a port describes, when it has an attachment, a MAC and an IPv4 address."""
    where = attachment(fabric, port, switches, names)
    mac = port.get("mac_address")
    if where is None or not mac:
        return None
    addresses = tuple(ip.get("ip_address") for ip in port.get("fixed_ips", []))
    name = port["name"] or f"port-{port['id'][:8]}"
    try:
        return _host(name, mac, addresses, *where)
    except TypeError:  # an address that is not even hashable (not one): worked out without the cache
        return _host.__wrapped__(name, mac, addresses, *where)


@functools.lru_cache(maxsize=65536)  # every change of the API translates every port again
def _host(name: str, mac: str, addresses: tuple[Any, ...], dpid: int, number: int) -> Host | None:
    ips = [address for address in addresses if _is_ipv4(address)]
    if not ips:
        return None
    ip6 = tuple(str(ipaddress.IPv6Address(address)) for address in addresses if is_routable_ipv6(address))
    return Host(name, mac_number(mac, "mac_address"), ips[0], dpid, number, ip6)


def restore_fabric(fabric: Fabric, switches: dict[int, tuple[str, str]], links: dict[Endpoint, Endpoint],
                   ports: Iterable[Record]) -> None:
    """What a start knows before the switches tell it: the kept switches, their links and the hosts learned
    before (ports marked ``srfabric:discovered``), put in ``fabric``."""
    for dpid, (name, role) in switches.items():
        fabric.add_switch(Switch(dpid, name, role))  # type: ignore[arg-type]
    for a, b in links.items():
        if a[0] in fabric.switches and b[0] in fabric.switches:
            fabric.add_link(a, b)
    names = switch_names(fabric)
    for port in ports:
        if port.get("srfabric:discovered"):
            host = port_host(fabric, port, names=names)
            if host is not None and host.dpid in fabric.switches:
                fabric.add_host(host)


def _is_ipv4(text: Any) -> bool:
    try:
        ipv4_number(text)  # cached: every change of the API translates every port again
    except (ValueError, TypeError):  # not an address, or not even hashable
        return False
    return True


class HostIndex:
    """The hosts a classifier's ports and prefixes may name, in order, indexed once per translation (every change
    translates every chain again): by attachment and by address, each to the first host that has it.

    >>> index = HostIndex([Host("h1", 1, "10.0.0.1", 1, 1), Host("h2", 2, "10.0.0.2", 1, 2, ("fd00::2",))])
    >>> index.by_prefix("10.0.0.2/32"), index.by_prefix("fd00::2/128"), index.by_prefix("10.0.0.0/24")
    ('h2', 'h2', None)
    """

    def __init__(self, hosts: list[Host]) -> None:
        self.hosts = hosts
        self.places: dict[Endpoint, int] = {}
        self.addresses: dict[str, int] = {}
        for position, host in enumerate(hosts):
            self.places.setdefault((host.dpid, host.port), position)
            for address in (host.ip, *host.ip6):
                self.addresses.setdefault(address, position)

    def of_port(self, fabric: Fabric, port: Record, names: dict[str, int] | None = None) -> str | None:
        """The host a port stands for: the first at its attachment (its switch named as the controller names it;
        ``names``: ``switch_names(fabric)``) or with one of its addresses."""
        where = attachment(fabric, port, names=names)
        found = [self.places.get(where)] if where is not None else []
        found += [self.addresses.get(address) for address in (ip.get("ip_address") for ip in port.get("fixed_ips", []))
                  if isinstance(address, str)]
        positions = [position for position in found if position is not None]
        return self.hosts[min(positions)].name if positions else None

    def by_prefix(self, prefix: str | None) -> str | None:
        """The first host with the one address of a /32 (or /128) ``prefix``; None for a wider one."""
        address = _single_address(prefix) if isinstance(prefix, str) and prefix else None
        position = self.addresses.get(address) if address is not None else None
        return None if position is None else self.hosts[position].name


@functools.lru_cache(maxsize=65536)
def _single_address(prefix: str) -> str | None:
    network = ipaddress.ip_network(prefix, strict=False)
    return str(network.network_address) if network.num_addresses == 1 else None
