"""``srfabric bench neutron``: chains made through a real OpenStack Neutron (Keystone, MariaDB, networking-sfc and
srfabric's drivers with their journal) reaching a Mininet fabric of Open vSwitch switches (h1 - s1 - s2 - s3 - h2,
functions v1 and v2 on s2), as a project's member makes them over Neutron's REST API.

1. Latency: chains made one after another, each timed from the POST to Neutron until srfabric shows it (its API
   shows a chain only once every switch confirmed the chain's entries with a barrier). Neutron's own share is its
   answer to the POST; the rest is the journal's hand-over and srfabric's work.
2. Concurrency: several clients make chains at once: all must reach srfabric, each once, in the journal's order
   (srfabric's rows in the order it stored them, against the journal's sequence numbers).
3. Outage: srfabric stopped for a while as changes are made (creates, renames, deletes): all must arrive once it is
   back, and the first new chain carries UDP through its functions.

Every chain has its own ports, pairs and groups (networking-sfc lets a group serve one chain), through v1 then v2.
"""

from __future__ import annotations

import shutil
import statistics
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from srfabric.errors import SrfabricError
from srfabric_tools.bench.neutron_report import write_results
from srfabric_tools.bench.output import machine
from srfabric_tools.testbed.api_lab import ApiLab, ServeProcess, line_spec
from srfabric_tools.testbed.neutron_api import NeutronApi
from srfabric_tools.testbed.neutron_stack import NeutronStack
from srfabric_tools.testbed.udp_probe import udp_through

PLANS = {"full": {"latency": 30, "clients": 10, "per_client": 10, "outage_s": 60.0, "changes": 20, "backoff_s": 10.0},
         "quick": {"latency": 3, "clients": 2, "per_client": 3, "outage_s": 5.0, "changes": 4, "backoff_s": 2.0}}
GOAL_MEDIAN_MS = 500.0
CHAINS = "sfc/port_chains"


class NeutronBench:
    """The lab, the stack and the member's and compute service's clients; makes the chains' parts."""

    def __init__(self, lab: ApiLab, stack: NeutronStack) -> None:
        self.lab, self.stack = lab, stack
        clouds = stack.state / "clouds.yaml"
        self.alice = NeutronApi(clouds, "alice", stack.url)
        self.compute = NeutronApi(clouds, "compute", stack.url)
        self.hosts: dict[str, str] = {}
        self.network, self.subnet = "", ""
        self.lock = threading.Lock()

    def prepare(self) -> None:
        self.network = self.alice.create("networks", "network", {"name": "fabric"})[0]["id"]
        self.subnet = self.alice.create("subnets", "subnet", {"network_id": self.network, "ip_version": 4,
                                                              "cidr": "10.0.0.0/24", "gateway_ip": None,
                                                              "enable_dhcp": False})[0]["id"]
        for name, host in self.lab.spec.hosts.items():
            port = self.alice.create("ports", "port", {"name": name, "network_id": self.network,
                                                       "mac_address": f"00:00:00:00:00:{host.mac:02x}",
                                                       "fixed_ips": [{"subnet_id": self.subnet,
                                                                      "ip_address": host.ip}]})[0]
            self.compute.update("ports", "port", port["id"], {"binding:host_id": f"compute-{name}"})
            self.hosts[name] = port["id"]

    def groups(self, index: int) -> list[str]:
        """Chain ``index``'s own pair and group at v1 and at v2 (ports bound to the functions' switch ports)."""
        out = []
        for name, function in self.lab.spec.functions.items():
            ends = {}
            for side, number in (("in", function.ingress_port), ("out", function.egress_port)):
                port = self.alice.create("ports", "port", {  # a function's ports need no address
                    "name": f"{name}-{side}-{index}", "network_id": self.network, "device_id": f"{name}-{index}",
                    "fixed_ips": []})[0]
                self.compute.update("ports", "port", port["id"], {
                    "binding:host_id": "compute-1",
                    "binding:profile": {"switch": str(self.lab.spec.dpid(function.switch)), "port": str(number)}})
                ends[side] = port["id"]
            pair = self.alice.create("sfc/port_pairs", "port_pair", {
                "name": f"{name}-{index}", "ingress": ends["in"], "egress": ends["out"],
                "service_function_parameters": {"correlation": "mpls"}})[0]
            out.append(self.alice.create("sfc/port_pair_groups", "port_pair_group", {
                "name": f"{name}s-{index}", "port_pairs": [pair["id"]]})[0]["id"])
        return out

    def classifier(self, udp_port: int) -> str:
        return str(self.alice.create("sfc/flow_classifiers", "flow_classifier", {
            "name": f"udp-{udp_port}", "ethertype": "IPv4", "protocol": "udp",
            "destination_port_range_min": udp_port, "destination_port_range_max": udp_port,
            "logical_source_port": self.hosts["h1"], "logical_destination_port": self.hosts["h2"]})[0]["id"])

    def chain(self, index: int, groups: list[str], classifier: str) -> tuple[str, float]:
        record, took = self.alice.create(CHAINS, "port_chain", {"name": f"chain-{index}", "port_pair_groups": groups,
                                                                "flow_classifiers": [classifier]})
        return str(record["id"]), took

    def held(self) -> set[str]:
        with self.lab.serve.client() as client:
            return {item["id"] for item in client.list("port_chains")}

    def until_held(self, ident: str, timeout_s: float = 60.0) -> float:
        """perf_counter() when srfabric first shows chain ``ident`` (polled every 2 ms)."""
        deadline = time.perf_counter() + timeout_s
        with self.lab.serve.client() as client:
            while time.perf_counter() < deadline:
                try:
                    client.show("port_chains", ident)
                    return time.perf_counter()
                except SrfabricError:
                    time.sleep(0.002)
        raise SrfabricError("bench", f"chain {ident} did not reach srfabric within {timeout_s} s")


