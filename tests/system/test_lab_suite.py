"""``tests/lab`` in the kernel lab: OVS's kernel datapath, Mininet and taprio on Debian's kernel under QEMU. The run
starts in the background when collection ends (``conftest.py``); this test waits for it and judges it."""

from __future__ import annotations

import re
import shutil
from typing import Any

import pytest

from srfabric_tools.kernel_lab.boot import QEMU

pytestmark = pytest.mark.skipif(shutil.which(QEMU) is None or shutil.which("ovs-vsctl") is None,
                                reason="needs qemu-system-x86 and Open vSwitch")


@pytest.mark.timeout(1800)  # the guest's own limit is 1,500 s: this one only catches a hang outside it
def test_lab_tests_pass_on_a_taprio_kernel(lab_suite_run: Any) -> None:  # conftest.LabSuiteRun
    code, output = lab_suite_run.outcome(timeout_s=1700)
    assert code == 0, output[-6000:]
    assert re.search(r"\b[1-9]\d* passed", output), output[-2000:]
    assert "skipped" not in output, output[-2000:]
