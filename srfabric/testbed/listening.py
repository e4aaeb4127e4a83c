"""Switches that listen for their controller (``srfabric serve --dial``): each Open vSwitch bridge of a running
testbed gets a passive controller target of type primary (``pssl:PORT:127.0.0.1``, or ``ptcp:`` without TLS) in
place of the one it connects to, and over TLS the daemon a certificate a TLS server may show (``listens``)."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

from srfabric.model.topo import TopoSpec


def vsctl(*words: str) -> None:
    subprocess.run(["ovs-vsctl", "--timeout=10", *words], check=True, capture_output=True)


def listen_for_controller(spec: TopoSpec, tls: Path | None, free_port: Callable[[], int]) -> list[str]:
    """Make every bridge of ``spec`` listen on a port of its own; returns the ``--dial`` addresses, in the
    spec's order of switches."""
    if tls is not None:
        from srfabric.security.pki import Issued, make_certificate

        ca = Issued(tls / "ca-cert.pem", tls / "ca-privkey.pem")
        made = make_certificate(tls, ca, "ovs-listening", dpids=[sw.dpid for sw in spec.switches.values()],
                                listens=True)
        vsctl("set-ssl", str(made.key), str(made.cert), str(ca.cert))
    addresses = []
    for name in spec.switches:
        port = free_port()
        target = f"{'pssl' if tls is not None else 'ptcp'}:{port}:127.0.0.1"
        vsctl("--", "--id=@c", "create", "controller", f'target="{target}"', "type=primary",
              "--", "set", "bridge", name, "controller=@c")
        addresses.append(f"127.0.0.1:{port}")
    return addresses
