"""``srfabric bench failover``: what cutting a fabric link costs the demo's three chains, with source routing and
with hop-by-hop rules side by side in one run.

The demo fat-tree (k=4) runs in Mininet with its seven service functions and
three chains (``srfabric demo``'s). Each chain carries UDP at 1,000 frames/s
(srfabric's stamped talker and listener, kernel receive times). A second into a
run, one fabric link that carries chains is cut (``ip link set <port> down`` on
one end: both ends lose their carrier; the switch reports the port down). Per
chain, the outage is the longest gap between two frames received, less the
1 ms the frames are apart; frames lost are counted too. The flow-mods each
switch received during the repair are summed per role (edge, aggregation,
core). The link then comes back, and the next cut takes another link. After
each run every chain's functions must have seen all its delivered frames,
each coming from the function before it (the functions' marks).

Repairs are measured for every link that carries a chain, round-robin, until
``cuts`` cuts are done (20; the quick form 2).
"""

from __future__ import annotations

import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

from srfabric.errors import SrfabricError
from srfabric.model.chain import Chain
from srfabric.model.fabric import Fabric
from srfabric.model.topo import LinkSpec, TopoSpec
from srfabric.routing.paths import chain_route
from srfabric.southbound.gates import tai_now_ns
from srfabric_tools.demo import BASE_PORT, demo_chains, demo_topology
from srfabric_tools.testbed.scenario import Scenario

PPS = 1000
PERIOD_NS = 1_000_000_000 // PPS
ENDPOINTS = ["-m", "srfabric_tools.testbed.stations.endpoints"]
STEERINGS = ("source-routing", "hop-by-hop")


def carrying_links(spec: TopoSpec, fabric: Fabric, chains: list[Chain]) -> list[tuple[LinkSpec, int]]:
    """The spec's switch-to-switch links the chains' routes cross, with how many chains cross each; most first,
    then aggregation-core before edge-aggregation, then by name."""
    crossing: dict[frozenset[tuple[int, int]], int] = {}
    for chain in chains:
        hops = {(hop.dpid, hop.port) for hop in chain_route(fabric, chain).hops if (hop.dpid, hop.port) in fabric.links}
        for end in {frozenset((end, fabric.links[end])) for end in hops}:
            crossing[end] = crossing.get(end, 0) + 1
    found = []
    for link in spec.links:
        ends = frozenset(((spec.dpid(link.a), link.a_port), (spec.dpid(link.b), link.b_port)))
        if ends in crossing:
            core = "core" in (spec.switches[link.a].role, spec.switches[link.b].role)
            found.append((link, crossing[ends], not core))
    found.sort(key=lambda item: (-item[1], item[2], item[0].a, item[0].a_port))
    return [(link, count) for link, count, _ in found]


def chains_crossing(spec: TopoSpec, fabric: Fabric, chains: list[Chain], link: LinkSpec) -> set[str]:
    """The chains whose route crosses ``link`` (either way), before it is cut."""
    ends = {(spec.dpid(link.a), link.a_port), (spec.dpid(link.b), link.b_port)}
    return {chain.name for chain in chains if ends & {(hop.dpid, hop.port) for hop in chain_route(fabric, chain).hops}}


def outage(received: list[tuple[int, int]], cut_ns: int) -> tuple[float | None, int]:
    """(outage in ms, frames lost) of one chain's frames (sequence, kernel receive time) around a cut: from 0.1 s
    before the cut on, the longest gap between consecutive arrivals less the frames' spacing (None when no
    frame came after the cut: not repaired), and the sequence numbers missing from the first frame received in
    that span to the last."""
    span = sorted((at, seq) for seq, at in received if at >= cut_ns - 100_000_000)
    if not span or span[-1][0] < cut_ns:
        return None, 0
    gap = max((b[0] - a[0] for a, b in zip(span, span[1:], strict=False)), default=0)
    seqs = {seq for _, seq in span}
    return round(max(0, gap - PERIOD_NS) / 1e6, 3), max(seqs) - min(seqs) + 1 - len(seqs)


def hops_in_order(before: dict[str, Any], after: dict[str, Any], chains: list[Chain], marks: dict[str, int],
                  delivered: dict[str, int]) -> dict[str, bool]:
    """Per chain: each of its functions forwarded, during the run, at least every delivered frame, each coming
    from the function before it (its mark)."""
    def count(stats: dict[str, Any], name: str, key: str, previous: int) -> int:
        seen = stats.get(name, {}).get("flows", {}).get("forward", {}).get(key, {})
        return int(seen.get(f"from_mark_{previous}", 0))

    result = {}
    for index, chain in enumerate(chains):
        key, previous, ok = f"udp:{BASE_PORT + index}", 0, True
        for name in chain.functions:
            ok &= count(after, name, key, previous) - count(before, name, key, previous) >= delivered[chain.name]
            previous = marks[name]
        result[chain.name] = ok
    return result


