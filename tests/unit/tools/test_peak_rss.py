"""A child's peak resident size is its own, not the benchmark's that started it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from srfabric_tools.bench.process_cpu import peak_rss_mib

pytestmark = pytest.mark.timeout(60)

CHILD = ("import resource; from srfabric_tools.bench.process_cpu import peak_rss_mib; "
         "print(peak_rss_mib(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)")


def test_a_child_started_by_a_large_parent_reports_its_own_peak() -> None:
    held = bytearray(300 << 20)  # the parent holds 300 MiB, every page touched
    for offset in range(0, len(held), 4096):
        held[offset] = 1
    assert peak_rss_mib() > 300
    own, inherited = (float(word) for word in subprocess.run(
        [sys.executable, "-c", CHILD], capture_output=True, text=True, check=True, timeout=60).stdout.split())
    assert own < 150 < 300 < inherited  # ru_maxrss carried the parent's size across exec; VmHWM did not
    del held
