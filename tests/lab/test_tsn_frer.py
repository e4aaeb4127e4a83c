"""``srfabric lab tsn-frer``'s quick form on the live fabric with taprio: across the cut, the redundant stream
loses nothing and delivers nothing twice, its eliminator having discarded the other tree's copies."""

from __future__ import annotations

from pathlib import Path

from srfabric_tools.lab.core import Settings
from srfabric_tools.lab.run import lookup, run_experiment


def test_a_cut_under_a_redundant_stream_loses_nothing(kernel_ovs: None, tmp_path: Path) -> None:
    summary, folder = run_experiment(lookup("tsn-frer"), Settings(1, 2.0, True), tmp_path, show=False)
    by_metric = {r["metric"]: r["median"] for r in summary["points"]}
    assert (by_metric["redundant_lost"], by_metric["redundant_duplicates"]) == (0, 0), by_metric
    assert summary["eliminator"]["rx-discarded-pkts"] > 0, summary["eliminator"]
    assert (folder / "tsn-frer.png").stat().st_size > 0
