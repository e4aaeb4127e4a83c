"""An SR proxy for SR-unaware service functions (networking-sfc's correlation None): the part SRv6's End.AS
proxy plays, for the fabric's own headers.

A chain's route is cut at each such function into segments. The segment that leads into the function ends
with a header whose last port is the function's ingress port; at the function's switch one entry per
function (DECODE, ``Kind.PROXY``) matches exactly that (the port is the function's, so only frames meant for
it carry it), strips the header, addresses the frame to the function's MAC and hands it over. The function
may route, rewrite MAC addresses, decrement the TTL, and change the flow fields it declares (``rewrites``).
What it sends back enters its egress port like a host's frame; one entry per chain there (HOST_IN, at the
chain's priority) matches that port plus the classifier and endpoint fields the functions so far kept, and
writes the next segment's header. Transit switches hold nothing new.

Re-identifying a flow by its egress port and the kept fields is all a stateless switch can do: two chains
through one function whose kept fields overlap cannot be told apart and are refused; a function that changes
the whole 5-tuple (a TCP proxy) can carry one chain's traffic only (its egress port is all that is left),
since telling flows apart after it would need a per-function flow table.

A chain without a destination whose last function is SR-unaware needs no exit entries: what the function
sends back takes the default routes (or the gateway) from its egress port, as a host's frames do.
"""

from __future__ import annotations

from dataclasses import replace

from srfabric.errors import RoutingError
from srfabric.model.chain import Chain
from srfabric.model.fabric import Fabric, ServiceFunction
from srfabric.routing.paths import Route
from srfabric.rules.codec_rules import CodecRules
from srfabric.rules.entries import (
    Action,
    Bucket,
    EntryKey,
    FlowEntry,
    Group,
    GroupEntry,
    Kind,
    Match,
    Output,
    SetField,
    cookie,
    extended,
    match,
    match_fields,
)
from srfabric.rules.headers import pathlet_steps, steps_entries
from srfabric.rules.pipeline import DECODE, HOST_IN, PORT_IN, PRIO_CHAIN, PRIO_DECODE, PRIO_PORT
from srfabric.rules.streams.time_triggered import best_effort_first, marked_queues

PROXY_MAC = 0x025352000001
"""The source MAC of frames handed to an SR-unaware function under ``mac-nibble``, whose header took the place
of the original (unicast, locally administered, hop count 0: no switch reads it as a header)."""

MATCHED = {"ip_src": ("ipv4_src", "ipv6_src"), "ip_dst": ("ipv4_dst", "ipv6_dst"), "l4_src": ("tcp_src", "udp_src"),
           "l4_dst": ("tcp_dst", "udp_dst")}
"""The match fields each declared rewrite makes useless after the function."""


def handoff(function: ServiceFunction, rules: CodecRules, header_was_there: bool) -> tuple[Action, ...]:
    """Actions that give a frame without a header to ``function``: addressed to its MAC (when known), and under
    ``mac-nibble`` a plain source MAC where a header was (``header_was_there``)."""
    actions: list[Action] = []
    if header_was_there and rules.rewrites_source_mac:
        actions.append(SetField("eth_src", PROXY_MAC))
    if function.mac is not None:
        actions.append(SetField("eth_dst", function.mac))
    actions.append(Output(function.ingress[1]))
    return tuple(actions)


