"""Tests that need a kernel with taprio and openvswitch.ko: they run inside ``srfabric kernel-lab``
(``tests/system/test_lab_suite.py`` boots it) or natively on such a kernel with SRFABRIC_KERNEL_LAB=1."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator

import pytest

# What the tests and the processes they start import late. In the guest each file's first read crosses 9p, and
# while the guest waits for it its clock (instructions counted, sleep=off) jumps to its next timer: under the host's
# load a cold import of matplotlib took a test past its timeout. Importing them at collection, outside every
# test's timeout, leaves the tests reading them from the guest's page cache.
# (The API server's own modules come from ``srfabric.api.serve``, which lists them for its own early import.)
LATE_IMPORTS = (
    "rich.console", "rich.progress", "rich.table", "networkx", "srfabric.api.streams.clock_task",
    "srfabric.controller.controller", "srfabric.southbound.taprio", "srfabric.tsn.runtime.clock_watch",
    "srfabric_tools.testbed.stations.endpoints", "srfabric.tsn.runtime.live", "srfabric.xdp.frer",
    "srfabric.xdp.loader",
)
WARM_UP: list[float] = []


def in_kernel_lab() -> bool:
    return os.environ.get("SRFABRIC_KERNEL_LAB") == "1" and os.geteuid() == 0


def pytest_configure(config: pytest.Config) -> None:
    if not in_kernel_lab():
        return
    from srfabric.api.serve import HTTP_MODULES, STATE_MODULES, load_modules
    from srfabric_tools.lab.plot import pyplot
    from srfabric_tools.lab.run import registry

    started = time.monotonic()
    pyplot()  # matplotlib with the Agg backend, as the experiments choose it
    registry(kernel_lab=True)
    load_modules(STATE_MODULES + HTTP_MODULES + LATE_IMPORTS)
    WARM_UP.append(time.monotonic() - started)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if WARM_UP:
        terminalreporter.write_line(f"kernel lab: the late imports took {WARM_UP[0]:.1f} s of guest time at start")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if in_kernel_lab():
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
