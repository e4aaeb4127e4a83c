"""Switches that listen for their controller (``srfabric serve --dial``): each Open vSwitch bridge of a running
testbed gets a passive controller target of type primary (``pssl:PORT:127.0.0.1``, or ``ptcp:`` without TLS) in
place of the one it connects to, and over TLS the daemon a certificate a TLS server may show (``listens``)."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

from srfabric.model.topo import TopoSpec
from srfabric_tools.testbed.net import use_tls


def listen_on(bridge: str, port: int, tls: bool) -> str:
    """Make ``bridge`` listen for its controller on ``port`` (type primary: a controller, not a tool); returns the
    ``--dial`` address."""
    target = f"{'pssl' if tls else 'ptcp'}:{port}:127.0.0.1"
    subprocess.run(["ovs-vsctl", "--timeout=10", "--", "--id=@c", "create", "controller", f'target="{target}"',
                    "type=primary", "--", "set", "bridge", bridge, "controller=@c"], check=True, capture_output=True)
    return f"127.0.0.1:{port}"


def listen_for_controller(spec: TopoSpec, tls: Path | None, free_port: Callable[[], int]) -> list[str]:
    """Make every bridge of ``spec`` listen on a port of its own; returns the ``--dial`` addresses, in the
    spec's order of switches."""
    if tls is not None:
        use_tls(tls, "ovs-listening", [sw.dpid for sw in spec.switches.values()], listens=True)
    return [listen_on(name, free_port(), tls is not None) for name in spec.switches]
