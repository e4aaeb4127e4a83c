"""``srfabric bench datapaths --quick``: the rig forwards through every switch it can run here; Open vSwitch's
kernel datapath where its module loads (the kernel lab), and where it does not, the summary says why (root)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from srfabric.cli import main


@pytest.mark.skipif(os.geteuid() != 0, reason="loads XDP programs and builds veth links")
def test_quick_datapaths_bench_forwards_through_every_switch_it_runs(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "datapaths", "--quick", "--out", str(tmp_path), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert {p.name for p in Path(summary["folder"]).iterdir()} == {"run.log", "rates.csv", "summary.json"}
    rates = summary["rate_pps"]
    if "rates_refused" in summary:  # a kernel without live frames: the rig's generator cannot run, and it says so
        assert "live frames" in summary["rates_refused"] and rates == {} and summary["runs"] == []
        return
    assert {"xdp_sr", "xdp_lpm", "ovs_sr", "ovs_rules"} <= set(rates)
    assert all(pps > 0 for pps in rates.values())  # every switch delivered frames to the sink
    kernel = {"ovs_sr_kernel", "ovs_rules_kernel"}
    if summary["kernel_datapath"].startswith("openvswitch.ko does not load"):
        assert not kernel & set(rates)
    else:
        assert kernel <= set(rates)
    assert "xdp_sr over ovs_sr" in summary["ratios"]
