"""One running experiment: controller, Mininet fabric, service functions, learned hosts.

Used by ``srfabric demo`` and the integration tests. Leaving the context (also
on an error or Ctrl-C) stops the functions, Mininet and the controller.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from srfabric.controller.controller import Controller
from srfabric.controller.runner import ControllerThread
from srfabric.errors import SrfabricError
from srfabric.model.chain import Chain
from srfabric.model.topo import TopoSpec
from srfabric.rules.entries import Kind
from srfabric.security.pki import make_ca, make_certificate
from srfabric_tools.testbed.net import (
    Testbed,
    controller_config,
    function_args,
    learning_pings,
    start_controller,
    wait_for_discovery,
    wait_for_hosts,
)
from srfabric_tools.testbed.running import Running


class Scenario(Running):
    def __init__(self, spec: TopoSpec, codec: str = "mac-nibble", functions_mark: bool = True,
                 switch: str = "ovs", steering: str = "source-routing", tls: bool = False) -> None:
        self.spec = spec
        self.codec = codec
        self.switch = switch
        self.mark = functions_mark
        config = controller_config(spec, codec)
        config.steering = steering
        self.workdir = Path(tempfile.mkdtemp(prefix="srfabric-"))
        self.pki = self.workdir / "pki" if tls else None  # switches connect over TLS, with a CA of this run's
        if self.pki is not None:
            make_certificate(self.pki, make_ca(self.pki), "controller")
        self.runner = ControllerThread(config, tls=self.pki)
        self.testbed: Testbed | None = None
        self.timings: dict[str, float] = {}
        self._vnfs: dict[str, Any] = {}

    @property
    def controller(self) -> Controller:
        assert self.runner.controller is not None
        return self.runner.controller

    def _mark(self, step: str, since: float) -> None:
        self.timings[step] = round(time.monotonic() - since, 3)

    def start(self) -> None:
        begin = time.monotonic()
        self.testbed = Testbed(self.spec, start_controller(self.runner, self.spec), self.switch, self.codec,
                               tls=self.pki)
        self.testbed.start()
        self._mark("build_s", begin)
        begin = time.monotonic()
        wait_for_discovery(self.runner, self.spec)
        self._mark("discovery_s", begin)
        begin = time.monotonic()
        self.learn_hosts()
        self._mark("host_learning_s", begin)
        for index, name in enumerate(self.spec.functions, start=1):
            self.start_function(name, index)
        self._wait_functions_ready()

    def _wait_functions_ready(self, timeout: float = 15.0) -> None:
        deadline = time.monotonic() + timeout
        for name, process in self._vnfs.items():
            while not self._stats_path(name).exists():
                if process.poll() is not None:
                    raise SrfabricError(name, f"service function exited with status {process.returncode}")
                if time.monotonic() > deadline:
                    raise SrfabricError(name, f"service function not ready within {timeout} s")
                time.sleep(0.02)

    def learn_hosts(self) -> None:
        """Every host ARPs once (a ping to its neighbour), so the controller learns where it is."""
        assert self.testbed is not None
        for name, peer in learning_pings(self.spec):
            self.testbed.node(name).cmd(f"ping -c1 -W1 {peer} >/dev/null 2>&1 &")
        wait_for_hosts(self.runner, self.spec)

    def start_function(self, name: str, mark: int) -> None:
        assert self.testbed is not None
        self._vnfs[name] = self.testbed.popen(name, function_args(name, mark if self.mark else 0,
                                                                  self._stats_path(name)))

    def add_chains(self, chains: list[Chain]) -> float:
        """Install chains one by one; returns the seconds until the last barrier reply."""
        begin = time.monotonic()
        for chain in chains:
            self.runner.call(self.controller.add_chain(chain))
        return time.monotonic() - begin

    def peek_function_stats(self, settle: float = 0.8) -> dict[str, dict[str, Any]]:
        """The counters the running functions last wrote (they write every half second)."""
        time.sleep(settle)
        return {name: self._read_stats(name) for name in self._vnfs}

    def function_stats(self) -> dict[str, dict[str, Any]]:
        """Stop the functions (they write their final counters) and read what each one saw."""
        assert self.testbed is not None
        for process in self._vnfs.values():
            self.testbed.stop_process(process)
        stats = {name: self._read_stats(name) for name in self._vnfs}
        self._vnfs.clear()
        return stats

    def _stats_path(self, function: str) -> Path:
        return self.workdir / f"{function}.json"

    def _read_stats(self, function: str) -> dict[str, Any]:
        path = self._stats_path(function)
        return json.loads(path.read_text()) if path.exists() else {"flows": {}}

    def entry_counts(self) -> dict[str, dict[str, int]]:
        """Per switch: entries by kind and packets dropped as forged, read over OpenFlow."""
        counts = {}
        for dpid in sorted(self.controller.switches):
            name = self.controller.fabric.switches[dpid].name
            stats = self.runner.call(self.controller.channels.entry_stats(dpid))
            kinds = Counter(s.kind.name.lower() if s.kind else "foreign" for s in stats)
            forged = sum(s.packets for s in stats if s.kind == Kind.SECURITY)
            counts[name] = {"total": len(stats), "forged_drops": forged, **kinds}
        return counts

    def stop(self) -> None:
        """The controller first, so that it does not report the fabric's teardown as link and switch failures (it
        says once that it stops); then the fabric."""
        try:
            self.runner.stop()
        finally:
            try:
                if self.testbed is not None:
                    self.testbed.stop()
            finally:
                shutil.rmtree(self.workdir, ignore_errors=True)
