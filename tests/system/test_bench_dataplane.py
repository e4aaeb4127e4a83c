"""``srfabric bench dataplane --quick`` runs end to end on real XDP programs, veth and OVS (root)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from srfabric.cli import main


@pytest.mark.skipif(os.geteuid() != 0, reason="loads XDP programs and builds veth links")
def test_quick_dataplane_bench_writes_results(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "dataplane", "--quick", "--out", str(tmp_path), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    folder = Path(summary["folder"])
    assert {p.name for p in folder.iterdir()} == {"run.log", "costs.csv", "rates.csv", "setup.csv", "summary.json",
                                                 "commands.txt", "dataplane.png", "control.png"}
    assert set(summary["per_packet_ns"]) == {"redirect", "sr_mac_nibble", "sr_mac_vlan_mpls", "sre_encap",
                                             "lpm_380k"}
    rate_goals = {"xdp_sr_vs_xdp_lpm_rate", "xdp_sr_vs_ovs_rate"}
    if "rates_refused" in summary:  # a kernel without live frames: the rig's generator cannot run, and it says so
        assert "live frames" in summary["rates_refused"] and summary["rates"] == [] and summary["rate_pps"] == {}
        rate_goals = set()
    else:
        assert set(summary["rate_pps"]) == {"xdp_sr", "xdp_lpm", "ovs_sr", "ovs_rules"}
        assert all(rate > 0 for rate in summary["rate_pps"].values())  # every switch forwarded frames to the sink
        assert set(summary["rate_direct_pps"]) == {"xdp_sr", "xdp_lpm"} and all(summary["rate_direct_pps"].values())
        # Spread over 65,536 destinations (the headline) and with one destination, side by side.
        assert summary["rate_destinations"] == 65_536
        assert set(summary["rate_one_destination_pps"]) == set(summary["rate_pps"])
        assert all(summary["rate_one_destination_pps"].values())
        assert {r["destinations"] for r in summary["rates"]} == {1, 65_536}
    assert {"sr_cost_vs_redirect", "setup_median", "frer_elimination_net"} | rate_goals == set(summary["goals"])
    assert {"frer_pass", "frer_discard"} <= set(summary["per_packet_net_ns"])
    setup, idle = summary["setup_ms"], summary["setup_default_idle_ms"]
    assert {"median", "p99", "up_ms", "header_ms", "controller_ms", "down_ms", "rtt_ms", "switch_ms"} <= set(setup)
    assert setup["topology"] == "fat-tree k=4" and setup["hosts"] == 16
    assert 0 < setup["searched_flows"] <= 16 * 15  # each pair's first flow searched its path, at most once
    assert summary["setup_line_ms"]["topology"] == "line-3"
    assert setup["cpu_latency_us"] == 0 and idle["cpu_latency_us"] is None  # held, then as the machine has it
    for run in (setup, idle):
        assert run["flows"] >= 100 and run["lost"] == 0  # every new flow's first packet was set up and sent on
    assert summary["goals"]["setup_median"]["default_idle_ms"] == idle["median"]
    sizes = summary["control_bytes_per_flow"]
    assert sizes["source_routing"]["switches"] == 1 and sizes["hop_by_hop"]["switches"] == 5  # most pairs: 5
    assert sizes["source_routing"]["down"] < sizes["hop_by_hop"]["down"]
    assert summary["fig9_fat_tree"][-1]["k"] == 48
    (measured,) = summary["fig9_measured"]
    assert measured["k"] == 4 and measured["rules_over_sr"] > 1
    assert abs(measured["sr_model_error"]) < 0.05  # one packet-in, one flow-mod, one packet-out per flow
    assert not list(Path("/sys/fs/bpf/srfabric").glob("bench*"))  # every pinned object was removed
