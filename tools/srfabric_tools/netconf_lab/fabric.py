"""A Mininet fabric's switches as TSN bridges gated over NETCONF: one ``srfabric bridge serve`` per switch (its
ports the switch's, taprio applied by the bridge), listening on the root namespace's side of the controller's
namespace, and the controller (``srfabric serve --gates netconf``) inside that namespace, reaching the bridges
and the switches over TCP only."""

from __future__ import annotations

import time
from functools import partial
from pathlib import Path
from typing import Any

from srfabric.model.topo import TopoSpec
from srfabric_tools.netconf_lab.bridges import BridgeLab, topology_ports
from srfabric_tools.netconf_lab.separate import ControllerNamespace
from srfabric_tools.testbed.gptp import Ptp4l

PATIENCE_S = 30.0  # a NETCONF answer's limit under an emulated CPU (the kernel lab)


class SeparatedBridges:
    """Bridges (``ports`` by bridge, each a ``srfabric bridge serve``) listening on the root namespace's side of
    the controller's namespace, that namespace, and the bridges file the controller reads."""

    def __init__(self, ports: dict[str, list[str]], folder: Path, apply: str = "taprio") -> None:
        self.ports = ports
        self.namespace = ControllerNamespace()
        self.file = folder / "bridges.json"
        self.lab = BridgeLab(ports, folder / "bridges", apply=apply, listen=ControllerNamespace.peer,
                             timeout_s=PATIENCE_S, start_timeout_s=600.0)

    def start(self) -> None:
        self.namespace.__enter__()
        try:
            self.lab.__enter__()
            self.lab.bridges_file(self.file)
        except BaseException:
            self.namespace.remove()
            raise

    def stop(self) -> None:
        try:
            self.lab.close()
        finally:
            self.namespace.remove()


class NetconfBridges(SeparatedBridges):
    """A fabric's switches as separated bridges, and gPTP: ptp4l (802.1AS profile, software timestamps) on every
    bridge's ports and every end station, the first bridge the grandmaster; the domain's state is read as the
    controller would judge it (``domain``)."""

    def __init__(self, spec: TopoSpec, folder: Path, apply: str = "taprio", gptp: bool = True) -> None:
        super().__init__(topology_ports(spec), folder, apply)
        first = sorted(self.ports)[0]
        self.clocks = {name: Ptp4l(folder, name, None, ports, grandmaster=name == first)
                       for name, ports in self.ports.items()} if gptp else {}
        self.stations = {name: Ptp4l(folder, name, None, [f"{name}-eth0"]) for name in sorted(spec.hosts)} \
            if gptp else {}

    def serve_args(self) -> tuple[str, ...]:
        """The controller's gates over NETCONF, and its gPTP gating on every bridge's ptp4l (``--gptp``, through
        the ptp4l's UNIX socket): a stream through a bridge off the domain is refused, and a bridge back gets
        its gates again. The bound is 100 us: software timestamps on veth, on an emulated CPU."""
        clocks = [f"--gptp={name}={clock.socket}" for name, clock in sorted(self.clocks.items())]
        bound = ("--gptp-bound-ns", "100000") if clocks else ()
        return ("--gates", "netconf", "--bridges", str(self.file), "--confirm-timeout-s", "120", *clocks, *bound)

    def domain(self) -> dict[str, Any]:
        """Each bridge's gPTP state now, judged as the controller would (one grandmaster, offset within 100 us)."""
        from srfabric.southbound.pmc import read_clock
        from srfabric.tsn.runtime.clock_watch import ClockWatch

        watch = ClockWatch({name: clock.socket for name, clock in self.clocks.items()}, 100_000, read_clock)
        watch.poll()
        return watch.view()

    def wait_for_domain(self, timeout_s: float = 300.0) -> dict[str, Any]:
        """Until every bridge follows one grandmaster within the bound (or ``timeout_s``): the state then."""
        if not self.clocks:
            return {"formed": None, "ptp4l": "not run"}
        deadline = time.monotonic() + timeout_s
        while True:
            state = self.domain()
            if all(bridge["synced"] for bridge in state.values()) or time.monotonic() > deadline:
                return {"at_start": state, "formed": all(bridge["synced"] for bridge in state.values())}
            time.sleep(1.0)

    def start_clocks(self, testbed: Any) -> None:
        """ptp4l on the bridges (this namespace: the switches' ports) and in each end station's namespaces."""
        for clock in self.clocks.values():
            clock.start()
        for name, station in self.stations.items():
            station.start(partial(testbed.popen, name))

    @staticmethod
    def serve_placement() -> dict[str, Any]:
        return {"netns": ControllerNamespace.name, "host": ControllerNamespace.address}

    def stop(self) -> None:
        for clock in [*self.clocks.values(), *self.stations.values()]:
            clock.stop()
        super().stop()
