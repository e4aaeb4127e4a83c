"""Numbered UDP for redundant streams in a Mininet lab: a talker that writes R-TAGs (``xdp.frer.rtag``) or plain
frames, from a raw socket on its host, and a listener's UDP socket that writes down each number it got and when.
Both run as the lab's Python on the hosts (``ApiLab.cmd``), in the background, and write their files when done."""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from srfabric.errors import SrfabricError
from srfabric_tools.testbed.api_lab import ApiLab

TALK = """
import json, os, socket, struct, time
from srfabric.xdp import frames
from srfabric.xdp.frer import rtag
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(("{ifname}", 0))
start = time.monotonic()
for n in range({count}):
    frame = frames.udp_frame(dst_mac={dst_mac}, src_mac={src_mac}, src="{src}", dst="{dst}", sport={sport},
                             dport={dport}, size=96)
    frame = frame[:-4] + struct.pack("!I", n)
    s.send(rtag(n % 65536, frame) if {tagged} else frame)
    time.sleep(max(0.0, start + (n + 1) / {rate} - time.monotonic()))
open("{out}.part", "w").write(json.dumps({{"frames": {count}, "seconds": time.monotonic() - start}}))
os.replace("{out}.part", "{out}")
"""
LISTEN = """
import json, os, socket, struct, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
s.bind(("0.0.0.0", {port}))
s.settimeout({quiet})
seen = []
try:
    while True:
        data = s.recv(2048)
        seen.append((struct.unpack_from("!I", data, 50)[0], time.monotonic_ns()))
except OSError:
    pass
open("{out}.part", "w").write(json.dumps(seen))
os.replace("{out}.part", "{out}")
"""


@dataclass
class NumberedUdp:
    """``count`` frames at ``rate`` from ``talker`` to ``listener``'s UDP ``port`` (R-tagged with ``tagged``)."""

    lab: ApiLab
    name: str
    talker: str
    listener: str
    port: int
    count: int
    rate: int
    tagged: bool

    @property
    def received_file(self) -> Path:
        return self.lab.workdir / f"{self.name}.received"

    @property
    def sent_file(self) -> Path:
        return self.lab.workdir / f"{self.name}.sent"

    def listen(self) -> None:
        self.received_file.unlink(missing_ok=True)
        script = self.lab.workdir / f"{self.name}-listen.py"
        script.write_text(LISTEN.format(port=self.port, quiet=2.0, out=self.received_file))
        self.lab.cmd(self.listener, f"{sys.executable} {script} &")
        self.lab.wait_listening(self.listener, self.port)

    def talk(self) -> None:
        spec = self.lab.spec
        talker, listener = spec.hosts[self.talker], spec.hosts[self.listener]
        script = self.lab.workdir / f"{self.name}-talk.py"
        self.sent_file.unlink(missing_ok=True)
        script.write_text(TALK.format(ifname=f"{self.talker}-eth0", count=self.count, dst_mac=listener.mac,
                                      src_mac=talker.mac, src=talker.ip, dst=listener.ip, sport=self.port + 1,
                                      dport=self.port, tagged=self.tagged, rate=self.rate,
                                      out=self.sent_file))
        self.lab.cmd(self.talker, f"{sys.executable} {script} &")

    def talked(self, timeout: float = 60.0) -> float:
        """Seconds the talker took to send its frames (a busy host sends late), once it has sent its last."""
        self._wait_for(self.sent_file, timeout, "the talker did not finish")
        return float(json.loads(self.sent_file.read_text())["seconds"])

    def received(self, timeout: float = 30.0) -> list[tuple[int, int]]:
        """(number, monotonic receive ns) of every frame the listener got, once it has stopped listening."""
        self._wait_for(self.received_file, timeout, "the listener wrote nothing")
        return [(int(n), int(at)) for n, at in json.loads(self.received_file.read_text())]

    def _wait_for(self, done: Path, timeout: float, failed: str) -> None:
        deadline = time.monotonic() + timeout
        while not done.exists():
            if time.monotonic() > deadline:
                raise SrfabricError(self.name, f"{failed} within {timeout} s")
            time.sleep(0.1)


def with_a_cut(lab: ApiLab, flow: NumberedUdp, cut_after_s: float, link: tuple[str, str]) -> dict[str, float | int]:
    """``flow`` sent with ``link`` (two Mininet node names) cut ``cut_after_s`` in; what the listener got
    (``tally``)."""
    assert lab.testbed is not None
    flow.listen()
    flow.talk()
    time.sleep(cut_after_s)
    lab.testbed.net.configLinkStatus(*link, "down")
    return tally(flow.received(flow.count / flow.rate + 15), flow.count, 1_000_000_000 // flow.rate)


def tally(received: list[tuple[int, int]], count: int, period_ns: int) -> dict[str, float | int]:
    """Frames lost and delivered twice, and the longest gap between two frames received less the period (ms).

    >>> tally([(0, 0), (1, 1_000_000), (1, 1_000_100), (3, 5_000_000)], 4, 1_000_000)
    {'lost': 1, 'duplicates': 1, 'outage_ms': 3.0}
    """
    numbers = [n for n, _ in received]
    times = sorted(at for _, at in received)
    gap = max((b - a for a, b in zip(times, times[1:], strict=False)), default=0)
    return {"lost": count - len(set(numbers)), "duplicates": len(numbers) - len(set(numbers)),
            "outage_ms": round(max(0, gap - period_ns) / 1e6, 3)}
