"""A Mininet fabric's switches as TSN bridges gated over NETCONF: one ``srfabric bridge serve`` per switch (its
ports the switch's, taprio applied by the bridge), listening on the root namespace's side of the controller's
namespace, and the controller (``srfabric serve --gates netconf``) inside that namespace, reaching the bridges
and the switches over TCP only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from srfabric.model.topo import TopoSpec
from srfabric_tools.netconf_lab.bridges import BridgeLab, topology_ports
from srfabric_tools.netconf_lab.separate import ControllerNamespace

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
    """A fabric's switches as separated bridges, the controller gating on none of their clocks (see
    :class:`~srfabric_tools.testbed.gptp_domain.GptpDomain` for gPTP beside them)."""

    def __init__(self, spec: TopoSpec, folder: Path, apply: str = "taprio") -> None:
        super().__init__(topology_ports(spec), folder, apply)

    def serve_args(self) -> tuple[str, ...]:
        """The controller's gates over NETCONF, from the bridges file."""
        return ("--gates", "netconf", "--bridges", str(self.file), "--confirm-timeout-s", "120")

    @staticmethod
    def serve_placement() -> dict[str, Any]:
        return {"netns": ControllerNamespace.name, "host": ControllerNamespace.address}
