"""A Mininet fabric's switches as TSN bridges gated over NETCONF: one ``srfabric bridge serve`` per switch (its
ports the switch's, taprio applied by the bridge), listening on the root namespace's side of the controller's
namespace, and the controller (``srfabric serve --gates netconf``) inside that namespace, reaching the bridges
and the switches over TCP only."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

from srfabric.model.topo import TopoSpec
from srfabric_tools.netconf_lab.bridges import BridgeLab, topology_ports
from srfabric_tools.netconf_lab.separate import ControllerNamespace
from srfabric_tools.testbed.gptp import Ptp4l

PATIENCE_S = 30.0  # a NETCONF answer's limit under an emulated CPU (the kernel lab)


class NetconfBridges:
    """The bridges, the controller's namespace and gPTP: ptp4l (802.1AS profile, software timestamps) on every
    bridge's ports and every end station, the first bridge the grandmaster; the controller watches each bridge's
    offset (``serve --gptp``) and schedules nothing through a bridge off it."""

    def __init__(self, spec: TopoSpec, folder: Path, apply: str = "taprio") -> None:
        self.spec = spec
        self.namespace = ControllerNamespace()
        self.file = folder / "bridges.json"
        self.ports = topology_ports(spec)
        self.lab = BridgeLab(self.ports, folder / "bridges", apply=apply, listen=ControllerNamespace.peer,
                             timeout_s=PATIENCE_S, start_timeout_s=600.0)
        first = sorted(self.ports)[0]
        self.clocks = {name: Ptp4l(folder, name, None, ports, grandmaster=name == first)
                       for name, ports in self.ports.items()}
        self.stations = {name: Ptp4l(folder, name, None, [f"{name}-eth0"]) for name in sorted(spec.hosts)}

    def serve_args(self) -> tuple[str, ...]:
        gptp = [word for name, clock in self.clocks.items() for word in ("--gptp", f"{name}={clock.socket}")]
        return ("--gates", "netconf", "--bridges", str(self.file), "--confirm-timeout-s", "120", *gptp,
                "--gptp-bound-ns", "100000")

    def start_clocks(self, testbed: Any) -> None:
        """ptp4l on the bridges (this namespace: the switches' ports) and in each end station's namespaces."""
        for clock in self.clocks.values():
            clock.start()
        for name, station in self.stations.items():
            station.start(partial(testbed.popen, name))

    @staticmethod
    def serve_placement() -> dict[str, Any]:
        return {"netns": ControllerNamespace.name, "host": ControllerNamespace.address}

    def start(self) -> None:
        self.namespace.__enter__()
        try:
            self.lab.__enter__()
            self.lab.bridges_file(self.file)
        except BaseException:
            self.namespace.remove()
            raise

    def stop(self) -> None:
        for clock in [*self.clocks.values(), *self.stations.values()]:
            clock.stop()
        try:
            self.lab.close()
        finally:
            self.namespace.remove()
