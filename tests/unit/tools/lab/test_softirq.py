"""The lab's softirq threads are found by name under /proc, and a priority out of SCHED_FIFO's range is refused
before anything changes."""

from __future__ import annotations

from pathlib import Path

import pytest

from srfabric.errors import ModelError
from srfabric_tools.lab.softirq import realtime_softirqs, softirq_threads


def test_only_the_ksoftirqd_threads_are_found(tmp_path: Path) -> None:
    for pid, name in ((12, "ksoftirqd/0"), (20, "ksoftirqd/1"), (31, "kworker/0:1"), (40, "python3")):
        (tmp_path / str(pid)).mkdir()
        (tmp_path / str(pid) / "comm").write_text(name + "\n")
    (tmp_path / "55").mkdir()  # ended while it was read: no comm left
    (tmp_path / "self").mkdir()
    assert softirq_threads(tmp_path) == [12, 20]


@pytest.mark.parametrize("priority", [0, 100, -1])
def test_a_priority_out_of_range_is_refused_naming_it(priority: int) -> None:
    with pytest.raises(ModelError, match="softirq priority: must be in 1..99"), realtime_softirqs(priority):
        pass
