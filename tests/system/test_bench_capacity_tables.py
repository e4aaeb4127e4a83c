"""``srfabric bench capacity-tables --quick``: srfabric (source routing and hop-by-hop rules) and os-ken's
simple_switch_13 on a k=4 fat-tree of emulated switches that keep what they are sent; every flow of the low rate
crosses the whole fabric by the entries its controller installed. No root needed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from srfabric.cli import main
from srfabric_tools.bench.capacity_ovs import PEER
from srfabric_tools.bench.peer_controller import SIMPLE_SWITCH_13


@pytest.mark.skipif(not SIMPLE_SWITCH_13.exists(), reason="make bootstrap fetches os-ken's simple_switch_13")
def test_quick_capacity_on_table_switches_carries_every_low_rate_flow(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "capacity-tables", "--quick", "--out", str(tmp_path), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert {p.name for p in Path(summary["folder"]).iterdir()} == {"run.log", "steps.csv", "summary.json",
                                                                   "capacity-tables.png"}
    assert summary["switches"].startswith("emulated") and summary["job"] == "fresh"
    steps = {(s["contender"], s["offered"]): s for s in summary["steps"]}
    contenders = {"source-routing", "hop-by-hop", PEER}
    assert {name for name, _ in steps} == contenders
    for name in contenders:  # each frame left on its destination host's port, however its controller set it up
        low = steps[(name, 100.0)]
        assert low["sent"] == low["set_up"] >= 100
    # one run: the goal's verdict needs five
    assert summary["goals"]["over_os_ken_on_tables"]["met"] is False
