"""UDP datagrams from one Mininet host to another, counted where they land and at each service function: what
shows that a chain carries a flow through its functions, in order. Scripts run with the hosts' python3."""

from __future__ import annotations

from typing import Any

from srfabric_tools.testbed.api_lab import ApiLab, function_flows

SEND_UDP = """
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for _ in range({count}):
    s.sendto(b"x" * 64, ("{dst}", {port}))
"""
RECEIVE = """
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", {port}))
s.settimeout(1.5)
n = 0
try:
    while True:
        s.recv(2048)
        n += 1
except OSError:
    pass
open("{out}", "w").write(str(n))
"""


def udp_through(lab: ApiLab, port: int, count: int = 100, source: str = "h1",
                destination: str = "h2") -> tuple[int, dict[str, dict[str, int]]]:
    """Send ``count`` datagrams to ``destination``'s ``port``: how many arrived, and what each function counted of
    the flow ``udp:<port>`` since before (packets, and ``from_mark_N``: stamped by the function of mark N)."""
    before = {name: function_flows(stats).get(f"udp:{port}", {}) for name, stats in lab.function_stats(0).items()}
    script, received = lab.workdir / f"receive-{port}.py", lab.workdir / f"received-{port}"
    received.unlink(missing_ok=True)
    script.write_text(RECEIVE.format(port=port, out=received))
    lab.cmd(destination, f"python3 {script} &")
    lab.wait_listening(destination, port)
    lab.cmd(source, f"python3 -c '{SEND_UDP.format(count=count, dst=lab.spec.hosts[destination].ip, port=port)}'")
    after = lab.function_stats(3.0)
    seen: dict[str, dict[str, int]] = {}
    for name, stats in after.items():
        now: dict[str, Any] = function_flows(stats).get(f"udp:{port}", {})
        seen[name] = {key: value - before[name].get(key, 0) for key, value in now.items()}
    return int(received.read_text()) if received.exists() else 0, seen
