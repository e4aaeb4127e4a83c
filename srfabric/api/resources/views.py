"""What the controller knows, as the JSON the fabric view, the chain view and the switch view serve (under
``/v2.0/srfabric/``; the web view at ``/ui/`` draws the same). Pure functions of the controller's state, apart
from ``switch_view``, which asks the switch for its counters."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict
from typing import Any

from srfabric.api.storage.repository import Snapshot
from srfabric.codecs.macaddr import mac_to_str
from srfabric.controller.controller import Controller
from srfabric.errors import SrfabricError
from srfabric.model.chain import Chain
from srfabric.routing.paths import chain_route
from srfabric.rules.codec_rules import rules_for
from srfabric.rules.entries import Kind
from srfabric.rules.headers import pathlet_steps, sre_switches
from srfabric.rules.openflow.ofbind import wire_cookie
from srfabric.rules.placement import chain_placement, without_dead_functions
from srfabric.rules.proxy import proxy_segments
from srfabric.southbound.ofctl_text import action_text

TABLE_NAMES = {0: "port-in", 1: "host-in", 2: "decode", 3: "terminate", 4: "deliver"}


def unrouted(problem: SrfabricError) -> dict[str, Any]:
    """One thing the last sync could not route, with its reason; a chain names its port chain (a chain's name
    starts with its port chain's id), a stream its name. The controller routes it again by itself once a path
    returns."""
    kind, _, name = problem.field.partition(" ")
    found: dict[str, Any] = {"what": problem.field, "reason": problem.message}
    if kind == "chain":
        found["port_chain"] = name.split("/")[0]
    elif kind == "stream":
        found["stream"] = name
    return found


def _end(end: tuple[int, int]) -> dict[str, int]:
    return {"dpid": end[0], "port": end[1]}


def declared_functions(controller: Controller, ports: dict[str, dict[str, Any]],
                       switches: dict[int, tuple[str, str]]) -> list[dict[str, Any]]:
    """Service functions whose ports exist (``device_owner`` ``network:sf``, attached) but that no port pair uses
    yet, so the controller does not know them: the view draws them all the same (``declared``), the first two
    ports by name as ingress and egress."""
    from srfabric.api.resources.attachments import attachment, switch_names

    known = {(f.ingress, f.egress) for f in controller.fabric.functions.values()}
    known_ports = {end for pair in known for end in pair}
    by_device: dict[str, list[tuple[str, Any]]] = {}
    names = switch_names(controller.fabric, switches)
    for port in sorted(ports.values(), key=lambda p: str(p.get("name") or "")):
        end = attachment(controller.fabric, port, switches, names)
        if port.get("device_owner") == "network:sf" and port.get("device_id") and end is not None:
            by_device.setdefault(str(port["device_id"]), []).append((str(port.get("name")), end))
    return [{"name": device, "label": device, "ingress": _end(ends[0][1]), "egress": _end(ends[-1][1]), "up": True,
             "declared": True}
            for device, ends in sorted(by_device.items()) if not {end for _, end in ends} & known_ports]


def fabric_view(controller: Controller, labels: dict[str, str] | None = None) -> dict[str, Any]:
    """Switches (connected or kept), links (each direction, ``up`` or ``down``: its carrier went and no path
    uses it), hosts, service functions (``up`` unless a port lost its carrier; ``label`` from ``labels``, the
    reverse direction of a symmetric pair left out: it is the same box), what is not routed, and the gateway."""
    from srfabric.api.resources.translate import REVERSE

    labels = labels or {}

    fabric = controller.fabric
    links = [{"from": _end(a), "to": _end(b), "state": "up"} for a, b in sorted(fabric.links.items())]
    links += [{"from": _end(a), "to": _end(b), "state": "down"} for a, b in sorted(fabric.dormant.items())]
    return {
        "switches": [{"dpid": dpid, "name": sw.name, "role": sw.role, "connected": dpid in controller.switches,
                      "master": dpid in controller.core.taken,
                      "connected_since": round(controller.switches[dpid].taken_at, 3)
                      if dpid in controller.switches else None}
                     for dpid, sw in sorted(fabric.switches.items())],
        "links": links,
        "hosts": [{"name": h.name, "ip": h.ip, "ip6": list(h.ip6), "mac": mac_to_str(h.mac), "dpid": h.dpid,
                   "port": h.port}
                  for h in sorted(fabric.hosts.values(), key=lambda h: h.name)],
        "functions": [{"name": f.name, "label": labels.get(f.name, f.name), "ingress": _end(f.ingress),
                       "egress": _end(f.egress), "up": f.name not in fabric.functions_down}
                      for f in sorted(fabric.functions.values(), key=lambda f: f.name) if not f.name.endswith(REVERSE)],
        "unrouted": [unrouted(problem) for problem in controller.problems],
        # The address every edge sends traffic for no host to, and the host it is (None until learned).
        "gateway": None if fabric.gateway_ip is None else {
            "ip": fabric.gateway_ip, "host": gateway.name if (gateway := fabric.gateway()) else None},
    }


def chain_view(controller: Controller, chain: Chain, labels: dict[str, str] | None = None) -> dict[str, Any]:
    """One chain: its classifier, functions in order per path, each path's hops and pathlets (the ports each
    header encodes and the actions that write it), and the entries it costs per switch; or why it is not
    routed."""
    fabric, codec = controller.fabric, controller.config.codec
    labels = labels or {}
    names = {dpid: sw.name for dpid, sw in fabric.switches.items()}
    view: dict[str, Any] = {
        "name": chain.name, "label": _chain_label(chain.name, labels), "chain_id": chain.chain_id,
        "source": chain.source, "destination": chain.destination,
        "classifier": {k: v for k, v in asdict(chain.classifier).items() if v is not None},
        "taps": list(chain.taps), "paths": [], "entries_per_switch": {}, "unrouted": None}
    try:
        chain.validate(set(fabric.hosts), set(fabric.functions))  # a host or function gone: say so, not a 500
        live = without_dead_functions(fabric, chain)
        rules, sre = rules_for(codec), sre_switches(fabric)
        for alternative in live.paths():
            route = chain_route(fabric, live, alternative.functions)
            what, ipv6 = f"chain {chain.name}", chain.classifier.ipv6
            # A header per pathlet, and a new run of them after each SR-unaware function (the proxy's).
            steps = [step for segment, _ in proxy_segments(fabric, route, what) if segment.hops
                     for step in pathlet_steps(segment, rules, sre, what, ipv6)]
            view["paths"].append({
                "functions": [labels.get(name, name) for name in alternative.functions],
                "function_ids": list(alternative.functions), "weight": alternative.weight,
                "delivery": _end(route.delivery),
                "hops": [{"switch": names.get(hop.dpid, hex(hop.dpid)), "dpid": hop.dpid, "port": hop.port,
                          "function": _function_at(controller, hop.dpid, hop.port)} for hop in route.hops],
                "pathlets": [{"switch": names.get(p.start[0], hex(p.start[0])), "in_port": p.start[1],
                              "ports": list(p.encoded), "first_port": p.first_port,
                              "header": [action_text(a) for a in actions]} for p, actions in steps]})
        placed = chain_placement(fabric, chain, codec)
        view["entries_per_switch"] = dict(sorted(Counter(names.get(d, hex(d)) for d, _ in placed.entries).items()))
        view["groups"] = len(placed.groups)
    except SrfabricError as error:
        view["unrouted"] = str(error)
    return view


def _function_at(controller: Controller, dpid: int, port: int) -> str | None:
    """The service function a frame leaving ``dpid`` by ``port`` enters, if any."""
    far = controller.fabric.far_end((dpid, port))
    return far.function if far is not None else None


def chains_view(controller: Controller, labels: dict[str, str] | None = None) -> list[dict[str, Any]]:
    return [chain_view(controller, chain, labels) for _, chain in sorted(controller.chains.items())]


def _chain_label(name: str, labels: dict[str, str]) -> str:
    """A chain's port chain's label (a chain's name starts with its port chain's id), with the start of what
    follows (a port chain makes one chain per classifier)."""
    for ident, label in labels.items():
        if name.startswith(ident):
            rest = name[len(ident):]
            return label + (rest[:9] if len(rest) > 9 else rest)
    return name


async def switch_view(controller: Controller, dpid: int) -> dict[str, Any]:
    """A switch's role and its entries by table with their packet counters (read from the switch now), and
    the frames its forged-header entries dropped."""
    switch = controller.fabric.switches.get(dpid)
    if switch is None:
        raise SrfabricError("dpid", f"{dpid:#x} is not a switch of the fabric")
    view: dict[str, Any] = {"dpid": dpid, "name": switch.name, "role": switch.role,
                            "connected": dpid in controller.switches, "tables": {}, "forged_dropped": 0}
    if dpid not in controller.switches:
        return view
    stats = await controller.channels.entry_stats(dpid)
    view["compiled"] = compared(controller, dpid, [entry.cookie for entry in stats])
    for entry in sorted(stats, key=lambda e: (e.table, -e.priority)):
        kind = entry.kind
        view["tables"].setdefault(TABLE_NAMES.get(entry.table, str(entry.table)), []).append(
            {"priority": entry.priority, "kind": kind.name.lower() if kind is not None else "foreign",
             "packets": entry.packets, "bytes": entry.bytes})
        if kind == Kind.SECURITY:
            view["forged_dropped"] += entry.packets
    return view


def compared(controller: Controller, dpid: int, cookies: list[int]) -> dict[str, Any]:
    """The entries read back from a switch beside those it should hold now (compiled as a sync would send them):
    a cookie carries its entry's digest, so equal cookies are equal entries. ``in_sync`` once nothing is
    ``missing`` (compiled, not held) or ``extra`` (held, not compiled)."""
    wanted = Counter(wire_cookie(entry) for entry in controller.core.wanted()[0].get(dpid, []))
    held = Counter(cookies)
    missing, extra = sum((wanted - held).values()), sum((held - wanted).values())
    return {"entries": sum(wanted.values()), "missing": missing, "extra": extra, "in_sync": not missing and not extra}


def change_mark(controller: Controller) -> tuple[int, ...]:
    """Changes whenever what the views show changes (the fabric, the chains, the streams, what is unrouted)."""
    return (controller.fabric.version, hash(tuple(sorted(controller.chains.items()))),
            hash(tuple(sorted(controller.streams.items()))),
            hash(tuple(str(p) for p in controller.problems)), len(controller.switches))


def labels_of(snap: Snapshot) -> dict[str, str]:
    """What the views call a function (its port pair's name, else its device) and a port chain (its name), by
    the id the controller knows them by."""
    labels = {}
    for ident, pair in snap["port_pairs"].items():
        device = snap["ports"].get(pair["ingress"], {}).get("device_id")
        labels[ident] = pair.get("name") or device or ident[:8]
    for ident, chain in snap["port_chains"].items():
        labels[ident] = chain.get("name") or ident[:8]
    return labels
