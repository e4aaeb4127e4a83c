"""Link failures on the demo fat-tree in Mininet, on Open vSwitch and on the XDP switch (root).

- A cut aggregation-core link that carries all three chains is repaired at the edges only: transit switches
  receive no flow-mod, every chain's frames keep crossing its functions in order, and once the link is back
  every switch holds exactly the entries it held before. The outage is measured (``srfabric bench failover``
  has it over many cuts); tests do not judge times.
- A link that stops carrying LLDP is declared down within the configured missed intervals.
- A chain with every path cut is reported, and routed again when a path returns.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from srfabric_tools.bench.failover import carrying_links, cut_once
from srfabric_tools.demo import demo_chains, demo_topology
from srfabric_tools.testbed.scenario import Scenario

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(os.geteuid() != 0, reason="builds namespaces and switches")]


@pytest.mark.parametrize("switch", ["ovs", "xdp"])
def test_a_cut_link_is_repaired_at_the_edges(switch: str, tmp_path: Path) -> None:
    spec, source, destination = demo_topology(4)
    chains = demo_chains(source, destination)
    with Scenario(spec, switch=switch) as scenario:
        scenario.add_chains(chains)
        link, crossing = carrying_links(spec, scenario.controller.fabric, chains)[0]
        assert crossing == 3 and "core" in (spec.switches[link.a].role, spec.switches[link.b].role)
        row = cut_once(scenario, chains, link, 3.0, tmp_path)
    assert row["flow_mods"]["aggregation"] == row["flow_mods"]["core"] == 0, row["flow_mods"]
    assert row["flow_mods"]["edge"] > 0
    assert row["tables_as_before"]
    for name, chain in row["chains"].items():
        assert chain["in_order"], (name, chain)
        # The chain carried on after the cut; how many frames a loaded machine drops besides is not the question.
        assert chain["repaired"] and chain["delivered"] >= 0.5 * chain["sent"], (name, chain)


def test_a_link_without_lldp_goes_down_and_a_chain_without_a_path_is_reported() -> None:
    spec, source, destination = demo_topology(4)
    chains = demo_chains(source, destination)
    with Scenario(spec) as scenario:
        controller, runner = scenario.controller, scenario.runner
        scenario.add_chains(chains)
        link, _ = carrying_links(spec, controller.fabric, chains)[0]
        a_end = (spec.dpid(link.a), link.a_port)
        # A flow on one end drops the LLDP frames that arrive there: the link still carries everything else.
        drop = f"table=0,priority=65000,in_port={link.b_port},dl_type=0x88cc"
        subprocess.run(["ovs-ofctl", "-O", "OpenFlow13", "add-flow", link.b, f"{drop},actions=drop"], check=True)
        began = time.monotonic()
        limit = controller.config.lldp_missed * controller.config.lldp_interval
        runner.call(controller.wait_until(lambda: a_end not in controller.fabric.links, limit + 3, "LLDP aging"))
        assert time.monotonic() - began <= limit + 3
        subprocess.run(["ovs-ofctl", "-O", "OpenFlow13", "del-flows", "--strict", link.b, drop], check=True)
        links = 2 * len(spec.links)
        runner.call(controller.wait_until(lambda: len(controller.fabric.links) == links, 10, "the link's return"))
        # Every uplink of the source's edge switch down: no chain has a path; they come back with one uplink.
        edge = spec.hosts[source].switch
        uplinks = [f"{edge}-eth{up.a_port if up.a == edge else up.b_port}" for up in spec.links if edge in (up.a, up.b)]
        for name in uplinks:
            subprocess.run(["ip", "link", "set", name, "down"], check=True)
        runner.call(controller.wait_until(
            lambda: {f"chain {c.name}" for c in chains} <= {p.field for p in controller.problems}, 10, "reported"))
        subprocess.run(["ip", "link", "set", uplinks[0], "up"], check=True)
        runner.call(controller.wait_until(
            lambda: not {f"chain {c.name}" for c in chains} & {p.field for p in controller.problems}, 10,
            "routed again"))
        for name in uplinks[1:]:
            subprocess.run(["ip", "link", "set", name, "up"], check=True)
