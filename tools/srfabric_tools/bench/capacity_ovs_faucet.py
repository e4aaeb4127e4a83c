"""faucet as a contender of ``bench capacity-ovs``: its real pipeline on the same Open vSwitch bridges, the tree's
links configured as faucet's stack (the root its stack root), every host port on one VLAN.

faucet's eth_src table sends a frame from a source it has not learned on to its eth_dst table, so a frame to a
learned destination is not held for the controller, which learns the source from a packet-in beside it; its
time across is then its pipeline's and Open vSwitch's cost of a new source, and its controller CPU the learning.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from srfabric.errors import SrfabricError
from srfabric.model.topo import TopoSpec
from srfabric_tools.bench.capacity_faucet import VLAN, faucet_version, start_faucet, stop
from srfabric_tools.bench.peer_controller import free_port
from srfabric_tools.lab.fabric import LabFabric
from srfabric_tools.lab.netlab import NetLab
from srfabric_tools.testbed.net import learning_pings

FAUCET = "faucet"
READY_S = 120.0  # faucet's stack ports come up only after LLDP has crossed each link


def stack_config(spec: TopoSpec) -> str:
    """faucet's configuration of ``spec``: links as stack ports, the first switch the stack's root, hosts' ports
    on one VLAN.

    >>> from srfabric.model.topo import tree
    >>> config = stack_config(tree(2, 2))
    >>> config.count("dp_id:"), config.count("native_vlan: v100"), config.count("stack: {dp:")
    (3, 4, 4)
    >>> "    stack: {priority: 1}" in config.split("  s2:")[0]
    True
    """
    ends = spec.port_ends()
    lines = ["vlans:", f"  v{VLAN}:", f"    vid: {VLAN}", "dps:"]
    for index, (name, switch) in enumerate(spec.switches.items()):
        lines += [f"  {name}:", f"    dp_id: {switch.dpid}", '    hardware: "Open vSwitch"']
        lines += ["    stack: {priority: 1}"] if index == 0 else []
        lines += ["    interfaces:"]
        lines += [f"      {port}: {{stack: {{dp: {peer}, port: {peer_port}}}}}" if peer_port is not None
                  else f"      {port}: {{native_vlan: v{VLAN}}}"
                  for port, (peer, peer_port) in sorted(ends[name].items())]
    return "\n".join(lines) + "\n"


def _until_hosts_reach(lab: NetLab, fabric: LabFabric) -> None:
    """Every host pings its neighbour in turn until all answer: the stack is up and faucet learned every host."""
    deadline = time.monotonic() + READY_S
    pending = learning_pings(fabric.spec)
    while pending:
        pending = [(name, address) for name, address in pending
                   if "1 received" not in lab.run(["ping", "-c1", "-W1", address], ns=fabric.namespaces[name],
                                                  check=False)]
        if pending and time.monotonic() > deadline:
            raise SrfabricError("faucet", f"hosts still unreachable after {READY_S:g} s: {pending[:3]}")


@contextmanager
def faucet_fabric(lab: NetLab, spec: TopoSpec) -> Iterator[tuple[LabFabric, int]]:
    """``spec`` on Open vSwitch under faucet (from ``.venv-faucet``) and faucet's process id."""
    if faucet_version() is None:
        raise SrfabricError("faucet", "make bootstrap makes .venv-faucet; it is missing")
    with tempfile.TemporaryDirectory(prefix="srfabric-faucet-") as folder:
        work = Path(folder)
        (work / "faucet.yaml").write_text(stack_config(spec))
        port = free_port()
        faucet = start_faucet(work, port, None)
        try:
            with LabFabric(lab, spec, peer=f"tcp:127.0.0.1:{port}") as fabric:
                _until_hosts_reach(lab, fabric)
                yield fabric, faucet.pid
        finally:
            stop(faucet)
