"""A Mininet switch whose data plane is srfabric's XDP programs, driven by ``srfabric.xdp.agent``.

It lives in the root namespace like ``OVSSwitch``; ``start`` runs one agent
process for its ports (remembered by pid), ``stop`` ends it, and the agent
detaches its programs and removes its pins on the way out.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

from mininet.node import Switch

from srfabric_tools.procs import terminate


def agent_args(dpid: int, controller: str, codec: str, ports: dict[int, str], name: str,
               tls: tuple[str, str] | None = None) -> list[str]:
    """The agent's command line; ``tls`` is (the pki folder, the certificate's name) to connect over TLS.

    >>> agent_args(0x101, "127.0.0.1:6653", "mac-nibble", {2: "e1-eth2", 1: "e1-eth1"}, "mn-e1")[3:]
    ['--dpid', '0x101', '--controller', '127.0.0.1:6653', '--codec', 'mac-nibble', '--name', 'mn-e1', \
'--port', '1=e1-eth1', '--port', '2=e1-eth2']
    """
    args = [sys.executable, "-m", "srfabric.xdp.agent", "--dpid", f"{dpid:#x}", "--controller", controller,
            "--codec", codec, "--name", name]
    for number, ifname in sorted(ports.items()):
        args += ["--port", f"{number}={ifname}"]
    if tls is not None:
        args += ["--tls", tls[0], "--cert", tls[1]]
    return args


class XdpSwitch(Switch):
    """``Switch`` with ``codec`` (the header format its XDP programs read) and ``tls`` (a pki folder holding a
    certificate ``xdp-<name>`` for its dpid: then its agent connects over TLS)."""

    def __init__(self, name: str, codec: str = "mac-nibble", tls: str | None = None, **params: Any) -> None:
        super().__init__(name, **params)
        self.codec = codec
        self.tls = tls  # the pki folder: the agent connects over TLS with its certificate ``xdp-<name>`` there
        self.agent: subprocess.Popen[bytes] | None = None

    def start(self, controllers: list[Any]) -> None:
        ports = {self.ports[intf]: intf.name for intf in self.intfList() if intf.name != "lo"}
        for ifname in ports.values():
            self.cmd(f"ip link set dev {ifname} up")
        controller = controllers[0]
        self.agent = subprocess.Popen(
            agent_args(int(self.dpid, 16), f"{controller.IP()}:{controller.port}", self.codec, ports,
                       f"mn-{self.name}", (self.tls, f"xdp-{self.name}") if self.tls else None),
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def stop(self, deleteIntfs: bool = True) -> None:  # noqa: N803  (Mininet's name)
        if self.agent is not None:
            terminate(self.agent)
            self.agent = None
        super().stop(deleteIntfs)
