"""`srfabric bench neutron --quick`: chains made through the real Neutron stack reach the fabric, concurrent
clients' chains arrive once each in the journal's order, and every change made while srfabric was stopped arrives
once it is back, with UDP crossing a new chain's functions; the CSV, JSON and PNG are written. No time is
asserted (the machine is shared); the counts and the order are."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from srfabric_tools.testbed.neutron_stack import NEUTRON_VENV

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(not (NEUTRON_VENV / "bin" / "python").exists(), reason="needs .venv-neutron")]


def test_bench_neutron_quick(tmp_path: Path) -> None:
    run = subprocess.run([sys.executable, "-m", "srfabric", "bench", "neutron", "--quick", "--json", "--out",
                          str(tmp_path)], capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, (run.stdout + run.stderr)[-3000:]
    summary = json.loads(run.stdout.strip().splitlines()[-1])
    assert summary["latency"]["runs"] == 3 and summary["latency"]["neutron_median_ms"] > 0
    concurrency = summary["concurrency"]
    assert (concurrency["chains"], concurrency["held"], concurrency["journal_rows"]) == (6, 6, 6)
    assert concurrency["duplicated_rows"] == 0 and concurrency["not_completed"] == 0
    assert concurrency["in_journal_order"]
    assert summary["outage"]["arrived"] == summary["outage"]["changes"] == 4
    assert summary["outage"]["udp_crosses_new_chain"]
    assert summary["goals"]["concurrent_all_once_in_order"] and summary["goals"]["outage_all_arrived"]
    assert summary["machine"]["commit"] and summary["command"].startswith("srfabric bench neutron")
    folder = Path(summary["folder"])
    assert {p.name for p in folder.iterdir()} == {"run.log", "latency.csv", "summary.json", "neutron.png"}
