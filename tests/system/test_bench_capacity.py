"""``srfabric bench capacity --quick``: the controller in a process of its own discovers a k=4 fat-tree of
emulated switches over real TCP OpenFlow channels and sets up every new flow; os-ken's simple_switch_13 runs
under the same generator, its packet-outs followed hop by hop, and faucet (the bootstrap's) after them. No root
needed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from srfabric.cli import main
from srfabric.model.topo import fat_tree
from srfabric.routing.paths import host_route


def mean_switches_per_path(k: int) -> float:
    fabric = fat_tree(k).to_fabric()
    hosts = sorted(fabric.hosts.values(), key=lambda h: h.name)
    counts = [len(host_route(fabric, (a.dpid, a.port), b.name).visits()) for a in hosts for b in hosts if a != b]
    return sum(counts) / len(counts)


def test_quick_capacity_bench_sets_up_every_flow(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "capacity", "--quick", "--out", str(tmp_path), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    made = {p.name for p in Path(summary["folder"]).iterdir()}
    assert made == {"run.log", "steps.csv", "summary.json", "capacity.png"}
    steps = {(s["steering"], s["offered"]): s for s in summary["steps"]}
    ours = {(steering, rate) for steering in ("source-routing", "hop-by-hop") for rate in (500, 2000)}
    assert set(steps) == ours | {("os-ken simple_switch_13", rate) for rate in (50, 200)}
    peer = steps[("os-ken simple_switch_13", 50)]
    assert peer["sent"] == 50 and peer["set_up"] == 50  # followed switch by switch to the destination's port
    assert peer["flow_mods_per_flow"] > 2  # a flow-mod at every switch it decides for, as hop-by-hop does
    low_sr, low_rules = steps[("source-routing", 500)], steps[("hop-by-hop", 500)]
    for step in (low_sr, low_rules):
        assert step["sent"] == 500 and step["set_up"] == 500  # every packet-in answered by its packet-out
    # Source routing tells the ingress switch only; hop-by-hop every switch on the path, with a barrier to
    # each past the first (random pairs: about the fat-tree's mean path).
    assert low_sr["flow_mods_per_flow"] == 1.0 and low_sr["barriers_per_flow"] == 0.0
    mean = mean_switches_per_path(4)
    assert abs(low_rules["flow_mods_per_flow"] - mean) < 0.3
    assert abs(low_rules["barriers_per_flow"] - (mean - 1)) < 0.3
    # faucet configured every switch, learned each host from its announcement, and then needed to send nothing
    # for a new flow between learned hosts.
    faucet = summary["faucet"]
    configure, announce, flows = faucet["phases"]
    assert configure["flow_mods"] >= 20 and announce["flow_mods"] > 0 and not faucet["exceptions"]
    assert flows["packet_ins"] == 500 and flows["flow_mods"] == flows["packet_outs"] == 0