def proxy_port_entries(fabric: Fabric, rules: CodecRules, tt_queue: int | None = None) -> list[tuple[int, FlowEntry]]:
    """One DECODE entry per SR-unaware function, at its ingress switch: a header whose last port is the
    function's is stripped and the frame handed over (``handoff``; a second one for IPv6 where the codec's strip
    differs); under ``mac-nibble`` also one PORT_IN entry per port of such a function, which makes the source
    MAC of what it sends a plain one (with ``tt_queue``, like a host's frames: the best-effort queue, and a
    twin that clears the time-triggered mark).

    Examples
    --------
    >>> from srfabric.model.topo import tsn_fig1
    >>> from srfabric.rules.codec_rules import rules_for
    >>> fabric = tsn_fig1().to_fabric()
    >>> fabric.add_function(ServiceFunction("nat", (1, 8), (1, 9), proxy=True, mac=0x02AA00000001))
    >>> [(hex(d), [f"{a.field}={a.value:#x}" if isinstance(a, SetField) else a for a in e.actions])
    ...  for d, e in proxy_port_entries(fabric, rules_for("mac-nibble")) if e.table == DECODE]
    [('0x1', ['eth_src=0x25352000001', 'eth_dst=0x2aa00000001', Output(port=8)])]
    """
    strips = [(False, rules.exhausted()[1])]
    if (ipv6 := rules.exhausted_ipv6()) is not None:
        strips.append((True, ipv6[1]))
    placed = []
    for function in sorted(fabric.functions.values(), key=lambda f: f.name):
        dpid, port = function.ingress
        if function.proxy and dpid in fabric.switches and 1 <= port <= rules.max_port:
            for family, strip in strips:  # above the decode step and its time-triggered twin: never a tie
                entry = FlowEntry(DECODE, PRIO_DECODE + 2 + family, rules.last_step(port, family),
                                  (*strip, *handoff(function, rules, header_was_there=True)),
                                  cookie=cookie(Kind.PROXY))
                placed.append((dpid, entry))
    if rules.rewrites_source_mac:
        # What a function sends carries its own source MAC, which under mac-nibble may read as a forged header
        # (a hop count in the top nibble): it becomes a plain one before the host checks, as no header rides
        # in it (ARP says who sent it in its payload).
        plain = SetField("eth_src", PROXY_MAC)
        for dpid, port in sorted(fabric.proxied_ports()):
            if dpid not in fabric.switches:
                continue
            entries = [FlowEntry(PORT_IN, PRIO_PORT, match(in_port=port), (plain,), goto=HOST_IN,
                                 cookie=cookie(Kind.PROXY))]
            if tt_queue is not None:  # as a host's frames are treated (``time_triggered``): each mark cleared
                entries = best_effort_first([*entries, *(
                    FlowEntry(PORT_IN, PRIO_PORT + 1, extended(match(in_port=port), **rules.marker(priority)),
                              (plain, SetField("ip_dscp", 0)), goto=HOST_IN, cookie=cookie(Kind.PROXY))
                    for priority in marked_queues(tt_queue))])
            placed += [(dpid, entry) for entry in entries]
    return placed


def kept_matches(matches: list[Match], rewritten: set[str], in_port: int) -> list[Match]:
    """``matches`` as frames come back from a function: on its egress port, without the fields rewritten.

    >>> from srfabric.rules.entries import match
    >>> kept_matches([match(in_port=1, ipv4_src=1, udp_src=7, udp_dst=9)], {"ip_src", "l4_src"}, 5)
    [(('in_port', 5, None), ('udp_dst', 9, None))]
    """
    dropped = {name for field in rewritten for name in MATCHED[field]}
    kept: list[Match] = []
    for m in matches:
        narrowed = extended(tuple(f for f in m if f[0] not in dropped), in_port=in_port)
        if narrowed not in kept:
            kept.append(narrowed)
    return kept


def proxy_segments(fabric: Fabric, route: Route, what: str) -> list[tuple[Route, ServiceFunction | None]]:
    """``route`` cut after each hop into an SR-unaware function (the function that segment ends in), and the
    rest (None): the route itself when it enters none."""
    proxied = {f.ingress: f for f in fabric.functions.values() if f.proxy}
    segments: list[tuple[Route, ServiceFunction | None]] = []
    entry, start = route.entry, 0
    crossed: set[str] = set()
    for index, hop in enumerate(route.hops):
        function = proxied.get((hop.dpid, hop.port))
        if function is not None:
            if function.name in crossed:
                raise RoutingError(what, f"its way crosses SR-unaware function {function.name} twice: what the "
                                         "function hands back cannot say which time it was")
            crossed.add(function.name)
            segments.append((Route(entry, route.hops[start : index + 1], function.ingress), function))
            entry, start = function.egress, index + 1
    segments.append((Route(entry, route.hops[start:], route.delivery), None))
    return segments


