"""``srfabric bench capacity-ovs --quick``: srfabric's two steerings and os-ken's ``simple_switch_13`` set up new
flows on the same real Open vSwitch fabric (root), every flow timed across it from kernel stamps."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from srfabric.cli import main
from srfabric_tools.bench.capacity_faucet import faucet_version
from srfabric_tools.bench.peer_controller import SIMPLE_SWITCH_13


def our_bridges() -> list[str]:
    prefix = f"l{os.getpid() % 100000}"
    return [b for b in subprocess.run(["ovs-vsctl", "list-br"], capture_output=True, text=True).stdout.split()
            if b.startswith(prefix)]


@pytest.mark.skipif(os.geteuid() != 0, reason="builds namespaces, veth and Open vSwitch bridges")
@pytest.mark.skipif(not SIMPLE_SWITCH_13.exists() or faucet_version() is None,
                    reason="make bootstrap fetches os-ken's simple_switch_13 and makes .venv-faucet")
def test_quick_capacity_on_ovs_carries_every_flow_of_every_contender(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "capacity-ovs", "--quick", "--out", str(tmp_path), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert {p.name for p in Path(summary["folder"]).iterdir()} == {"run.log", "steps.csv", "summary.json",
                                                                  "capacity-ovs.png"}
    first = {s["contender"]: s for s in summary["steps"] if s["offered"] == 10}
    assert set(first) == {"source-routing", "hop-by-hop", "os-ken simple_switch_13", "faucet"}
    for step in first.values():  # every frame, each from a MAC and 5-tuple never seen, crossed the fabric
        assert step["sent"] == 10 and step["set_up"] == 10, step
        assert 0 < step["p50_ms"] <= step["p99_ms"] <= step["max_ms"]
    assert summary["repetitions"] == 1
    assert set(summary["ratios"]) == {"source-routing over os-ken simple_switch_13",
                                      "hop-by-hop over os-ken simple_switch_13", "source-routing over hop-by-hop",
                                      "source-routing over faucet"}
    assert summary["faucet"].startswith("faucet 1.")
    goal = summary["goals"]["over_os_ken_on_ovs"]
    assert goal["runs"] == 1 and goal["met"] is False  # one repetition judges nothing
    assert our_bridges() == []