def part_latency(bench: NeutronBench, parts: list[tuple[list[str], str]]) -> list[dict[str, float]]:
    rows = []
    for run, (groups, classifier) in enumerate(parts, start=1):
        begin = time.perf_counter()
        ident, neutron_s = bench.chain(run, groups, classifier)
        held = bench.until_held(ident)
        rows.append({"run": run, "neutron_ms": round(neutron_s * 1e3, 2),
                     "fabric_ms": round((held - begin - neutron_s) * 1e3, 2),
                     "total_ms": round((held - begin) * 1e3, 2)})
    return rows


def part_concurrency(bench: NeutronBench, parts: list[tuple[list[str], str]], clients: int,
                     first: int) -> tuple[dict[str, Any], list[str]]:
    """The figures, and the chains made (in the journal's order)."""
    per_client = len(parts) // clients
    begin = time.perf_counter()

    def client(number: int) -> list[str]:
        mine = parts[number * per_client:(number + 1) * per_client]
        return [bench.chain(first + number * per_client + i, *part)[0] for i, part in enumerate(mine)]

    with ThreadPoolExecutor(clients) as pool:
        made = [ident for idents in pool.map(client, range(clients)) for ident in idents]
    deadline = time.monotonic() + 300
    while not set(made) <= bench.held() and time.monotonic() < deadline:
        time.sleep(0.2)
    all_in_s = time.perf_counter() - begin
    journal = [line.split("\t") for line in bench.stack.sql(
        "SELECT object_uuid, state, retry_count FROM neutron.srfabric_journal WHERE object_type = 'port_chain' "
        "AND operation = 'create' ORDER BY seqnum").splitlines()[1:]]
    journal_order = [ident for ident, _, _ in journal if ident in set(made)]
    stored = stored_order(bench.lab.serve.db, set(made))
    return {"chains": len(made), "held": len(set(made) & bench.held()), "journal_rows": len(journal_order),
            "duplicated_rows": len(journal_order) - len(set(journal_order)),
            "not_completed": sum(1 for _, state, _ in journal if state != "completed"),
            "retries": sum(int(retries) for _, _, retries in journal),
            "in_journal_order": stored == journal_order, "all_in_s": round(all_in_s, 2)}, journal_order


def stored_order(db_url: str, idents: set[str]) -> list[str]:
    """The chains in the order srfabric stored them (SQLite's rowid)."""
    import sqlite3

    with sqlite3.connect(db_url.removeprefix("sqlite:///")) as db:
        return [row[0] for row in db.execute("SELECT id FROM port_chains ORDER BY rowid") if row[0] in idents]