def proxied_chain_entries(fabric: Fabric, segments: list[tuple[Route, ServiceFunction | None]], chain: Chain,
                          matches: list[Match], rules: CodecRules, sre: set[int], what: str,
                          endpoints: dict[str, int]) -> list[tuple[int, FlowEntry]]:
    """A chain's entries along a route through SR-unaware functions (its ``proxy_segments``): one run of
    headers per segment."""
    ipv6 = chain.classifier.ipv6
    placed: list[tuple[int, FlowEntry]] = []
    rewritten: set[str] = set()
    for index, (segment, function) in enumerate(segments):
        kept = {name: value for name, value in endpoints.items()
                if not any(name in MATCHED[field] for field in rewritten)}
        here = matches if index == 0 else [extended(m, **kept) for m in kept_matches(matches, rewritten,
                                                                                     segment.entry[1])]
        if function is None and not segment.hops:
            if chain.destination is not None and segment.delivery != segment.entry:
                # Handed back on the destination's own switch: delivered as that switch's delivery table would.
                host = fabric.hosts[chain.destination]
                actions = (SetField("eth_dst", host.mac), Output(segment.delivery[1]))
                placed += [(segment.entry[0], FlowEntry(HOST_IN, PRIO_CHAIN + chain.priority, m, actions,
                                                        cookie=cookie(Kind.CHAIN, chain.chain_id))) for m in here]
            break  # else it ends at an SR-unaware function (default routes take what comes back), or is a tap's
        steps = pathlet_steps(segment, rules, sre, what, ipv6)
        if chain.destination is None and len(steps) > 1:
            raise RoutingError(what, f"a chain without a destination must fit one header between SR-unaware "
                                     f"functions: segment {index} needs {len(steps)} (at most {rules.capacity} "
                                     f"ports each, with {rules.name}); give it a destination, or place its "
                                     "functions closer")
        if function is not None and not steps[-1][0].encoded:
            # The function hangs off the switch that writes this pathlet: no header goes into it at all.
            steps[-1] = (steps[-1][0], handoff(function, rules, header_was_there=len(steps) > 1))
        placed += steps_entries(segment, steps, here, Kind.CHAIN, chain.chain_id, kept, chain.priority)
        if function is not None:
            rewritten |= function.rewrites
    return placed


def balanced_continuations(fabric: Fabric, chain: Chain, later: list[tuple[int, FlowEntry, int]], what: str
                           ) -> tuple[list[tuple[int, FlowEntry]], list[tuple[int, GroupEntry]]]:
    """A load-balanced chain's entries past its ingress (``later``: switch, entry, weight of its way), with
    the entries where ways that share an SR-unaware function part after it turned into one select group.

    The function hands frames back without saying which way they came, so the ways after it are chosen again
    there, by weight; that is right when every way before it goes on to every way after it (as the cross
    product of port pair groups makes them), and refused by name otherwise.
    """
    by_key: dict[tuple[int, EntryKey], list[tuple[FlowEntry, int]]] = {}
    for dpid, entry, weight in later:
        by_key.setdefault((dpid, entry.key), []).append((entry, weight))
    egress_of = {f.egress: f for f in fabric.functions.values() if f.proxy}
    placed: list[tuple[int, FlowEntry]] = []
    groups: list[tuple[int, GroupEntry]] = []
    for (dpid, _), found in by_key.items():
        weights: dict[tuple[Action, ...], int] = {}
        for entry, weight in found:
            weights[entry.actions] = weights.get(entry.actions, 0) + weight
        first = found[-1][0]
        in_port = match_fields(first.match).get("in_port")
        function = egress_of.get((dpid, in_port[0])) if in_port and first.table == HOST_IN else None
        if len(weights) == 1 or function is None:
            placed.append((dpid, first))
            continue
        parts = {(p.functions[: p.functions.index(function.name)], p.functions[p.functions.index(function.name) + 1 :])
                 for p in chain.paths() if function.name in p.functions}
        if len(parts) != len({b for b, _ in parts}) * len({a for _, a in parts}):
            raise RoutingError(what, f"its ways cross SR-unaware function {function.name} from different functions "
                                     "and part after it differently: the function hands frames back without "
                                     "saying which way they came, so every way before it must go on to every way "
                                     "after it (as port pair groups in order do)")
        if len(groups) >= 16:
            raise RoutingError(what, "more than 16 SR-unaware functions where its ways part")
        group_id = 1 << 29 | chain.chain_id << 4 | len(groups)  # apart from chains', taps' and routes' groups
        scale = max(1, -(-max(weights.values()) // 0xFFFF))
        buckets = tuple(Bucket(actions, max(1, weight // scale)) for actions, weight in weights.items())
        groups.append((dpid, GroupEntry(group_id, "select", buckets)))
        placed.append((dpid, replace(first, actions=(Group(group_id),))))
    return placed, groups


def proxy_hint(fabric: Fabric, chain: Chain) -> str:
    """What to add when a chain's entries overlap another's: after an SR-unaware function that rewrites fields,
    frames are told apart by less than the classifier."""
    rewriting = sorted({name for path in chain.paths() for name in path.functions
                        if name in fabric.functions and fabric.functions[name].rewrites})
    if not rewriting:
        return ""
    said = "; ".join(f"{name} rewrites {', '.join(sorted(fabric.functions[name].rewrites))}" for name in rewriting)
    return (f" (after an SR-unaware function a chain's frames are known only by its egress port and the fields it "
            f"keeps: {said}; a function that changes the 5-tuple can carry one chain)")
