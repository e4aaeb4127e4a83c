"""A testbed whose process was killed with SIGKILL leaves its switches' links and the processes it started in its
nodes behind; the next testbed with the same switch names removes them (by the names and process ids its record
keeps) and starts (root)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from srfabric.model.topo import TopoSpec
from srfabric_tools.testbed import net

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(os.geteuid() != 0 or not net.ovs_running(), reason="builds links and OVS bridges")]

BUILD_AND_WAIT = textwrap.dedent("""
    import sys, time
    from srfabric.model.topo import TopoSpec
    from srfabric_tools.testbed.net import Testbed
    spec = TopoSpec(); spec.add_switch("lk1"); spec.add_switch("lk2"); spec.add_link("lk1", "lk2")
    spec.add_host("lkh1", "lk1")
    testbed = Testbed(spec, 6699)
    testbed.start()
    sleeper = testbed.popen("lkh1", [sys.executable, "-c", "import time; time.sleep(600)", "srfabric-test"])
    print("built", sleeper.pid, flush=True)
    time.sleep(600)
""")


def line_of_two() -> TopoSpec:
    spec = TopoSpec()
    spec.add_switch("lk1")
    spec.add_switch("lk2")
    spec.add_link("lk1", "lk2")
    spec.add_host("lkh1", "lk1")
    return spec


def test_a_testbed_after_a_killed_one_removes_its_links_and_starts() -> None:
    child = subprocess.Popen([sys.executable, "-c", BUILD_AND_WAIT], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        said, sleeper = child.stdout.readline().split()
        assert said == "built"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    assert Path("/sys/class/net/lk1-eth1").exists() and Path(f"/proc/{sleeper}").exists()  # what the killed one left

    testbed = net.Testbed(line_of_two(), 6699)
    try:
        testbed.start()
        assert Path("/sys/class/net/lk1-eth1").exists()
        assert not Path(f"/proc/{sleeper}").exists() or "zombie" in Path(f"/proc/{sleeper}/status").read_text()
    finally:
        testbed.stop()
    assert not Path("/sys/class/net/lk1-eth1").exists()
