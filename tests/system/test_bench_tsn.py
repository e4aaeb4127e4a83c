"""``srfabric bench tsn --quick`` runs end to end and writes its CSV, JSON and plot."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from srfabric.cli import main


def test_quick_bench_writes_results(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "tsn", "--quick", "--out", str(tmp_path), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    folder = Path(summary["folder"])
    assert {p.name for p in folder.iterdir()} == {"run.log", "runs.csv", "summary.json", "fig4.png"}
    assert set(summary["quality_vs_sur"]) == {"spr", "sfr", "incremental", "repair", "repair+reopt", "batch",
                                           "any-moves"}
    assert summary["repair_vs_any_moves"]["scenarios"] == 2
    assert summary["repair_single_admission_ms"]["admissions"] > 0
    for quality in summary["quality_vs_sur"].values():
        assert 0 < quality["mean"] <= 1
    assert {"spr_speedup_vs_paper", "sfr_speedup_vs_paper", "sur_100_flows_under_10s", "incremental",
            "admission_with_repair"} <= set(
        summary["goals"]
    )
    assert (folder / "fig4.png").read_bytes()[:4] == b"\x89PNG"
