"""Every lab experiment's quick form, on real namespaces, veth, OVS, iptables, nftables, tc and iperf3."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from srfabric_tools.lab.core import Settings
from srfabric_tools.lab.run import registry, run_experiment


def leftovers(prefix: str) -> list[str]:
    namespaces = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()
    bridges = subprocess.run(["ovs-vsctl", "list-br"], capture_output=True, text=True).stdout.split()
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    return [n for n in namespaces + bridges if n.startswith(prefix)] + [
        line for line in links.splitlines() if f": {prefix}" in line]


@pytest.mark.parametrize("name", list(registry()))
def test_quick_form_measures_every_point_and_cleans_up(name: str, tmp_path: Path) -> None:
    experiment = registry()[name]
    settings = Settings.choose(quick=True, paper=False)
    summary, folder = run_experiment(experiment, settings, tmp_path, show=False)
    gbps = [p for p in summary["points"] if p["metric"] == "gbps"]
    assert gbps and all(p["median"] > 0 for p in gbps)
    assert len({tuple(sorted((k, str(v)) for k, v in p.items() if k not in ("median", "mean", "ci95", "n")))
                for p in gbps}) == experiment.count(settings)
    for produced in ("points.csv", "runs.csv", "summary.json", "commands.txt", f"{name}.png"):
        assert (folder / produced).stat().st_size > 0, produced
    assert folder.parent.parent == tmp_path
    assert summary["comparison"]
    if name == "ns-chain":
        assert set(summary["fit"]) == {"veth", "ovs"}
        # The sign of the loss is a measured trend that two 2-second points cannot promise (tests never assert
        # on performance); what must hold is a fit of the model's form to positive throughputs.
        for link in ("veth", "ovs"):
            fit = summary["fit"][link]
            assert fit["loss_per_hop"] < 1 and fit["t_in_gbps"] > 0 and 0 <= fit["r2"] <= 1
    assert leftovers(f"l{__import__('os').getpid() % 100000}") == []


def test_cli_json_summary(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "srfabric", "lab", "shaper", "--quick", "--json", "--out",
                           str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["experiment"] == "shaper"
    assert all({"namespaces", "median"} <= set(p) for p in summary["points"])
    assert summary["machine"]["cpus"] >= 1


def test_cli_refuses_unknown_experiment_and_bad_settings() -> None:
    for args, field in ((["lab", "nope"], "experiment"), (["lab", "shaper", "--reps", "0"], "--reps"),
                        (["lab", "shaper", "--quick", "--paper"], "--paper")):
        done = subprocess.run([sys.executable, "-m", "srfabric", *args], capture_output=True, text=True, timeout=60)
        assert done.returncode == 2
        assert field in done.stderr and "Traceback" not in done.stderr
