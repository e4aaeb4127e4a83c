"""A redundant stream on real Open vSwitch (Mininet, the TSN paper's Fig. 1 fabric): made through the API with
``num_seamless_trees: 2``, its talker writing R-TAGs at 1,000 frames/s, end-system elimination in XDP on the
listener's interface. A link of the first path is cut in the middle of the run: the listener's socket gets
every frame once (0 lost, 0 duplicates), and the eliminator's counters show the copies it discarded."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from srfabric.model.topo import tsn_fig1
from srfabric.testbed.api_lab import ApiLab, ServeProcess
from srfabric.testbed.net import ovs_running
from srfabric.tsn.frer import COUNTERS
from srfabric.xdp.frer import FrerEliminator
from srfabric.xdp.loader import build

pytestmark = pytest.mark.skipif(not ovs_running(), reason="needs ovs-vswitchd (make bootstrap)")
FRAMES, RATE, CUT_AFTER_S = 3000, 1000, 1.5
TALK = """
import socket, struct, time
from srfabric.xdp import frames
from srfabric.xdp.frer import rtag
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(("h1-eth0", 0))
start = time.time()
for n in range({count}):
    frame = frames.udp_frame(dst_mac={dst_mac}, src_mac={src_mac}, src="{src}", dst="{dst}", sport=6001, dport=6000,
                             size=96)
    s.send(rtag(n % 65536, frame[:-4] + struct.pack("!I", n)))
    time.sleep(max(0.0, start + (n + 1) / {rate} - time.time()))
"""
LISTEN = """
import json, socket, struct
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
s.bind(("0.0.0.0", 6000))
s.settimeout(3)
seen = []
try:
    while True:
        seen.append(struct.unpack_from("!I", s.recv(2048), 50)[0])
except OSError:
    pass
open({out!r}, "w").write(json.dumps(seen))
"""


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[ApiLab]:
    build()
    with ServeProcess(f"sqlite:///{tmp_path}/api.db") as serve, ApiLab(tsn_fig1(), serve) as running:
        yield running


def test_a_cut_on_one_path_loses_nothing_and_delivers_nothing_twice(lab: ApiLab, tmp_path: Path) -> None:
    with lab.serve.client() as client:
        made = client.create("streams", {"talker": lab.ports["h1"], "listener": lab.ports["h3"], "priority": 5,
                                         "udp_source_port": 6001, "udp_destination_port": 6000,
                                         "num_seamless_trees": 2})
    assert (made["path"], made["second_path"]) == (["s1", "s2", "s5"], ["s1", "s3", "s4", "s5"])
    assert lab.testbed is not None
    listener_pid = lab.testbed.node("h3").pid
    eliminator = FrerEliminator.load("test-frer-h3", history_length=32, reset_ms=2000)
    try:
        eliminator.attach("h3-eth0", listener_pid)
        spec = lab.spec
        (tmp_path / "listen.py").write_text(LISTEN.format(out=str(tmp_path / "seen.json")))
        (tmp_path / "talk.py").write_text(TALK.format(
            count=FRAMES, rate=RATE, dst_mac=spec.hosts["h3"].mac,
            src_mac=spec.hosts["h1"].mac, src=spec.hosts["h1"].ip, dst=spec.hosts["h3"].ip))
        lab.cmd("h3", f"{sys.executable} {tmp_path / 'listen.py'} &")
        time.sleep(0.5)
        lab.cmd("h1", f"{sys.executable} {tmp_path / 'talk.py'} &")
        time.sleep(CUT_AFTER_S)
        lab.testbed.net.configLinkStatus("s2", "s5", "down")
        deadline = time.monotonic() + FRAMES / RATE + 15
        while not (tmp_path / "seen.json").exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        seen = json.loads((tmp_path / "seen.json").read_text())
        counted = next(iter(eliminator.counters().values()))
    finally:
        eliminator.attach("h3-eth0", listener_pid, off=True)
        eliminator.unload()
    assert len(seen) == len(set(seen)), "a frame was delivered twice"
    assert sorted(seen) == list(range(FRAMES)), f"{FRAMES - len(set(seen))} frames lost"
    assert counted[COUNTERS["passed"]] == FRAMES
    assert counted[COUNTERS["discarded"]] >= CUT_AFTER_S * RATE * 0.5  # the second copies before the cut
