"""``srfabric demo``: the OpenStack SFC study's three chains on an emulated k=4 fat-tree.

SFP1: S -> v1 -> v4 -> v7 -> D (UDP 5001), SFP2: S -> v2 -> v4 -> v6 -> D
(UDP 5002), SFP3: S -> v3 -> v4 -> v5 -> D (UDP 5003). The report says what
each chain delivered, what each function saw of it, and what every switch holds.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import time
from typing import Any

from rich.console import Console

from srfabric.errors import SrfabricError
from srfabric.model.chain import Chain, FlowClassifier
from srfabric.model.topo import TopoSpec, fat_tree
from srfabric_tools.report import print_report
from srfabric_tools.testbed.net import ovs_running
from srfabric_tools.testbed.scenario import Scenario
from srfabric_tools.testbed.traffic import iperf3_server_args, iperf3_udp_args, parse_udp

SFPS = {"SFP1": ("v1", "v4", "v7"), "SFP2": ("v2", "v4", "v6"), "SFP3": ("v3", "v4", "v5")}
BASE_PORT = 5001


def demo_topology(k: int) -> tuple[TopoSpec, str, str]:
    """A fat-tree with v1..v7 spread over the edge switches of pods 1..k-1; S in pod 0, D in the last pod."""
    spec = fat_tree(k)
    edges = [name for name, sw in spec.switches.items() if sw.role == "edge"]
    half = k // 2
    placement = {"v1": 1, "v2": 1, "v3": 1, "v4": 2, "v5": 3, "v6": 3, "v7": 3}
    for index, (name, pod) in enumerate(placement.items()):
        pod = min(pod, k - 1)
        spec.add_function(name, edges[pod * half + index % half])
    hosts = list(spec.hosts)
    return spec, hosts[0], hosts[-1]


def demo_chains(source: str, destination: str) -> list[Chain]:
    return [
        Chain(name, FlowClassifier(protocol="udp", destination_port_range=(BASE_PORT + i, BASE_PORT + i)),
              functions, source, destination, chain_id=i + 1)
        for i, (name, functions) in enumerate(SFPS.items())
    ]


def run_traffic(scenario: Scenario, chains: list[Chain], rate: str, seconds: float) -> dict[str, Any]:
    """One iperf3 UDP session per chain, all at once; returns the parsed client results."""
    assert scenario.testbed is not None
    tb = scenario.testbed
    assert chains[0].destination is not None  # the scenarios' chains end at a host
    destination = scenario.spec.hosts[chains[0].destination]
    servers = [tb.popen(destination.name, iperf3_server_args(BASE_PORT + i)) for i in range(len(chains))]
    time.sleep(0.5)
    clients = [
        tb.popen(chain.source, iperf3_udp_args(destination.ip, BASE_PORT + i, rate, seconds),
                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        for i, chain in enumerate(chains)
    ]
    results = {}
    for chain, client in zip(chains, clients, strict=True):
        try:
            output, _ = client.communicate(timeout=seconds + 30)
        except subprocess.TimeoutExpired:
            raise SrfabricError(chain.name, f"iperf3 did not finish within {seconds + 30} s") from None
        results[chain.name] = parse_udp(output.decode())
    for server in servers:
        tb.stop_process(server)
    return results


def build_report(
    scenario: Scenario, chains: list[Chain], traffic: dict[str, Any], deploy_s: float, topology: str
) -> dict[str, Any]:
    functions = scenario.function_stats()
    counts = scenario.entry_counts()
    marks = {name: index for index, name in enumerate(scenario.spec.functions, start=1)}
    report_chains = []
    for i, chain in enumerate(chains):
        key = f"udp:{BASE_PORT + i}"
        hops = []
        previous = 0
        for name in chain.functions:
            seen = functions[name]["flows"].get("forward", {}).get(key, {})
            hops.append({"vnf": name, "packets": int(seen.get("packets", 0)),
                         "after_previous": int(seen.get(f"from_mark_{previous}", 0))})
            previous = marks[name]
        outside = {name: int(stats["flows"].get("forward", {}).get(key, {}).get("packets", 0))
                   for name, stats in functions.items() if name not in chain.functions}
        result = traffic[chain.name]
        report_chains.append({
            "name": chain.name, "classifier": key, "functions": list(chain.functions),
            "sent": result.sent, "delivered": result.delivered,
            "delivered_pct": round(100.0 * result.delivered / result.sent, 2) if result.sent else 0.0,
            "hops": hops, "other_vnfs": outside,
        })
    switches = []
    for name, spec in scenario.spec.switches.items():
        count = counts.get(name, {})
        switches.append({
            "name": name, "role": spec.role, "dpid": f"{spec.dpid:#x}",
            "decode_entries": count.get("decode", 0), "chain_entries": count.get("chain", 0),
            "route_entries": count.get("route", 0), "total_entries": count.get("total", 0),
            "forged_drops": count.get("forged_drops", 0),
        })
    return {
        "codec": scenario.codec, "switch": scenario.switch, "topology": topology,
        "timings_s": {**scenario.timings, "deploy_3_chains_s": round(deploy_s, 4)},
        "chains": report_chains, "switches": switches,
    }


def check_host(switch: str = "ovs") -> None:
    """Refuse early, with the reason, where the testbed cannot run."""
    if os.geteuid() != 0:
        raise SrfabricError("demo", "needs root: Mininet creates network namespaces and veth links")
    if shutil.which("ovs-vsctl") is None:
        raise SrfabricError("demo", "Open vSwitch is not installed; run `make bootstrap`")
    if switch == "ovs" and not ovs_running():
        raise SrfabricError("demo", "ovs-vswitchd is not running; run `make bootstrap` to start it")


def run_demo(args: argparse.Namespace) -> int:
    console = Console(stderr=True)
    if args.k < 4:
        raise SrfabricError("k", f"the demo needs a fat-tree with k >= 4 (pods for seven functions), got {args.k}")
    check_host(args.switch)
    spec, source, destination = demo_topology(args.k)
    chains = demo_chains(source, destination)
    begin = time.monotonic()
    with console.status("building the fabric and discovering it") as status, \
            Scenario(spec, args.codec, switch=args.switch, tls=True) as scenario:
        status.update("deploying three chains")
        deploy_s = scenario.add_chains(chains)
        status.update(f"sending {args.rate}bit/s of UDP on each chain for {args.duration} s")
        traffic = run_traffic(scenario, chains, args.rate, args.duration)
        status.update("collecting counters")
        report = build_report(scenario, chains, traffic, deploy_s, f"fat-tree k={args.k}")
        status.update("tearing down")
    report["timings_s"]["total_s"] = round(time.monotonic() - begin, 2)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print_report(report)
    ok = all(c["delivered"] >= 0.99 * c["sent"] and c["sent"] > 0 for c in report["chains"])
    return 0 if ok else 1
