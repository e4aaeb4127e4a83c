"""With no controller running, hosts still resolve each other's addresses, on Open vSwitch and on the XDP switch
(root). The switches keep every path while the controller is away (fail mode secure); a host whose neighbour
entry went stale asks again, and its edge answers for a known host (``rules.arp_answers``). Without that, every
host's traffic stopped about a minute into a controller outage (a soak lost frames this way)."""

from __future__ import annotations

import os

import pytest

from srfabric.codecs.macaddr import mac_to_str
from srfabric_tools.demo import demo_topology
from srfabric_tools.testbed.scenario import Scenario

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(os.geteuid() != 0, reason="builds namespaces and switches")]


@pytest.mark.parametrize("switch", ["ovs", "xdp"])
def test_hosts_resolve_each_other_with_no_controller(switch: str) -> None:
    spec, source, destination = demo_topology(4)
    with Scenario(spec, switch=switch) as scenario:
        assert scenario.testbed is not None
        asker, target = scenario.testbed.node(source), scenario.testbed.node(destination)
        target_ip = spec.hosts[destination].ip
        scenario.runner.stop()  # no controller from here on
        for host in (asker, target):  # every entry forgotten: each must ask again
            host.cmd("ip neigh flush all")
        output = asker.cmd(f"ping -c 3 -i 0.2 -W 2 {target_ip}")
        assert " 0% packet loss" in output or ", 3 received" in output, output
        neighbours = asker.cmd(f"ip neigh show {target_ip}")
        assert mac_to_str(spec.hosts[destination].mac) in neighbours.lower(), neighbours