def cut_once(scenario: Scenario, chains: list[Chain], link: LinkSpec, seconds: float, folder: Path) -> dict[str, Any]:
    """One run with one cut a second in; the link is back up (and rediscovered) when this returns."""
    testbed, controller, runner = scenario.testbed, scenario.controller, scenario.runner
    assert testbed is not None
    crossing = chains_crossing(scenario.spec, controller.fabric, chains, link)
    assert chains[0].destination is not None  # the scenarios' chains end at a host
    destination = scenario.spec.hosts[chains[0].destination]
    frames = int(seconds * PPS)
    ports = [BASE_PORT + index for index in range(len(chains))]
    csv = folder / "received.csv"
    listener = testbed.popen(destination.name, [_python(), *ENDPOINTS, "listen", "--count", str(frames),
                                                "--timeout", "2", "--csv", str(csv), *_ports(ports)],
                             stdout=subprocess.PIPE)
    assert listener.stdout is not None
    listener.stdout.readline()  # "listening"
    before_stats = scenario.peek_function_stats(settle=0.6)
    talker = testbed.popen(chains[0].source, [_python(), *ENDPOINTS, "talk", "--dst", destination.ip,
                                              "--period-ns", str(PERIOD_NS), "--count", str(frames), "--size", "200",
                                              "--stamp", "sent", *_ports(ports)], stdout=subprocess.DEVNULL)
    time.sleep(1.0)
    tables_before = switch_tables(scenario)
    mods_before, kinds_before = dict(controller.flow_mods), dict(controller.flow_mod_kinds)
    interface = f"{link.a}-eth{link.a_port}"
    cut_ns = tai_now_ns()
    subprocess.run(["ip", "link", "set", interface, "down"], check=True)
    talker.wait(timeout=seconds + 30)
    listener.wait(timeout=30)
    mods = {dpid: count - mods_before.get(dpid, 0) for dpid, count in controller.flow_mods.items()}
    kinds = {key: count - kinds_before.get(key, 0) for key, count in controller.flow_mod_kinds.items()}
    after_stats = scenario.peek_function_stats(settle=0.6)
    subprocess.run(["ip", "link", "set", interface, "up"], check=True)
    links = 2 * len(scenario.spec.links)
    runner.call(controller.wait_until(lambda: len(controller.fabric.links) == links, 15, f"{interface} back"))
    runner.call(controller.sync())  # the link's return is synced (nothing else changes meanwhile)
    received: dict[int, list[tuple[int, int]]] = {port: [] for port in ports}
    for row in csv.read_text().splitlines()[1:]:
        port, seq, _, _, at, _ = (int(v) for v in row.split(","))
        received[port].append((seq, at))
    roles = {sw.dpid: sw.role for sw in scenario.spec.switches.values()}
    by_role = {role: sum(n for dpid, n in mods.items() if roles.get(dpid) == role)
               for role in ("edge", "aggregation", "core")}
    marks = {name: index for index, name in enumerate(scenario.spec.functions, start=1)}
    delivered = {chain.name: len(received[port]) for chain, port in zip(chains, ports, strict=True)}
    in_order = hops_in_order(before_stats, after_stats, chains, marks, delivered)
    by_kind: dict[str, int] = {}
    for (_, kind), count in kinds.items():
        by_kind[kind] = by_kind.get(kind, 0) + count
    out: dict[str, Any] = {"link": f"{link.a}:{link.a_port}-{link.b}:{link.b_port}", "flow_mods": by_role,
                           "flow_mods_by_kind": by_kind, "tables_as_before": switch_tables(scenario) == tables_before,
                           "chains": {}}
    for chain, port in zip(chains, ports, strict=True):
        gap_ms, lost = outage(received[port], cut_ns)
        out["chains"][chain.name] = {"crossed": chain.name in crossing, "outage_ms": gap_ms, "lost": lost,
                                     "repaired": gap_ms is not None, "delivered": delivered[chain.name],
                                     "sent": frames, "in_order": in_order[chain.name]}
    return out


