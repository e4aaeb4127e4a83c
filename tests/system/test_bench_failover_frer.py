"""`srfabric bench failover --frer --quick`: two link cuts under a redundant stream beside a single-path one, on
real Open vSwitch; the redundant stream loses nothing and delivers nothing twice, the files are written, and the
summary says where it ran. Counts are asserted, no time."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from srfabric_tools.testbed.net import ovs_running

pytestmark = [pytest.mark.integration, pytest.mark.skipif(not ovs_running(), reason="needs ovs-vswitchd")]


def test_bench_failover_frer_quick(tmp_path: Path) -> None:
    run = subprocess.run([sys.executable, "-m", "srfabric", "bench", "failover", "--frer", "--quick", "--json",
                          "--out", str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, (run.stdout + run.stderr)[-3000:]
    summary = json.loads(run.stdout.strip().splitlines()[-1])
    assert summary["cuts"] == 2
    assert (summary["redundant"]["lost"], summary["redundant"]["delivered_twice"]) == (0, 0)
    assert summary["goals"] == {"no_frame_lost": True, "no_frame_twice": True}
    assert summary["paths"]["second_path"] == ["s1", "s3", "s4", "s5"]
    assert summary["machine"]["commit"] and summary["command"].startswith("srfabric bench failover --frer")
    assert {p.name for p in Path(summary["folder"]).iterdir()} == {"run.log", "cuts.csv", "summary.json"}
