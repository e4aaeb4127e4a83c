"""``srfabric kernel-lab run`` boots Debian's kernel under QEMU and runs a command with taprio on veth."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from srfabric_tools.kernel_lab.boot import QEMU
from srfabric_tools.kernel_lab.run import guest_command, lab_config, run_in_lab

pytestmark = pytest.mark.skipif(shutil.which(QEMU) is None, reason="qemu-system-x86 is not installed")

SCRIPT = """
ip link add name tsn0 numtxqueues 8 numrxqueues 8 type veth peer name tsn1
ip link set tsn0 up && ip link set tsn1 up
tc qdisc replace dev tsn0 parent root handle 100 taprio num_tc 2 map 0 0 0 0 0 0 0 1 0 0 0 0 0 0 0 0 \
  queues 1@0 1@1 base-time 0 sched-entry S 02 300000 sched-entry S 01 700000 clockid CLOCK_TAI
tc qdisc show dev tsn0 | head -3
lsmod | grep -c '^openvswitch'
echo written > "$1/out.txt"
exit 7
"""


def test_a_command_runs_on_a_taprio_kernel_and_brings_back_its_code_output_and_files(tmp_path: Path) -> None:
    lab = lab_config(memory_mb=1024, shares=(tmp_path,))
    result = run_in_lab(lab, guest_command(["bash", "-c", SCRIPT, "lab", str(tmp_path)], cwd=str(tmp_path)), 600)
    assert result.returncode == 7, result.console[-2000:]
    assert "qdisc taprio 100: root" in result.output
    assert "cycle-time 1000000" in result.output
    assert (tmp_path / "out.txt").read_text() == "written\n"
