"""tests/system holds the benchmarks and the kernel lab end to end: marked ``system`` so ``make unit`` leaves them
out.

The kernel lab's suite (``test_lab_suite.py``: ``tests/lab`` in one QEMU guest, about ten minutes of one core)
starts in the background as soon as collection has selected it, and its test collects the outcome. Everything
else runs meanwhile: the other tests mostly wait on namespaces, sockets and subprocesses, and the guest has its
own kernel, namespaces and Open vSwitch, and counts time in instructions, so the host's load does not shift what
it measures. Where the guest waits on this machine's files (9p) it does: ``tests/lab/conftest.py`` imports what
the tests would read late before any test's timeout starts."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from srfabric_tools.kernel_lab.boot import QEMU

HERE = Path(__file__).parent
ROOT = HERE.parents[1]
LAB_SUITE = HERE / "test_lab_suite.py"
GUEST_LIMIT_S = 1500  # the guest's own limit; the test waits a little longer


class LabSuiteRun:
    """``srfabric kernel-lab run -- pytest tests/lab`` in a session of its own, its output in a file."""

    def __init__(self) -> None:
        handle, name = tempfile.mkstemp(prefix="srfabric-lab-suite-", suffix=".log")
        self.log = Path(name)
        with os.fdopen(handle, "w") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "srfabric", "kernel-lab", "run", "--memory-mb", "3072",
                 "--timeout", str(GUEST_LIMIT_S), "--", sys.executable, "-m", "pytest", "-q", "-p",
                 "no:cacheprovider", "-x", "--durations=10", "tests/lab"],
                cwd=ROOT, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)

    def outcome(self, timeout_s: float) -> tuple[int, str]:
        """The exit code and output, once the guest is done (``subprocess.TimeoutExpired`` after ``timeout_s``)."""
        code = self.process.wait(timeout_s)
        return code, self.log.read_text(errors="replace")

    def stop(self) -> None:
        """SIGTERM first: ``kernel-lab run`` then stops QEMU itself; the whole session if it does not."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self.log.unlink(missing_ok=True)


RUNS: list[LabSuiteRun] = []


def lab_suite_can_run() -> bool:
    return shutil.which(QEMU) is not None and shutil.which("ovs-vsctl") is not None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.system)


def pytest_collection_finish(session: pytest.Session) -> None:
    selected = any(Path(str(item.fspath)) == LAB_SUITE for item in session.items)
    if selected and lab_suite_can_run() and not session.config.option.collectonly:
        RUNS.append(LabSuiteRun())


def pytest_unconfigure(config: pytest.Config) -> None:
    while RUNS:
        RUNS.pop().stop()


@pytest.fixture
def lab_suite_run() -> Iterator[LabSuiteRun]:
    """The background run started when collection ended (one is started here if it was not)."""
    if not RUNS:
        RUNS.append(LabSuiteRun())
    yield RUNS[0]
