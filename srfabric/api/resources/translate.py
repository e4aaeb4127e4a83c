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

import itertools
import math
from collections import Counter
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from srfabric.api.resources.attachments import HostIndex, attachment, mac_number, port_host, switch_names
from srfabric.api.resources.classifiers import classifier_of, intersect, reversed_classifier
from srfabric.api.resources.translations import Translations
from srfabric.errors import ModelError, SrfabricError
from srfabric.model.chain import MAX_PATHS, Alternative, Chain, FlowClassifier
from srfabric.model.fabric import Fabric, Host, ServiceFunction
from srfabric.rules.lb_split import reverse_fields

Record = dict[str, Any]
REVERSE = "~rev"
REVERSED = {"ip_src": "ip_dst", "ip_dst": "ip_src", "l4_src": "l4_dst", "l4_dst": "l4_src"}
MAX_VARIANTS = 255  # chains made from one port chain: classifiers, reverse directions and graph joins


@dataclass
class Plan:
    """What the controller should run for the API's resources."""

    hosts: dict[str, Host] = field(default_factory=dict)
    functions: dict[str, ServiceFunction] = field(default_factory=dict)
    chains: dict[str, Chain] = field(default_factory=dict)
    owner: dict[str, str] = field(default_factory=dict)  # chain name -> port chain id

    def changed(self, held: Mapping[str, Chain]) -> list[str]:
        """The names of this plan's chains that ``held`` does not hold as they are (the very object is taken as
        unchanged without comparing it)."""
        return [name for name, chain in self.chains.items() if (kept := held.get(name)) is not chain and kept != chain]