def switch_tables(scenario: Scenario) -> dict[int, tuple[list[tuple[int, int, int]], list[str]]]:
    """Every switch's entries as it reports them (table, priority, cookie with the entry's digest), sorted, and
    its groups (none where the switch cannot describe them: the XDP agent)."""
    controller, runner = scenario.controller, scenario.runner

    def groups(dpid: int) -> list[str]:
        try:
            return sorted(repr(group) for group in runner.call(controller.channels.group_descriptions(dpid)))
        except SrfabricError:
            return []

    return {dpid: (sorted((s.table, s.priority, s.cookie) for s in runner.call(controller.channels.entry_stats(dpid))),
                   groups(dpid)) for dpid in sorted(controller.switches)}


def _python() -> str:
    import sys

    return sys.executable


def _ports(ports: list[int]) -> list[str]:
    return [arg for port in ports for arg in ("--port", str(port))]


def run_cuts(steering: str, cuts: int, seconds: float, folder: Path, switch: str = "ovs",
             progress: Any = print) -> list[dict[str, Any]]:
    """``cuts`` cuts, round-robin over the links that carry chains, on one fabric with ``steering``."""
    spec, source, destination = demo_topology(4)
    chains = demo_chains(source, destination)
    rows = []
    with Scenario(spec, switch=switch, steering=steering) as scenario:
        scenario.add_chains(chains)
        candidates = carrying_links(spec, scenario.controller.fabric, chains)
        if not candidates:
            raise SrfabricError("failover", "no fabric link carries a chain")
        for number in range(cuts):
            link, crossing = candidates[number % len(candidates)]
            progress(f"{steering}: cut {number + 1}/{cuts}: {link.a}:{link.a_port}-{link.b}:{link.b_port} "
                     f"({crossing} chains cross it)")
            row = cut_once(scenario, chains, link, seconds, folder)
            rows.append({"steering": steering, "switch": switch, "cut": number + 1, "chains_crossing": crossing}
                        | row)
    return rows


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Per steering: outage median and p99 over the chains a cut crossed, flow-mods per role per cut."""
    out: dict[str, Any] = {}
    for steering in dict.fromkeys(r["steering"] for r in rows):
        mine = [r for r in rows if r["steering"] == steering]
        crossed = [c for r in mine for c in r["chains"].values() if c["crossed"]]
        hit = sorted(c["outage_ms"] for c in crossed if c["repaired"])
        every = sorted(c["outage_ms"] for r in mine for c in r["chains"].values() if c["repaired"])
        mods = {role: statistics.fmean(r["flow_mods"][role] for r in mine) for role in ("edge", "aggregation", "core")}
        kinds = sorted({kind for r in mine for kind in r["flow_mods_by_kind"]})
        out[steering] = {
            "cuts": len(mine),
            "outage_ms_median": _quantile(hit, 0.5), "outage_ms_p99": _quantile(hit, 0.99),
            "outage_ms_median_all_chains": _quantile(every, 0.5),
            "chains_crossed": len(crossed), "not_repaired": sum(not c["repaired"] for c in crossed),
            "flow_mods_per_cut": {role: round(value, 2) for role, value in mods.items()},
            "flow_mods_per_cut_total": round(sum(mods.values()), 2),
            "flow_mods_per_cut_by_kind": {kind: round(statistics.fmean(r["flow_mods_by_kind"].get(kind, 0)
                                                                       for r in mine), 2) for kind in kinds},
            "in_order": all(c["in_order"] for r in mine for c in r["chains"].values()),
            "tables_as_before_after_restore": all(r["tables_as_before"] for r in mine),
        }
    return out


def _quantile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    return values[min(len(values) - 1, round(q * (len(values) - 1)))]


def plot(rows: list[dict[str, Any]], summary: dict[str, Any], path: Path) -> None:
    """Outage per cut (every chain the cut crossed) and flow-mods per cut by switch role, per steering."""
    from srfabric_tools.lab.plot import pyplot

    plt = pyplot()
    figure, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    for steering in summary:
        points = [(r["cut"], c["outage_ms"]) for r in rows if r["steering"] == steering
                  for c in r["chains"].values() if c["crossed"] and c["repaired"]]
        left.plot([p[0] for p in points], [p[1] for p in points], "o", alpha=0.7, label=steering)
    left.axhline(50, color="grey", linestyle="--", linewidth=0.8, label="50 ms")
    left.set(xlabel="cut", ylabel="outage (ms)", title="outage of each chain a cut crossed")
    left.legend(fontsize=8)
    roles = ("edge", "aggregation", "core")
    width = 0.8 / max(1, len(summary))
    for index, (steering, values) in enumerate(summary.items()):
        right.bar([i + index * width for i in range(len(roles))],
                  [values["flow_mods_per_cut"][role] for role in roles], width, label=steering)
    right.set_xticks([i + width * (len(summary) - 1) / 2 for i in range(len(roles))], roles)
    right.set(ylabel="flow-mods per cut (mean)", title="what each repair sent, by switch role")
    right.legend(fontsize=8)
    for ax in (left, right):
        ax.grid(alpha=0.3)
    figure.suptitle("Link cuts on the demo fat-tree (k=4), three chains at 1,000 frames/s each")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def run_bench(quick: bool, out: str, switch: str = "ovs", progress: Any = print,
              part: str = "all") -> tuple[dict[str, Any], Path]:
    """Both steerings, one after the other in one run (runs.csv, failover.png), then the controller pair's
    take-over (takeover.csv, takeover.png; Open vSwitch only); summary.json for both. ``part``: ``cuts``,
    ``takeover`` or ``all``."""
    from srfabric_tools.bench import takeover
    from srfabric_tools.bench.output import machine, provenance, run_folder, write_csv, write_json, write_runs

    measured_on = machine()
    folder = run_folder(out, "failover")
    cuts, seconds = (2, 3.0) if quick else (20, 3.0)
    rows: list[dict[str, Any]] = []
    for steering in STEERINGS if part in ("all", "cuts") else ():
        rows += run_cuts(steering, cuts, seconds, folder, switch, progress)
    (folder / "received.csv").unlink(missing_ok=True)
    if rows:
        write_runs(folder / "runs.csv", flat_rows(rows), measured_on)
        plot(rows, summarise(rows), folder / "failover.png")
    kills: list[dict[str, Any]] = []
    if part in ("all", "takeover") and switch == "ovs":
        kills = takeover.run_kills(2 if quick else 10, progress)
        write_csv(folder / "takeover.csv", kills)
        takeover.plot(kills, folder / "takeover.png")
    document = {"steerings": summarise(rows), "takeover": takeover.summarise(kills) if kills else None,
                **provenance(measured_on, "srfabric bench failover"), "quick": quick, "switch": switch, "part": part,
                "frames_per_s_per_chain": PPS, "seconds_per_cut": seconds, "goals": goals(summarise(rows), kills)}
    write_json(folder / "summary.json", document)
    return document, folder


def flat_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per chain per cut, for runs.csv."""
    return [{"steering": r["steering"], "switch": r["switch"], "cut": r["cut"], "link": r["link"], "chain": name,
             **{k: c[k] for k in ("crossed", "repaired", "outage_ms", "lost", "delivered", "sent", "in_order")},
             **{f"flow_mods_{role}": r["flow_mods"][role] for role in ("edge", "aggregation", "core")},
             "flow_mods_chain": r["flow_mods_by_kind"].get("chain", 0),
             "flow_mods_route": r["flow_mods_by_kind"].get("route", 0),
             "group_mods": r["flow_mods_by_kind"].get("group", 0), "tables_as_before": r["tables_as_before"]}
            for r in rows for name, c in r["chains"].items()]


