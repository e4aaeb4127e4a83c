"""The lab's pure parts: settings, statistics, rule texts, topologies, command generation."""

from __future__ import annotations

import pytest

from srfabric.errors import ModelError
from srfabric.routing.paths import chain_route
from srfabric_tools.lab.core import Context, Settings
from srfabric_tools.lab.fabric_topos import TABLE_I, chain_between, compute_nodes, line
from srfabric_tools.lab.iperf import Traffic, parse_client_json
from srfabric_tools.lab.netlab import NetLab
from srfabric_tools.lab.run import registry
from srfabric_tools.lab.stats import fit_power_law, summarise
from srfabric_tools.lab.topologies import namespace_chain, ovs_chain
from srfabric_tools.lab.vnfs import iptables_restore, nft_ruleset, spread


def test_settings_defaults_and_limits() -> None:
    assert Settings.choose(False, False) == Settings(5, 10.0, False)
    assert Settings.choose(False, False, reps=3, seconds=4) == Settings(3, 4.0, False)
    with pytest.raises(ModelError, match="--reps"):
        Settings.choose(False, False, reps=0)
    with pytest.raises(ModelError, match="--paper"):
        Settings.choose(True, True)


def test_power_law_recovers_the_loss_per_hop() -> None:
    lengths = list(range(1, 21))
    fit = fit_power_law(lengths, [155 * (1 - 0.11) ** n for n in lengths])
    assert fit.loss == pytest.approx(0.11)
    assert fit.t_in == pytest.approx(155)
    assert fit.r2 == pytest.approx(1.0)
    assert summarise([3.0]).ci95 == 0.0


def test_repeat_records_one_point_per_metric_with_every_run() -> None:
    values = iter([1.0, 3.0, 2.0])
    ctx = Context(NetLab("t", dry_run=True), Settings(3, 1.0))
    medians = ctx.repeat({"n": 1}, lambda: {"gbps": next(values), "rtt_ms": 0.5})
    assert medians == {"gbps": 2.0, "rtt_ms": 0.5}
    assert [p.metric for p in ctx.points] == ["gbps", "rtt_ms"]
    assert ctx.points[0].runs == [1.0, 3.0, 2.0]


def test_rule_files_have_the_asked_number_of_rules() -> None:
    assert iptables_restore(1000, "stateless").count("-j DROP") == 1000
    assert iptables_restore(10, "stateful").count("--ctstate") == 10
    assert nft_ruleset(50, "stateless").count(" drop") == 50
    assert sum(spread(1000, 4)) == 1000
    with pytest.raises(ModelError, match="kind"):
        iptables_restore(1, "stateful-ish")


def test_namespace_chain_routes_every_hop_both_ways() -> None:
    lab = NetLab("t", dry_run=True)
    chain = namespace_chain(lab, 4)
    assert chain.client == "t-src" and chain.server == "t-ns4" and len(chain.forwarders) == 3
    routes = [c for c in lab.commands if " route add " in c]
    # client and two forwarders route towards the server; two forwarders and the server route back
    assert sum(chain.server_ip in r for r in routes) == 3
    assert sum("10.100.0.1/32" in r for r in routes) == 3


def test_ovs_chain_joins_bridges_by_the_asked_method() -> None:
    lab = NetLab("t", dry_run=True)
    ovs_chain(lab, 3, "patch")
    assert sum("type=patch" in c for c in lab.commands) == 2
    lab = NetLab("t", dry_run=True)
    ovs_chain(lab, 3, "veth")
    assert not any("type=patch" in c for c in lab.commands)
    assert all("datapath_type=netdev" in c for c in lab.commands if "add-br" in c)


def test_iperf_parsing_takes_the_receiver_side() -> None:
    report = ('{"end": {"sum_received": {"bits_per_second": 8e9}, "sum_sent": {"retransmits": 3},'
              ' "sum": {"lost_percent": 1.5}}}')
    tcp = parse_client_json(report, Traffic("tcp"))
    assert (tcp.bits_per_second, tcp.retransmits) == (8e9, 3)
    udp = parse_client_json(report, Traffic("udp", length=1000))
    assert udp.packets_per_second == pytest.approx(1e6)
    with pytest.raises(Exception, match="iperf3"):
        parse_client_json('{"error": "unable to connect"}', Traffic())


def test_compute_nodes_chains_route_through_their_functions() -> None:
    spec = compute_nodes()
    fabric = spec.to_fabric()
    for index, (name, functions) in enumerate(TABLE_I.items(), start=1):
        route = chain_route(fabric, chain_between(spec, name, functions, index))
        entered = [h for h in route.hops if (h.dpid, h.port) in {f.ingress for f in fabric.functions.values()}]
        assert len(entered) == len(functions)


def test_line_places_functions_in_order() -> None:
    spec = line(5, 10)
    switches = [spec.functions[f"v{i}"].switch for i in range(1, 11)]
    assert switches == sorted(switches)


def test_every_experiment_is_registered_with_a_quick_grid() -> None:
    experiments = registry()
    assert list(experiments) == ["calibration", "ovs-chain", "ns-chain", "firewall", "shaper", "sfc-throughput",
                                 "sr-vs-rules", "sr-proxy"]
    for experiment in experiments.values():
        assert 0 < experiment.count(Settings.choose(True, False)) <= experiment.count(Settings())