class Translator:
    """Builds a ``Plan`` from a snapshot's resources and the fabric the controller knows."""

    def __init__(self, resources: dict[str, dict[str, Record]], fabric: Fabric,
                 switches: dict[int, tuple[str, str]] | None = None, cache: Translations | None = None,
                 touched: Collection[str] | None = None) -> None:
        self.r = resources
        self.cache = cache if cache is not None else Translations()
        self.touched = touched  # the ids of the records changed since the last translation, when known
        self._made: list[Chain] = []  # the chains of the port chain being translated
        self.fabric = fabric
        self.switches = switches or {}
        self.names = switch_names(fabric, self.switches)  # every port pair resolves its ports' switches
        self.fabric_names = switch_names(fabric)  # and every classifier's ports, by the controller's names alone
        self.plan = Plan()
        self._variants: Counter[str] = Counter()  # chains made so far per port chain (counted, not searched for)
        self._hosts = HostIndex([])

    def build(self) -> Plan:
        patched = self._patch()
        if patched is not None:
            return patched
        self.plan = Plan()
        self.plan.hosts = self._declared_hosts()
        self._hosts = self.cache.start([*self.fabric.hosts.values(), *self.plan.hosts.values()], self.names,
                                       self.fabric_names)
        self.cache.trusted = False  # until this translation is whole
        for pp in self.r["port_pairs"].values():
            self._function(pp)
        depth = self._graph_depths()
        for pc in self.r["port_chains"].values():  # each taken as it was while the records it read are the same
            self._cached_chain(pc, depth.get(pc["id"], 0))
        self._made = []  # a join's chains are made again each time: not kept with the chain they start from
        for sg in self.r["service_graphs"].values():
            for src, dsts in sg["port_chains"].items():
                for dst in dsts:
                    self._join(self.r["port_chains"][src], self.r["port_chains"][dst], depth)
        self.cache.keep_only(self.r["ports"], self.r["port_pairs"], self.r["port_chains"])
        self.cache.whole(self.plan)
        return self.plan

    def _patch(self) -> Plan | None:
        """The last plan with only what ``touched`` reaches made again: the hosts of the ports it names, the
        functions of the pairs it names or whose ports it names, and the chains that read any of those. None
        when that cannot be told: nothing is trusted, a host or a switch name changed, service graphs join
        chains, or a chain's names changed (each keeps its place in the plan, as a whole translation orders)."""
        cache, last = self.cache, self.cache.plan
        if not cache.trusted or self.touched is None or last is None or self.r["service_graphs"]:
            return None
        touched = {*self.touched, *cache.pending}
        cache.trusted = False  # until this translation is whole
        cache.hosts_named(self.names)
        if any(self._host_changed(ident) for ident in touched) or not cache.same_context(
                [*self.fabric.hosts.values(), *last.hosts.values()], self.names, self.fabric_names):
            return None
        self.plan, self._hosts = Plan(dict(last.hosts), dict(last.functions), dict(last.chains),
                                      dict(last.owner)), cache.index
        remade = self._patch_functions(touched)
        if not all(self._patch_chain(ident) for ident in cache.readers_of({*touched, *remade})):
            return None
        cache.whole(self.plan)
        return self.plan

    def _host_changed(self, ident: str) -> bool:
        """Whether the port ``ident`` (if it is one) stands for another host than it did."""
        port, kept = self.r["ports"].get(ident), self.cache.hosts.get(ident)
        if port is None:
            self.cache.hosts.pop(ident, None)
            return kept is not None and kept[1] is not None
        return self._declared_host(port) != (kept[1] if kept is not None else None)

    def _patch_functions(self, touched: Collection[str]) -> set[str]:
        """The pairs named in ``touched`` or whose ports are, made again (or dropped); their ids."""
        pairs, functions = self.r["port_pairs"], self.plan.functions
        named = {ident for ident in touched if ident in pairs or ident in self.cache.functions}
        if any(ident in self.r["ports"] or ident in self.cache.hosts for ident in touched):
            named |= {pp["id"] for pp in pairs.values() if pp["ingress"] in touched or pp["egress"] in touched}
        remade = set()
        for ident in named:
            pp = pairs.get(ident)
            if pp is not None and not self._function(pp):
                continue  # the very function of last time
            remade.add(ident)
            if pp is None or self.cache.functions[ident][1] is None:  # gone, or no longer resolved
                self.cache.functions.pop(ident, None)
                functions.pop(ident, None)
                functions.pop(ident + REVERSE, None)
        return remade

    def _patch_chain(self, ident: str) -> bool:
        """Port chain ``ident`` (if it is or was one) made again, or dropped; False when its chains' names
        changed."""
        pc, kept = self.r["port_chains"].get(ident), self.cache.chains.get(ident)
        before = [chain.name for chain in kept[1]] if kept is not None else []
        if pc is None:
            for name in before:
                self.plan.chains.pop(name, None)
                self.plan.owner.pop(name, None)
            self.cache.forget_chain(ident)
            return True
        self._cached_chain(pc, 0)
        return kept is None or [chain.name for chain in self.cache.chains[ident][1]] == before

    def _declared_hosts(self) -> dict[str, Host]:
        """Hosts for the ports that describe one (hosts the API was told about, not learned ones)."""
        self.cache.hosts_named(self.names)
        hosts = (self._declared_host(port) for port in self.r["ports"].values())
        return {host.name: host for host in hosts if host is not None}

    def _declared_host(self, port: Record) -> Host | None:
        """The host ``port`` describes, as the last translation found it for the very same record; None for a
        port that describes none or was learned (``srfabric:discovered``)."""
        if port.get("srfabric:discovered"):
            return None
        return self.cache.port_host(port, lambda record: port_host(self.fabric, record, self.switches, self.names))

    def _function(self, pp: Record) -> bool:
        """The port pair's service function and its reverse, as the last translation made them when the pair
        and its two ports are the very same records; True when they were made anew."""
        ports = self.r["ports"]
        key = (pp, ports[pp["ingress"]], ports[pp["egress"]])
        kept = self.cache.functions.get(pp["id"])
        remade = kept is None or kept[0] != key
        if remade:
            made = self._made_function(pp)
            self.cache.functions[pp["id"]] = (key, made)
        else:
            made = kept[1]  # type: ignore[index]
        if made is not None:
            self.plan.functions[pp["id"]], self.plan.functions[pp["id"] + REVERSE] = made
        return remade

    def _made_function(self, pp: Record) -> tuple[ServiceFunction, ServiceFunction] | None:
        ingress = attachment(self.fabric, self.r["ports"][pp["ingress"]], self.switches, self.names)
        egress = attachment(self.fabric, self.r["ports"][pp["egress"]], self.switches, self.names)
        if ingress is None or egress is None:
            return None  # checked when a chain uses it
        parameters = pp["service_function_parameters"]
        proxy = parameters.get("correlation") is None  # networking-sfc's "SR-unaware"
        rewrites = frozenset(parameters.get("rewrites", ())) if proxy else frozenset()
        macs = [self._mac(self.r["ports"][pp[side]]) if proxy else None for side in ("ingress", "egress")]
        # The reverse direction enters at the egress port; what the function rewrote one way it undoes back.
        return (ServiceFunction(pp["id"], ingress, egress, proxy, macs[0], rewrites),
                ServiceFunction(pp["id"] + REVERSE, egress, ingress, proxy, macs[1],
                                frozenset(REVERSED.get(name, name) for name in rewrites)))

    def _chain_key(self, pc: Record, depth: int) -> tuple[Any, ...]:
        """Every record and function a port chain's translation reads (records are replaced, never edited)."""
        r = self.r
        fcs = tuple(r["flow_classifiers"].get(fc) for fc in pc["flow_classifiers"])
        ends = tuple(r["ports"].get(fc[side]) for fc in fcs if fc is not None
                     for side in ("logical_source_port", "logical_destination_port") if fc[side])
        groups = tuple(r["port_pair_groups"].get(g) for g in pc["port_pair_groups"])
        pairs = tuple(p for g in groups if g is not None for p in g["port_pairs"])
        return (pc, depth, fcs, ends, groups, tuple(r["port_pairs"].get(p) for p in pairs),
                tuple(self.plan.functions.get(p) for p in pairs))

    def _cached_chain(self, pc: Record, depth: int) -> None:
        """``_chain``, or the very chains it made last time when nothing it reads has changed: those are the
        objects the controller holds, and its compile takes them as they are."""
        key = self._chain_key(pc, depth)
        kept = self.cache.chains.get(pc["id"])
        if kept is not None and kept[0] == key:
            for chain in kept[1]:
                self._keep(pc, chain)
            return
        self._made = []
        self._chain(pc, depth)
        self.cache.chains[pc["id"]] = (key, self._made)
        fcs, ends, groups, pairs = key[2], key[3], key[4], key[5]
        self.cache.read_by(pc["id"], {record["id"] for part in (fcs, ends, groups, pairs) for record in part
                                      if record is not None})

    @staticmethod
    def _mac(port: Record) -> int | None:
        return mac_number(port["mac_address"], "mac_address") if port.get("mac_address") else None

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
        chain = replace(chain, chain_id=(variants + 1) << 16 | pc["chain_id"])
        self._made.append(chain)
        self._keep(pc, chain)

    def _keep(self, pc: Record, chain: Chain) -> None:
        self._variants[pc["id"]] += 1
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
              switches: dict[int, tuple[str, str]] | None = None, cache: Translations | None = None,
              touched: Collection[str] | None = None) -> Plan:
    """The plan for ``resources``; ``cache`` keeps what each port, port pair and port chain made, for the next
    call. ``touched``: the ids of the records changed since that call, which alone are then looked at again
    (``Translations``)."""
    return Translator(resources, fabric, switches, cache, touched).build()


def chain_message(error: SrfabricError, plan: Plan) -> str:
    """The error in the API's terms: a chain's internal name becomes its port chain's id."""
    text = str(error)
    for name, owner in plan.owner.items():
        text = text.replace(f"chain {name}", f"port chain {owner}")
    return text
