"""`srfabric bench netconf --quick`: 7 real netconfd bridges over SSH, every change committed and confirmed on every
bridge and every bridge's oper state running the last one; the CSV, JSON and PNG written, the summary saying
taprio was not run here. No time is asserted: the machine is shared."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]


def test_bench_netconf_quick(tmp_path: Path) -> None:
    run = subprocess.run([sys.executable, "-m", "srfabric", "bench", "netconf", "--quick", "--json", "--out",
                          str(tmp_path)], capture_output=True, text=True, timeout=540)
    assert run.returncode == 0, run.stderr[-2000:]
    summary = json.loads(run.stdout.strip().splitlines()[-1])
    assert summary["bridges"] == 7 and len(summary["runs"]) == 2
    assert summary["not_switched"] == [] and summary["goals"]["every_bridge_switched"]["met"]
    assert summary["taprio"].startswith("not run")
    assert all(run["noop_commit_ms"] > 0 and run["round_trip_ms"] > 0 for run in summary["runs"])
    folder = Path(summary["folder"])
    assert {p.name for p in folder.iterdir()} == {"run.log", "changes.csv", "summary.json", "netconf.png"}
    assert len((folder / "changes.csv").read_text().splitlines()) == 1 + 2 * 10
