"""Integration tests need root, Open vSwitch and Mininet; they build and remove their own namespaces."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    missing = []
    if os.geteuid() != 0:
        missing.append("root")
    if shutil.which("ovs-vsctl") is None:
        missing.append("Open vSwitch")
    for item in items:
        if "integration" in Path(str(item.fspath)).parts:  # tests/integration (not, say, integrations/)
            item.add_marker(pytest.mark.integration)
            if missing:
                item.add_marker(pytest.mark.skip(reason=f"needs {', '.join(missing)}"))
