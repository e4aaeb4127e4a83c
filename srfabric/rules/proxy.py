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

from srfabric.errors import RoutingError
from srfabric.model.chain import Chain
from srfabric.model.fabric import Fabric, ServiceFunction
from srfabric.routing.paths import Route
from srfabric.rules.codec_rules import CodecRules
from srfabric.rules.entries import Action, FlowEntry, Kind, Match, Output, SetField, cookie, extended, match
from srfabric.rules.headers import pathlet_steps, steps_entries
from srfabric.rules.pipeline import DECODE, HOST_IN, PORT_IN, PRIO_DECODE, PRIO_PORT

PROXY_MAC = 0x025352000001
"""The source MAC of frames handed to an SR-unaware function under ``mac-nibble``, whose header took the place
of the original (unicast, locally administered, hop count 0: no switch reads it as a header)."""

MATCHED = {"ip_src": ("ipv4_src",), "ip_dst": ("ipv4_dst",), "l4_src": ("tcp_src", "udp_src"),
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


def proxy_port_entries(fabric: Fabric, rules: CodecRules) -> list[tuple[int, FlowEntry]]:
    """One DECODE entry per SR-unaware function, at its ingress switch: a header whose last port is the
    function's is stripped and the frame handed over (``handoff``); under ``mac-nibble`` also one PORT_IN entry
    per port of such a function, which makes the source MAC of what it sends a plain one.

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
    strip = rules.exhausted()[1]
    placed = []
    for function in sorted(fabric.functions.values(), key=lambda f: f.name):
        dpid, port = function.ingress
        if function.proxy and dpid in fabric.switches and 1 <= port <= rules.max_port:
            entry = FlowEntry(DECODE, PRIO_DECODE + 1, rules.last_step(port),
                              (*strip, *handoff(function, rules, header_was_there=True)), cookie=cookie(Kind.PROXY))
            placed.append((dpid, entry))
    if rules.rewrites_source_mac:
        # What a function sends carries its own source MAC, which under mac-nibble may read as a forged header
        # (a hop count in the top nibble): it becomes a plain one before the host checks, as no header rides
        # in it (ARP says who sent it in its payload).
        for dpid, port in sorted(fabric.proxied_ports()):
            if dpid in fabric.switches:
                placed.append((dpid, FlowEntry(PORT_IN, PRIO_PORT, match(in_port=port),
                                               (SetField("eth_src", PROXY_MAC),), goto=HOST_IN,
                                               cookie=cookie(Kind.PROXY))))
    return placed


def crosses_proxy(fabric: Fabric, route: Route) -> bool:
    """Whether the route enters an SR-unaware function."""
    ingresses = {f.ingress for f in fabric.functions.values() if f.proxy}
    return any((hop.dpid, hop.port) in ingresses for hop in route.hops)


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


def proxied_chain_entries(fabric: Fabric, route: Route, chain: Chain, matches: list[Match], rules: CodecRules,
                          sre: set[int], what: str, endpoints: dict[str, int]) -> list[tuple[int, FlowEntry]]:
    """A chain's entries along a route through SR-unaware functions: one run of headers per segment."""
    proxied = {f.ingress: f for f in fabric.functions.values() if f.proxy}
    segments: list[tuple[Route, ServiceFunction | None]] = []
    entry, start = route.entry, 0
    for index, hop in enumerate(route.hops):
        function = proxied.get((hop.dpid, hop.port))
        if function is not None:
            segments.append((Route(entry, route.hops[start : index + 1], function.ingress), function))
            entry, start = function.egress, index + 1
    segments.append((Route(entry, route.hops[start:], route.delivery), None))
    placed: list[tuple[int, FlowEntry]] = []
    rewritten: set[str] = set()
    for index, (segment, function) in enumerate(segments):
        if function is None and not segment.hops and chain.destination is None:
            break  # it ends at an SR-unaware function: default routes take what comes back
        here = matches if index == 0 else kept_matches(matches, rewritten, segment.entry[1])
        kept = {name: value for name, value in endpoints.items()
                if not any(name in MATCHED[field] for field in rewritten)}
        steps = pathlet_steps(segment, rules, sre, what)
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
