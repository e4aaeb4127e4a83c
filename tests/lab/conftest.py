"""Tests that need a kernel with taprio and openvswitch.ko: they run inside ``srfabric kernel-lab``
(``tests/system/test_lab_suite.py`` boots it) or natively on such a kernel with SRFABRIC_KERNEL_LAB=1."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get("SRFABRIC_KERNEL_LAB") == "1" and os.geteuid() == 0:
        return
    for item in items:
        if "tests/lab/" in str(item.fspath):
            item.add_marker(pytest.mark.skip(reason="needs the kernel lab (taprio, openvswitch.ko)"))


@pytest.fixture(scope="session")
def kernel_ovs() -> Iterator[None]:
    """Open vSwitch with its kernel datapath, started for the session and stopped after it."""
    ctl = "/usr/share/openvswitch/scripts/ovs-ctl"
    subprocess.run([ctl, "start", "--system-id=random", "--delete-bridges"], check=True, capture_output=True)
    try:
        yield
    finally:
        subprocess.run([ctl, "stop"], check=False, capture_output=True)
