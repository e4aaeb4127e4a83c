"""networking-sfc resources turned into srfabric's model: hosts, service functions and chains. Pure.

- a port pair is a service function between its ports' attachments (``binding:profile``), SR-unaware
  (proxied, addressed to its ingress port's MAC) when its correlation is None, networking-sfc's default;
- a port chain with several flow classifiers is one ``Chain`` per classifier;
- a classifier without a destination (no ``logical_destination_port`` and no
  /32 of a known host, networking-sfc's usual form) makes a chain that ends at
  its last function: frames go on from there by destination address;
- a group of several port pairs makes the chain load-balanced: one alternative per
  combination of pairs, weighted by the product of their weights;
- a ``tap_enabled`` group is a tap: it gets a copy and is not on the path;
- ``symmetric`` adds the reverse chain: source and destination swapped, functions in
  reverse order, each crossed from its egress port to its ingress port;
- a service graph edge A -> B adds, per pair of classifiers, a chain through A's and
  then B's functions for the traffic both classify, above A's own (more specific).
"""

from __future__ import annotations

import functools
import ipaddress
import itertools
import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from srfabric.codecs.macaddr import mac_from_str
from srfabric.errors import ModelError
from srfabric.model.chain import MAX_PATHS, Alternative, Chain, FlowClassifier
from srfabric.model.fabric import Endpoint, Fabric, Host, ServiceFunction, Switch, is_routable_ipv6
from srfabric.rules.entries import ipv4_number
from srfabric.rules.lb_split import reverse_fields

Record = dict[str, Any]
REVERSE = "~rev"
_mac_from_str = functools.lru_cache(maxsize=65536)(mac_from_str)  # every change translates every port again
REVERSED = {"ip_src": "ip_dst", "ip_dst": "ip_src", "l4_src": "l4_dst", "l4_dst": "l4_src"}
MAX_VARIANTS = 255  # chains made from one port chain: classifiers, reverse directions and graph joins


@dataclass
class Plan:
    """What the controller should run for the API's resources."""

    hosts: dict[str, Host] = field(default_factory=dict)
    functions: dict[str, ServiceFunction] = field(default_factory=dict)
    chains: dict[str, Chain] = field(default_factory=dict)
    owner: dict[str, str] = field(default_factory=dict)  # chain name -> port chain id


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
    return Host(name, _mac_from_str(mac, "mac_address"), ips[0], dpid, number, ip6)


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


def port_hosts(fabric: Fabric, ports: dict[str, Record], switches: dict[int, tuple[str, str]],
               names: dict[str, int] | None = None) -> dict[str, Host]:
    """Hosts for the ports that describe one (hosts the API was told about)."""
    names = names if names is not None else switch_names(fabric, switches)
    hosts = (port_host(fabric, port, switches, names) for port in ports.values())
    return {host.name: host for host in hosts if host is not None}


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


def classifier_of(fc: Record) -> FlowClassifier:
    def span(low: Any, high: Any) -> tuple[int, int] | None:
        if low is None and high is None:
            return None
        return (0 if low is None else low, 65535 if high is None else high)

    return FlowClassifier(
        ethertype=fc["ethertype"], protocol=fc["protocol"], source_ip_prefix=fc["source_ip_prefix"],
        destination_ip_prefix=fc["destination_ip_prefix"],
        source_port_range=span(fc["source_port_range_min"], fc["source_port_range_max"]),
        destination_port_range=span(fc["destination_port_range_min"], fc["destination_port_range_max"]))


def reversed_classifier(c: FlowClassifier) -> FlowClassifier:
    return FlowClassifier(c.ethertype, c.protocol, c.destination_ip_prefix, c.source_ip_prefix,
                          c.destination_port_range, c.source_port_range)


def _overlap_span(a: tuple[int, int] | None, b: tuple[int, int] | None) -> tuple[int, int] | None | bool:
    if a is None or b is None:
        return a or b
    low, high = max(a[0], b[0]), min(a[1], b[1])
    return (low, high) if low <= high else False


def _overlap_prefix(a: str | None, b: str | None) -> str | None | bool:
    if a is None or b is None:
        return a or b
    na, nb = ipaddress.ip_network(a, strict=False), ipaddress.ip_network(b, strict=False)
    if not na.overlaps(nb):
        return False
    return str(na if na.prefixlen >= nb.prefixlen else nb)


def intersect(a: FlowClassifier, b: FlowClassifier) -> FlowClassifier | None:
    """The traffic both classify, or None when they are disjoint."""
    if a.ethertype != b.ethertype or (a.protocol and b.protocol and a.protocol != b.protocol):
        return None
    parts = [_overlap_prefix(a.source_ip_prefix, b.source_ip_prefix),
             _overlap_prefix(a.destination_ip_prefix, b.destination_ip_prefix),
             _overlap_span(a.source_port_range, b.source_port_range),
             _overlap_span(a.destination_port_range, b.destination_port_range)]
    if any(part is False for part in parts):
        return None
    src, dst, sport, dport = parts
    return FlowClassifier(a.ethertype, a.protocol or b.protocol, src, dst, sport, dport)  # type: ignore[arg-type]


