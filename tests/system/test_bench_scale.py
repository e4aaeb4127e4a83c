"""``srfabric bench scale --quick``: a controller in a process of its own discovers a k=4 fat-tree of emulated
switches with flow tables, holding ten chains from the start; a chain is added, updated and removed, each to its
last barrier; two links are cut, each repaired to its last barrier; ten streams are admitted through the API and
one more is timed; transit switches hold the same entries whatever the chains and streams. No root needed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from srfabric.cli import main


def test_quick_scale_bench_measures_changes_and_entries_by_role(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "scale", "--quick", "--out", str(tmp_path), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert {p.name for p in Path(summary["folder"]).iterdir()} == {"run.log", "runs.csv", "streams.csv",
                                                                   "summary.json", "scale.png"}
    (run,) = summary["runs"]
    assert (run["k"], run["switches"], run["hosts"], run["chains"]) == (4, 20, 16, 10)
    for op in ("add", "update", "remove"):
        assert len(run[f"{op}_ms"]) == 2 and all(ms > 0 for ms in run[f"{op}_ms"])
    roles = run["entries_by_role"]
    assert roles["core"]["min"] == roles["core"]["max"] and roles["aggregation"]["min"] == roles["aggregation"]["max"]
    assert roles["edge"]["max"] > roles["core"]["max"]  # the chains' state sits at the edges only
    assert "chain_change_k4_ms" in summary and run["rss_mib"] > 0
    # Two uplinks cut, each repaired to its last barrier: the edges' routes and chains move, nothing else needs to.
    assert len(run["repair_ms"]) == 2 and all(ms > 0 for ms in run["repair_ms"])
    assert all(mods > 0 for mods in run["repair_flow_mods"]) and "repair_k4_ms" in summary
    # The largest size (here the only one) has one add and one remove profiled: the sync is under them.
    assert set(run["profile"]) == {"add", "remove"}
    assert any("sync" in row["function"] for row in run["profile"]["add"]["top"])
    # Ten streams admitted through the API on the same fabric, then one more twice (each removed again): only the
    # talkers' edges hold stream state, so transit switches hold what they held with the chains alone.
    (streams,) = summary["stream_runs"]
    assert streams["streams"] == 10 and len(streams["ms"]) == 2 and all(ms > 0 for ms in streams["ms"])
    assert all(ms > 0 for ms in streams["solve_ms"]) and "admission_10_streams_ms" in summary
    assert streams["database_kib"] > 0
    for role in ("core", "aggregation"):
        assert streams["entries_by_role"][role] == roles[role]


def test_streams_only_measures_admission_alone(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--streams-only``: the streams' part without the fat-trees' sizes, its figure beside it."""
    assert main(["bench", "scale", "--quick", "--streams-only", "--out", str(tmp_path), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["runs"] == [] and "chain_change_k4_ms" not in summary
    (streams,) = summary["stream_runs"]
    assert streams["streams"] == 10 and all(ms > 0 for ms in streams["ms"])
    assert "admission_10_streams_ms" in summary and (Path(summary["folder"]) / "scale.png").exists()