def part_outage(bench: NeutronBench, parts: list[tuple[list[str], str]], made: list[str], outage_s: float,
                changes: int, first: int) -> dict[str, Any]:
    creates, renames = changes // 2, changes // 4
    deletes = changes - creates - renames
    serve = bench.lab.serve
    serve.stop()
    stopped = time.monotonic()
    new = [bench.chain(first + i, *parts[i])[0] for i in range(creates)]
    for ident in made[:renames]:
        bench.alice.update(CHAINS, "port_chain", ident, {"name": f"renamed-{ident[:8]}"})
    for ident in made[renames:renames + deletes]:
        bench.alice.delete(CHAINS, ident)
    time.sleep(max(0.0, outage_s - (time.monotonic() - stopped)))
    serve.start()
    back = time.perf_counter()

    def arrived() -> int:
        with serve.client() as client:
            chains = {item["id"]: item for item in client.list("port_chains")}
        return (sum(ident in chains for ident in new)
                + sum(chains.get(ident, {}).get("name") == f"renamed-{ident[:8]}" for ident in made[:renames])
                + sum(ident not in chains for ident in made[renames:renames + deletes]))

    deadline = time.monotonic() + 300
    while (count := arrived()) < changes and time.monotonic() < deadline:
        time.sleep(0.1)
    arrived_s = time.perf_counter() - back
    with serve.client() as client:
        bench.lab.wait_for_discovery(client)
    udp_port = 30000  # the first new chain's classifier
    crossed = False
    for _ in range(20):  # the switches reconnect with their own backoff
        received, seen = udp_through(bench.lab, udp_port, 20)
        crossed = received >= 19 and seen["v1"].get("packets", 0) >= 19 and seen["v2"].get("from_mark_1", 0) >= 19
        if crossed:
            break
    return {"outage_s": outage_s, "changes": changes, "creates": creates, "renames": renames, "deletes": deletes,
            "arrived": count, "arrived_s_after_return": round(arrived_s, 2), "udp_crosses_new_chain": crossed}


def run_neutron(quick: bool, out: str, say: Any = print) -> tuple[dict[str, Any], Path]:
    plan = PLANS["quick" if quick else "full"]
    measured_on = machine()  # the commit as the run begins (the checkout may change while it runs)
    state = Path(tempfile.mkdtemp(prefix="srfabric-bench-neutron-"))
    try:
        summary, latency = run_parts(plan, state, say)
    except SrfabricError:
        say(f"kept for a look: {state} (the servers' logs are in its stack/ folder)")
        raise
    shutil.rmtree(state, ignore_errors=True)
    summary["quick"] = quick
    return summary, write_results(out, summary, latency, measured_on)


def run_parts(plan: dict[str, float], state: Path, say: Any) -> tuple[dict[str, Any], list[dict[str, float]]]:
    """The three parts on one fabric and stack (in ``state``); the summary and the latency rows."""
    concurrent = int(plan["clients"] * plan["per_client"])
    with ServeProcess(f"sqlite:///{state}/srfabric.db") as serve, \
            ApiLab(line_spec(2), serve, declare_functions=False) as lab, \
            NeutronStack(state / "stack", serve.url, serve.token, backoff_max_s=plan["backoff_s"]) as stack:
        bench = NeutronBench(lab, stack)
        bench.prepare()
        creates = int(plan["changes"]) // 2
        count = int(plan["latency"]) + concurrent + creates
        say(f"making the parts of {count} chains (ports, pairs, groups, classifiers) in Neutron")
        with ThreadPoolExecutor(8) as pool:
            groups = list(pool.map(bench.groups, range(count)))
        udp = [10000 + i for i in range(int(plan["latency"]))] + [20000 + i for i in range(concurrent)] \
            + [30000 + i for i in range(creates)]
        with ThreadPoolExecutor(8) as pool:
            classifiers = list(pool.map(bench.classifier, udp))
        parts = list(zip(groups, classifiers, strict=True))
        latency_n = int(plan["latency"])
        say(f"latency: {latency_n} chains one after another")
        latency = part_latency(bench, parts[:latency_n])
        say(f"concurrency: {plan['clients']} clients, {concurrent} chains")
        concurrency, made = part_concurrency(bench, parts[latency_n:latency_n + concurrent], int(plan["clients"]),
                                             latency_n + 1)
        say(f"outage: srfabric stopped {plan['outage_s']} s, {plan['changes']} changes meanwhile")
        outage = part_outage(bench, parts[latency_n + concurrent:], made, float(plan["outage_s"]),
                             int(plan["changes"]), latency_n + concurrent + 1)
    totals = [row["total_ms"] for row in latency]
    summary = {"plan": plan, "latency": {
        "runs": len(latency), "median_ms": round(statistics.median(totals), 1),
        "p90_ms": round(sorted(totals)[int(0.9 * (len(totals) - 1))], 1),
        "neutron_median_ms": round(statistics.median(r["neutron_ms"] for r in latency), 1),
        "fabric_median_ms": round(statistics.median(r["fabric_ms"] for r in latency), 1),
        "goal_median_ms": GOAL_MEDIAN_MS}, "concurrency": concurrency, "outage": outage}
    return summary, latency