class Translator:
    """Builds a ``Plan`` from a snapshot's resources and the fabric the controller knows."""

    def __init__(self, resources: dict[str, dict[str, Record]], fabric: Fabric,
                 switches: dict[int, tuple[str, str]] | None = None) -> None:
        self.r = resources
        self.fabric = fabric
        self.switches = switches or {}
        self.names = switch_names(fabric, self.switches)  # every port pair resolves its ports' switches
        self.fabric_names = switch_names(fabric)  # and every classifier's ports, by the controller's names alone
        self.plan = Plan()
        self._variants: Counter[str] = Counter()  # chains made so far per port chain (counted, not searched for)
        self._hosts = HostIndex([])

    def build(self) -> Plan:
        self.plan.hosts = port_hosts(self.fabric, {k: v for k, v in self.r["ports"].items()
                                                   if not v.get("srfabric:discovered")}, self.switches, self.names)
        self._hosts = HostIndex([*self.fabric.hosts.values(), *self.plan.hosts.values()])
        for pp in self.r["port_pairs"].values():
            ingress = attachment(self.fabric, self.r["ports"][pp["ingress"]], self.switches, self.names)
            egress = attachment(self.fabric, self.r["ports"][pp["egress"]], self.switches, self.names)
            if ingress is None or egress is None:
                continue  # checked when a chain uses it
            parameters = pp["service_function_parameters"]
            proxy = parameters.get("correlation") is None  # networking-sfc's "SR-unaware"
            rewrites = frozenset(parameters.get("rewrites", ())) if proxy else frozenset()
            macs = [self._mac(self.r["ports"][pp[side]]) if proxy else None for side in ("ingress", "egress")]
            self.plan.functions[pp["id"]] = ServiceFunction(pp["id"], ingress, egress, proxy, macs[0], rewrites)
            # The reverse direction enters at the egress port; what the function rewrote one way it undoes back.
            self.plan.functions[pp["id"] + REVERSE] = ServiceFunction(
                pp["id"] + REVERSE, egress, ingress, proxy, macs[1],
                frozenset(REVERSED.get(name, name) for name in rewrites))
        depth = self._graph_depths()
        for pc in self.r["port_chains"].values():
            self._chain(pc, depth.get(pc["id"], 0))
        for sg in self.r["service_graphs"].values():
            for src, dsts in sg["port_chains"].items():
                for dst in dsts:
                    self._join(self.r["port_chains"][src], self.r["port_chains"][dst], depth)
        return self.plan

    @staticmethod
    def _mac(port: Record) -> int | None:
        return _mac_from_str(port["mac_address"], "mac_address") if port.get("mac_address") else None

    def _graph_depths(self) -> dict[str, int]:
        """How many chains lead into each chain through service graphs (joined chains rank above)."""
        parents: dict[str, set[str]] = {}
        for sg in self.r["service_graphs"].values():
            for src, dsts in sg["port_chains"].items():
                for dst in dsts:
                    parents.setdefault(dst, set()).add(src)
        depth: dict[str, int] = {}

        def walk(chain: str) -> int:
            if chain not in depth:
                depth[chain] = 1 + max((walk(p) for p in parents.get(chain, ())), default=-1)
            return depth[chain]

        for chain in parents:
            walk(chain)
        return depth

    def _endpoints(self, pc: Record, fc: Record, classifier: FlowClassifier) -> tuple[str, str | None]:
        what = f"flow_classifiers[{pc['flow_classifiers'].index(fc['id'])}]"
        hosts = self._hosts
        source = (hosts.of_port(self.fabric, self.r["ports"][fc["logical_source_port"]], self.fabric_names)
                  if fc["logical_source_port"] else hosts.by_prefix(fc["source_ip_prefix"]))
        if source is None:
            raise ModelError(what, f"classifier {fc['id']} needs a logical_source_port attached to a known host "
                                   "(or a /32 source_ip_prefix of one)")
        if not fc["logical_destination_port"]:
            # A known host's /32, or no destination: the chain ends at its last function, and frames go on from
            # there to wherever their destination address leads.
            return source, hosts.by_prefix(fc["destination_ip_prefix"])
        destination = hosts.of_port(self.fabric, self.r["ports"][fc["logical_destination_port"]], self.fabric_names)
        if destination is None:
            raise ModelError(what, f"classifier {fc['id']}'s logical_destination_port is not attached to a known "
                                   "host (leave it out for a chain that ends at its last function)")
        return source, destination

    def _groups(self, pc: Record) -> tuple[list[list[tuple[str, int]]], list[str], tuple[str, ...]]:
        """The chain's steps (pairs with weights, in order), its taps and its hash fields."""
        steps, taps, fields = [], [], []
        for index, group_id in enumerate(pc["port_pair_groups"]):
            group = self.r["port_pair_groups"][group_id]
            members = []
            for pair_id in group["port_pairs"]:
                if pair_id not in self.plan.functions:
                    raise ModelError(f"port_pair_groups[{index}]", f"port pair {pair_id} has a port without a "
                                     "binding:profile {switch, port} the controller can resolve")
                weight = self.r["port_pairs"][pair_id]["service_function_parameters"].get("weight", 1)
                members.append((pair_id, weight))
            if not members:
                raise ModelError(f"port_pair_groups[{index}]", f"group {group_id} has no port pairs")
            if group["tap_enabled"]:
                taps.append(members[0][0])
            else:
                members = [(name, weight) for name, weight in members if weight > 0]
                if not members:
                    raise ModelError(f"port_pair_groups[{index}]", f"every port pair of group {group_id} has weight 0")
                steps.append(members)
            for name in group["port_pair_group_parameters"].get("lb_fields", []):
                if name not in fields:
                    fields.append(name)
        return steps, taps, tuple(fields)

    def _alternatives(self, steps: list[list[tuple[str, int]]], reverse: bool = False) -> tuple[Alternative, ...]:
        combos = math.prod(len(step) for step in steps)
        if combos > MAX_PATHS:
            raise ModelError("port_pair_groups", f"{combos} combinations of port pairs; at most {MAX_PATHS} paths")
        alternatives = []
        for combo in itertools.product(*steps):
            names = tuple(name for name, _ in combo)
            if reverse:
                names = tuple(name + REVERSE for name in reversed(names))
            alternatives.append(Alternative(names, math.prod(weight for _, weight in combo)))
        return tuple(alternatives)

    def _add(self, pc: Record, chain: Chain) -> None:
        """Keep ``chain`` for port chain ``pc``, with an id of its own: the port chain's, plus which of its chains."""
        variants = self._variants[pc["id"]]
        if variants >= MAX_VARIANTS:
            raise ModelError("flow_classifiers", f"port chain {pc['id']} would need more than {MAX_VARIANTS} "
                                                 "chains (classifiers x directions x graph joins)")
        self._variants[pc["id"]] += 1
        chain = replace(chain, chain_id=(variants + 1) << 16 | pc["chain_id"])
        self.plan.chains[chain.name] = chain
        self.plan.owner[chain.name] = pc["id"]

    def _chain(self, pc: Record, priority: int) -> None:
        steps, taps, fields = self._groups(pc)
        for fc_id in pc["flow_classifiers"]:
            fc = self.r["flow_classifiers"][fc_id]
            classifier = classifier_of(fc)
            source, destination = self._endpoints(pc, fc, classifier)
            name = f"{pc['id']}/{fc_id}"
            self._add(pc, Chain(name, classifier, (), source, destination, 0, self._alternatives(steps), tuple(taps),
                                fields, priority))
            if pc["chain_parameters"].get("symmetric"):
                rewriting = sorted({n for step in steps for n, _ in step if self.plan.functions[n].rewrites})
                if rewriting:
                    raise ModelError("chain_parameters.symmetric", f"port pair {rewriting[0]} rewrites "
                                     f"{', '.join(sorted(self.plan.functions[rewriting[0]].rewrites))}: replies go "
                                     "to the rewritten address, which the reverse chain cannot classify; leave "
                                     "symmetric out (replies reach the function by its address)")
                if destination is None:
                    raise ModelError("chain_parameters.symmetric", f"classifier {fc_id} has no destination (no "
                                     "logical_destination_port, no /32 of a known host): the reverse chain would "
                                     "have nowhere to start")
                self._add(pc, Chain(name + REVERSE, reversed_classifier(classifier), (), destination, source, 0,
                                    self._alternatives(steps, reverse=True), (), reverse_fields(fields), priority))

    def _join(self, src: Record, dst: Record, depth: dict[str, int]) -> None:
        """Traffic that ``src`` classifies and then ``dst`` does: through both chains' functions."""
        src_steps, _, fields = self._groups(src)
        dst_steps, _, _ = self._groups(dst)
        for a_id, b_id in itertools.product(src["flow_classifiers"], dst["flow_classifiers"]):
            a, b = self.r["flow_classifiers"][a_id], self.r["flow_classifiers"][b_id]
            both = intersect(classifier_of(a), classifier_of(b))
            if both is None:
                continue
            source, _ = self._endpoints(src, a, both)
            _, destination = self._endpoints(dst, b, both)
            self._add(src, Chain(f"{src['id']}/{a_id}>{dst['id']}/{b_id}", both, (), source, destination, 0,
                                 self._alternatives(src_steps + dst_steps), (), fields,
                                 depth.get(dst["id"], 0) + 1))


def translate(resources: dict[str, dict[str, Record]], fabric: Fabric,
              switches: dict[int, tuple[str, str]] | None = None) -> Plan:
    return Translator(resources, fabric, switches).build()
