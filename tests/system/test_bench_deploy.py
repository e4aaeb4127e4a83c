"""`srfabric bench deploy --quick`: every step is timed for every length, the rate run created its chains,
and the CSV, JSON and PNG are written (no figure is asserted: the machine is shared)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration


def test_bench_deploy_quick(tmp_path: Path) -> None:
    run = subprocess.run([sys.executable, "-m", "srfabric", "bench", "deploy", "--quick", "--json", "--out",
                          str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    summary = json.loads(run.stdout.strip().splitlines()[-1])
    assert [row["functions"] for row in summary["by_length"]] == [1, 5, 10]
    for row in summary["by_length"]:
        assert row["runs"] == 3
        assert all(row[f"{step}_ms"] > 0 for step in ("flow_classifier", "port_pair", "port_pair_group",
                                                         "port_chain"))
    assert summary["rate"]["chains"] == 100 and summary["rate"]["chains_per_s"] > 0
    folder = Path(summary["folder"])
    assert {p.name for p in folder.iterdir()} == {"run.log", "deploy.csv", "summary.json", "deploy.png"}
    assert len((folder / "deploy.csv").read_text().splitlines()) == 1 + 3 * 3
