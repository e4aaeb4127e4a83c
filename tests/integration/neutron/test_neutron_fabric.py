"""Chains made in a real OpenStack Neutron (Keystone, MariaDB, networking-sfc, srfabric's drivers) carry traffic on
a Mininet fabric of real Open vSwitch: a project's member makes the network, the hosts' and functions' ports
(the hosts' MACs and addresses as in Mininet), the pairs, groups, classifiers and chains with the ``openstack``
client; the compute service binds the ports as Nova would. UDP and iperf3's TCP cross the functions in order; an
update and a delete reach the switches; a chain srfabric would refuse is refused by Neutron with srfabric's
reason; a chain made while srfabric is killed arrives once it is back."""

from __future__ import annotations

import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from srfabric.errors import SrfabricError
from srfabric_tools.testbed.api_lab import ApiLab, ServeProcess, function_flows, line_spec
from srfabric_tools.testbed.neutron_fabric import NeutronFabric, until
from srfabric_tools.testbed.neutron_stack import NEUTRON_VENV, NeutronStack
from srfabric_tools.testbed.traffic import iperf3_server_args, iperf3_tcp_args, parse_tcp
from srfabric_tools.testbed.udp_probe import udp_through

pytestmark = pytest.mark.skipif(not (NEUTRON_VENV / "bin" / "python").exists(),
                                reason="needs .venv-neutron (make bootstrap)")
FUNCTIONS = ("v1", "v2")


@pytest.fixture(scope="module")
def cloud() -> Iterator[NeutronFabric]:
    state = Path(tempfile.mkdtemp(prefix="srfabric-neutron-"))
    with ServeProcess(f"sqlite:///{state}/srfabric.db") as serve, \
            ApiLab(line_spec(len(FUNCTIONS)), serve, declare_functions=False) as lab, \
            NeutronStack(state / "stack", serve.url, serve.token) as neutron:
        made = NeutronFabric(lab, neutron)
        made.build()
        yield made
    subprocess.run(["rm", "-rf", str(state)], check=False)


def test_host_ports_bind_where_srfabric_learned_their_macs(cloud: NeutronFabric) -> None:
    shown = cloud.neutron.openstack("admin", "port", "show", cloud.ports["h1"])
    assert shown["binding_vif_type"] == "other"
    details = shown["binding_vif_details"]
    assert (details["srfabric_switch"], details["srfabric_port"]) == (cloud.lab.spec.dpid("s1"), 2)


def test_udp_and_iperf3_tcp_cross_the_functions_in_order(cloud: NeutronFabric) -> None:
    udp, tcp = cloud.classifier("udp-7000", "udp", 7000), cloud.classifier("tcp-5201", "tcp", 5201)
    chain = cloud.alice("sfc", "port", "chain", "create", "--port-pair-group", cloud.groups["v1"],
                        "--port-pair-group", cloud.groups["v2"], "--flow-classifier", udp, "--flow-classifier", tcp,
                        "web")["id"]
    until(lambda: chain in cloud.held("port_chains"), "the chain in srfabric")
    received, seen = udp_through(cloud.lab, 7000)
    assert received >= 95 and seen["v1"].get("packets", 0) >= 95, (received, seen)
    assert seen["v2"].get("from_mark_1", 0) >= 95, seen  # v2 got them from v1

    testbed = cloud.lab.testbed
    assert testbed is not None
    server = testbed.popen("h2", iperf3_server_args(5201))
    time.sleep(0.5)
    client = testbed.popen("h1", iperf3_tcp_args(cloud.lab.spec.hosts["h2"].ip, 5201, 2), stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT)
    output, _ = client.communicate(timeout=30)
    testbed.stop_process(server)
    assert parse_tcp(output.decode()).bits_per_second > 1e6
    stats = cloud.lab.function_stats()
    assert function_flows(stats["v2"], "forward").get("tcp:5201", {}).get("from_mark_1", 0) >= 100


def test_an_update_and_a_delete_made_in_neutron_reach_the_switches(cloud: NeutronFabric) -> None:
    [chain] = [c["ID"] for c in cloud.alice("sfc", "port", "chain", "list") if c["Name"] == "web"]
    cloud.neutron.run("alice", "sfc", "port", "chain", "set", "--no-port-pair-group", "--port-pair-group",
                      cloud.groups["v2"], chain)

    def only_v2() -> bool:
        received, seen = udp_through(cloud.lab, 7000, 20)
        return received >= 19 and seen["v1"].get("packets", 0) == 0 and seen["v2"].get("packets", 0) >= 19
    until(only_v2, "the flow through v2 alone", 60)

    cloud.neutron.run("alice", "sfc", "port", "chain", "delete", chain)
    until(lambda: chain not in cloud.held("port_chains"), "the delete in srfabric")
    received, seen = udp_through(cloud.lab, 7000)
    assert received >= 95 and all(not s.get("packets") for s in seen.values()), (received, seen)  # routed past


def test_what_srfabric_would_refuse_neutron_refuses_with_srfabric_s_reason(cloud: NeutronFabric) -> None:
    sourced = cloud.classifier("udp-7001", "udp", 7001, destination=False)
    with pytest.raises(SrfabricError, match="has no destination") as refused:
        cloud.alice("sfc", "port", "chain", "create", "--port-pair-group", cloud.groups["v1"], "--flow-classifier",
                    sourced, "--chain-parameters", "symmetric=true", "both-ways")
    assert "400" in str(refused.value)
    assert [c for c in cloud.alice("sfc", "port", "chain", "list") if c["Name"] == "both-ways"] == []


def test_a_chain_made_while_srfabric_is_killed_arrives_once_it_is_back(cloud: NeutronFabric) -> None:
    udp = cloud.classifier("udp-7002", "udp", 7002)
    cloud.lab.serve.kill()
    chain = cloud.alice("sfc", "port", "chain", "create", "--port-pair-group", cloud.groups["v1"],
                        "--flow-classifier", udp, "late")["id"]  # Neutron answers; its journal keeps the change
    cloud.lab.serve.start()
    until(lambda: chain in cloud.held("port_chains"), "the chain made while srfabric was away", 60)
    with cloud.lab.serve.client() as client:
        cloud.lab.wait_for_discovery(client)
    until(lambda: udp_through(cloud.lab, 7002, 20)[1]["v1"].get("packets", 0) >= 19, "the late chain's flow", 60)
    rows = cloud.neutron.sql("SELECT state, COUNT(*) FROM neutron.srfabric_journal GROUP BY state")
    assert "failed" not in rows and "pending" not in rows, rows


def test_a_chain_with_only_a_source_port_goes_on_by_destination_from_a_service_leaf(cloud: NeutronFabric) -> None:
    """v2 sits on s2, which has no hosts (a service leaf): after v2 the flow is routed to its destination by the
    default routes s2 holds for its functions' traffic."""
    [sourced] = [fc["ID"] for fc in cloud.alice("sfc", "flow", "classifier", "list") if fc["Name"] == "udp-7001"]
    chain = cloud.alice("sfc", "port", "chain", "create", "--port-pair-group", cloud.groups["v2"],
                        "--flow-classifier", sourced, "one-way")["id"]  # (v1's group is the late chain's)
    until(lambda: chain in cloud.held("port_chains"), "the chain in srfabric")
    received, seen = udp_through(cloud.lab, 7001)
    assert received >= 95 and seen["v2"].get("packets", 0) >= 95, (received, seen)
