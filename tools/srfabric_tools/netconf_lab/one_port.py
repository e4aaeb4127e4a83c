"""One port gated over NETCONF from the controller's namespace, for an experiment with no controller (Fig. 9):
the port's bridge (``srfabric bridge serve``, taprio) in this namespace, each schedule pushed by
``netconf_lab.push`` run in the controller's namespace, so the gates cross TCP as under ``serve --gates
netconf``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import TracebackType
from typing import Any

from srfabric.errors import ModelError
from srfabric_tools.netconf_lab.fabric import SeparatedBridges
from srfabric_tools.netconf_lab.separate import ControllerNamespace

BRIDGE = "vs"


class NetconfPort:
    def __init__(self, port: str, folder: Path, cycle_ns: int = 1_000_000) -> None:
        self.port, self.cycle_ns = port, cycle_ns
        self.bridges = SeparatedBridges({BRIDGE: [port]}, folder)
        self.pushes: list[dict[str, Any]] = []

    def __enter__(self) -> NetconfPort:
        self.bridges.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.bridges.stop()
    def push(self, open_us: int | None) -> None:
        """Priority 7 open for ``open_us`` of each cycle (None: no list); returns once the bridge runs it."""
        what = ["--release"] if open_us is None else ["--open-ns", str(open_us * 1000)]
        done = subprocess.run(["ip", "netns", "exec", ControllerNamespace.name, sys.executable, "-m",
                               "srfabric_tools.netconf_lab.push", "--bridges", str(self.bridges.file),
                               "--bridge", BRIDGE, "--port", self.port, "--cycle-ns", str(self.cycle_ns), *what],
                              capture_output=True, text=True, timeout=900)
        if done.returncode:
            raise ModelError("netconf push", done.stderr.strip()[-600:])
        result = json.loads(done.stdout.strip().splitlines()[-1])
        if result["not_switched"]:
            log = (self.bridges.lab.made[BRIDGE].state / "serve.log").read_text()[-1500:]
            raise ModelError("netconf push", f"the bridge does not run the list: {result['not_switched']}; its "
                                             f"log ends: {log}")
        self.pushes.append({"open_us": open_us, **result})
