"""A Mininet fabric's hosts and service functions made in OpenStack Neutron as an operator would, with the
``openstack`` client: a project's member (``alice``) makes the network, the hosts' ports (Mininet's MACs and
addresses) and the functions' ports, pairs and groups; the compute service binds the ports as Nova does (hosts to
a compute host, which srfabric's ML2 driver places by the MAC srfabric learned; functions also to their fabric
switch and port). Used by ``srfabric neutron-demo`` and the Neutron end-to-end tests."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from srfabric.errors import SrfabricError
from srfabric_tools.testbed.api_lab import ApiLab
from srfabric_tools.testbed.neutron_stack import NeutronStack


@dataclass
class NeutronFabric:
    """The running lab, the Neutron stack, and the ids of what the member made (ports by name, groups by
    function)."""

    lab: ApiLab
    neutron: NeutronStack
    say: Callable[[str], None] = lambda _: None
    ports: dict[str, str] = field(default_factory=dict)
    groups: dict[str, str] = field(default_factory=dict)

    def alice(self, *words: str) -> Any:
        self.say("openstack --os-cloud alice " + " ".join(words))
        return self.neutron.openstack("alice", *words)

    def compute(self, *words: str) -> None:
        self.say("openstack --os-cloud compute " + " ".join(words))
        self.neutron.run("compute", *words)

    def held(self, collection: str) -> set[str]:
        """The ids srfabric holds of ``collection`` (as its API lists them)."""
        with self.lab.serve.client() as client:
            return {item["id"] for item in client.list(collection)}

    def classifier(self, name: str, protocol: str, port: int, destination: bool = True) -> str:
        ends = ["--logical-source-port", self.ports["h1"],
                *(["--logical-destination-port", self.ports["h2"]] if destination else [])]
        return str(self.alice("sfc", "flow", "classifier", "create", "--protocol", protocol, "--ethertype", "IPv4",
                              "--destination-port", f"{port}:{port}", *ends, name)["id"])

    def build(self) -> None:
        """The network, the hosts' and functions' ports, a pair and a group per function; returns once srfabric
        holds the groups."""
        spec = self.lab.spec
        self.alice("network", "create", "fabric")
        self.alice("subnet", "create", "fabric-v4", "--network", "fabric", "--subnet-range", "10.0.0.0/24",
                   "--gateway", "none", "--no-dhcp")
        for name, host in spec.hosts.items():
            self.ports[name] = self.alice("port", "create", name, "--network", "fabric", "--mac-address",
                                          f"00:00:00:00:00:{host.mac:02x}", "--fixed-ip",
                                          f"subnet=fabric-v4,ip-address={host.ip}")["id"]
            self.compute("port", "set", "--host", f"compute-{name}", self.ports[name])
        for name, function in spec.functions.items():
            for side, number in (("in", function.ingress_port), ("out", function.egress_port)):
                port = self.alice("port", "create", f"{name}-{side}", "--network", "fabric", "--device", name)["id"]
                self.compute("port", "set", "--host", "compute-1", "--binding-profile",
                             f"switch={spec.dpid(function.switch)}", "--binding-profile", f"port={number}", port)
                self.ports[f"{name}-{side}"] = port
            pair = self.alice("sfc", "port", "pair", "create", "--ingress", self.ports[f"{name}-in"], "--egress",
                              self.ports[f"{name}-out"], "--service-function-parameters", "correlation=mpls", name)
            self.groups[name] = self.alice("sfc", "port", "pair", "group", "create", "--port-pair", pair["id"],
                                           f"{name}s")["id"]
        until(lambda: set(self.groups.values()) <= self.held("port_pair_groups"), "the groups in srfabric")


def until(condition: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    """Wait for ``condition``; ``SrfabricError`` naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise SrfabricError("neutron", f"{what}: not within {timeout} s")
        time.sleep(0.2)
