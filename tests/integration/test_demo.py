"""`srfabric demo --json` on the k=4 fat-tree: the issue's acceptance checks, for both codecs."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


@pytest.mark.parametrize("codec", ["mac-nibble", "mac-vlan-mpls"])
def test_demo_report(codec: str) -> None:
    run = subprocess.run([sys.executable, "-m", "srfabric", "demo", "--json", "--codec", codec],
                         capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stderr[-2000:]
    report = json.loads(run.stdout)
    assert len(report["chains"]) == 3
    for chain in report["chains"]:
        assert chain["sent"] > 0
        assert chain["delivered"] >= 0.99 * chain["sent"], chain
        for hop in chain["hops"]:
            assert hop["packets"] >= chain["delivered"], (chain["name"], hop)
            assert hop["after_previous"] >= chain["delivered"], (chain["name"], hop)
        assert all(count == 0 for count in chain["other_vnfs"].values()), chain
    roles = {sw["role"] for sw in report["switches"]}
    assert roles == {"edge", "aggregation", "core"} and len(report["switches"]) == 20
    for switch in report["switches"]:
        assert switch["decode_entries"] > 0
        if switch["role"] != "edge":
            assert switch["chain_entries"] == 0, switch
    assert report["timings_s"]["total_s"] < 60
    leftovers = subprocess.run(["ovs-vsctl", "list-br"], capture_output=True, text=True).stdout.split()
    assert not set(leftovers) & {sw["name"] for sw in report["switches"]}
