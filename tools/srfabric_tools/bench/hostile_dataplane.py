"""The data-plane rows of ``srfabric bench hostile``: a host that writes a source-route header itself. Frames
from h1 carry a header (mac-nibble: the source MAC; or an MPLS label stack) naming a path into the first
function's ingress port, which its addresses would never take; both that port and h2 listen, and the row
says where the frames went. A header is honoured only on a fabric port: a host port's frames are classified
afresh at the edge."""

from __future__ import annotations

import functools
import struct
import time
from collections.abc import Callable

from srfabric.codecs.mac_nibble import MacNibbleCodec
from srfabric.xdp import frames
from srfabric_tools.testbed.api_lab import ApiLab

MARKER = b"srfabric-forged!"
ROW_NAMES = ("control: the same frame with h1's own source MAC (must reach h2)",
             "source MAC written as a mac-nibble path into v1", "MPLS label stack naming a path into v1")
FORGED = 50
LISTEN = """
import os, socket, time
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
s.bind(("{ifname}", 0))
s.settimeout(0.2)
end, seen = time.time() + {seconds}, 0
while time.time() < end:
    try:
        data, address = s.recvfrom(4096)
    except OSError:
        continue
    seen += address[2] != socket.PACKET_OUTGOING and {marker!r} in data
open("{out}.part", "w").write(str(seen))
os.replace("{out}.part", "{out}")
"""
SEND = """
import socket, time
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(("{ifname}", 0))
for _ in range({count}):
    s.send(bytes.fromhex("{frame}"))
    time.sleep(0.002)
"""


def path_to_first_function(lab: ApiLab) -> list[int]:
    """The egress ports from h1's edge to the first function's ingress port, along the spec's links."""
    spec = lab.spec
    target = next(iter(spec.functions.values()))
    here, ports, seen = spec.hosts["h1"].switch, [], set()
    while here != target.switch:
        seen.add(here)
        link = next(link for link in spec.links if (link.a == here and link.b not in seen)
                    or (link.b == here and link.a not in seen))
        ports.append(link.a_port if link.a == here else link.b_port)
        here = link.b if link.a == here else link.a
    return [*ports, target.ingress_port]


def forged_frames(lab: ApiLab) -> dict[str, bytes]:
    spec = lab.spec
    h1, h2 = spec.hosts["h1"], spec.hosts["h2"]
    plain = frames.udp_frame(dst_mac=h2.mac, src_mac=h1.mac, src=h1.ip, dst=h2.ip, sport=40001, dport=40002,
                             size=128)
    plain = plain[:-len(MARKER)] + MARKER
    header = MacNibbleCodec().encode(path_to_first_function(lab)).eth_src
    path = path_to_first_function(lab)
    labels = b"".join(struct.pack("!I", port << 12 | (index == len(path) - 1) << 8 | 64)  # the last: bottom of stack
                      for index, port in enumerate(path))
    made = (plain, plain[:6] + header.to_bytes(6, "big") + plain[12:], plain[:12] + b"\x88\x47" + labels + plain[14:])
    return dict(zip(ROW_NAMES, made, strict=True))


def forged_row(lab: ApiLab, frame: bytes) -> str:
    function = next(iter(lab.spec.functions))
    listeners = {"h2": "h2-eth0", function: f"{function}-eth0"}
    for node, ifname in listeners.items():
        script = lab.workdir / f"listen-{node}.py"
        script.write_text(LISTEN.format(ifname=ifname, seconds=3.0, marker=MARKER, out=lab.workdir / f"{node}.seen"))
        (lab.workdir / f"{node}.seen").unlink(missing_ok=True)
        lab.cmd(node, f"python3 {script} &")
    time.sleep(0.5)
    send = lab.workdir / "send.py"
    send.write_text(SEND.format(ifname="h1-eth0", count=FORGED, frame=frame.hex()))
    lab.cmd("h1", f"python3 {send}")
    deadline = time.monotonic() + 10
    while not all((lab.workdir / f"{node}.seen").exists() for node in listeners) and time.monotonic() < deadline:
        time.sleep(0.1)
    seen = {node: (lab.workdir / f"{node}.seen").read_text() if (lab.workdir / f"{node}.seen").exists() else "?"
            for node in listeners}
    return (f"{FORGED} frames sent from h1: {seen[function]} reached {function} (the forged path), "
            f"{seen['h2']} reached h2 (their addresses' route)")


def rows(lab: ApiLab) -> dict[str, Callable[[], str]]:
    return {name: functools.partial(forged_row, lab, frame) for name, frame in forged_frames(lab).items()}
