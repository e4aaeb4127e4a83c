"""``tests/lab`` in the kernel lab: OVS's kernel datapath, Mininet and taprio on Debian's kernel under QEMU."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest

from srfabric.kernel_lab.boot import QEMU
from srfabric.kernel_lab.run import guest_command, lab_config, run_in_lab

pytestmark = pytest.mark.skipif(shutil.which(QEMU) is None or shutil.which("ovs-vsctl") is None,
                                reason="needs qemu-system-x86 and Open vSwitch")
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.timeout(1800)  # the guest's own limit is 1,500 s: this one only catches a hang outside it
def test_lab_tests_pass_on_a_taprio_kernel() -> None:
    command = guest_command([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x", "tests/lab"],
                            cwd=str(ROOT))
    result = run_in_lab(lab_config(memory_mb=3072), command, timeout_s=1500)
    assert result.returncode == 0, result.output[-6000:]
    assert re.search(r"\b[1-9]\d* passed", result.output), result.output[-2000:]
    assert "skipped" not in result.output, result.output[-2000:]