def goals(summary: dict[str, Any], kills: list[dict[str, Any]]) -> dict[str, Any]:
    """The issue's goals, each None when its part did not run."""
    sr, hbh = summary.get("source-routing", {}), summary.get("hop-by-hop", {})
    chain_ratio = (hbh["flow_mods_per_cut_by_kind"].get("chain", 0)
                   / max(sr["flow_mods_per_cut_by_kind"].get("chain", 0), 1e-9)) if sr and hbh else None
    return {"outage_median_under_50_ms": bool(sr) and not sr["not_repaired"] and (sr["outage_ms_median"] or 0) < 50
            if sr else None,
            "outage_p99_under_100_ms": bool(sr) and not sr["not_repaired"] and (sr["outage_ms_p99"] or 0) < 100
            if sr else None,
            "source_routing_transit_flow_mods": (sr["flow_mods_per_cut"]["aggregation"]
                                                 + sr["flow_mods_per_cut"]["core"]) if sr else None,
            "chain_flow_mods_hop_by_hop_over_source_routing": round(chain_ratio, 2)
            if chain_ratio is not None else None,
            "all_flow_mods_hop_by_hop_over_source_routing": round(
                hbh["flow_mods_per_cut_total"] / max(sr["flow_mods_per_cut_total"], 1e-9), 2) if sr and hbh else None,
            "leader_takeover_under_2_s_without_loss": all(k["takeover_s"] < 2 and not k["lost"] for k in kills)
            if kills else None}
