"""A testbed's record of its names is removed, with what it names, only once the process that wrote it is gone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from srfabric_tools.testbed.records import Record, alive, remove_dead


def a_dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True)
    return int(done.stdout)


def test_a_live_testbeds_record_is_kept_and_a_dead_ones_is_removed(tmp_path: Path) -> None:
    mine = Record(tmp_path)
    mine.write(["s1", "s2"], {"h1": 1})
    dead = tmp_path / "dead.json"
    dead.write_text(json.dumps({"pid": a_dead_pid(), "start": "1", "switches": [], "hosts": {}}))
    damaged = tmp_path / "damaged.json"
    damaged.write_text("{not json")

    assert remove_dead(tmp_path) == []
    assert sorted(path.name for path in tmp_path.iterdir()) == [mine.path.name]
    kept = json.loads(mine.path.read_text())
    assert kept["pid"] == os.getpid() and kept["switches"] == ["s1", "s2"] and alive(kept)
    mine.remove()
    assert list(tmp_path.iterdir()) == []


def test_a_reused_pid_with_another_start_time_is_not_the_same_process() -> None:
    assert not alive({"pid": os.getpid(), "start": "0"})
