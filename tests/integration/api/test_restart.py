"""1,000 chains survive a SIGKILL of the controller: the API serves them all after the restart, every
switch holds exactly the entries it held before, and traffic on a chain keeps flowing meanwhile."""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Iterator

import pytest

from srfabric_tools.testbed.api_chains import create_chains, make_groups
from srfabric_tools.testbed.api_lab import ApiLab, ServeProcess
from tests.integration.api.conftest import small_spec
from tests.integration.api.test_dataplane import RECEIVE

CHAINS = 1000
SEND = """
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
end = time.time() + {seconds}
n = 0
while time.time() < end:
    s.sendto(b"x" * 64, ("{dst}", {port})); n += 1
    time.sleep(0.005)
open("{out}", "w").write(str(n))
"""


@pytest.fixture
def restart_lab(database: str) -> Iterator[ApiLab]:
    with ServeProcess(database) as serve, ApiLab(small_spec(), serve) as lab:
        yield lab


def test_thousand_chains_survive_sigkill(restart_lab: ApiLab) -> None:
    lab = restart_lab
    with lab.serve.client() as client:
        groups = make_groups(client, lab)
        made = create_chains(client, lab, groups, CHAINS, 31000)
    before = lab.dump_flows()
    assert sum(1 for line in before["s1"] if "priority=200" in line) == CHAINS
    # A steady UDP stream on the first chain (port 31000) while the controller dies and comes back.
    receive, count = lab.workdir / "receive.py", lab.workdir / "received"
    receive.write_text(RECEIVE.format(port=31000, out=count).replace("settimeout(1.5)", "settimeout(3)"))
    send, sent = lab.workdir / "send.py", lab.workdir / "sent"
    lab.cmd("h2", f"python3 {receive} &")
    lab.wait_listening("h2", 31000)
    send.write_text(SEND.format(seconds=12, dst=lab.spec.hosts["h2"].ip, port=31000, out=sent))
    lab.cmd("h1", f"python3 {send} &")
    time.sleep(1.0)
    lab.serve.kill()
    killed = time.monotonic()
    time.sleep(1.0)
    lab.serve.start()
    with lab.serve.client() as client:
        chains = client.list("port_chains")
        assert len(chains) == CHAINS and {c["id"] for c in chains} == set(made)
        # The switches reconnect (Open vSwitch backs off up to 8 s) and are read back, not flushed.
        deadline = time.monotonic() + 30
        while not all(s["connected"] for s in client.get("/v2.0/srfabric/fabric")["fabric"]["switches"]):
            assert time.monotonic() < deadline, "switches did not reconnect"
            time.sleep(0.2)
    time.sleep(1.0)  # a sync that would change anything has run by now
    after = lab.dump_flows()
    for switch in before:
        assert after[switch] == before[switch], (switch, set(before[switch]) ^ set(after[switch]))
    # Not even re-sent: the chain's entry is older than the restart (a re-added entry's age starts at 0).
    stats = subprocess.run(["ovs-ofctl", "-O", "OpenFlow13", "dump-flows", "s1", "udp,tp_dst=31000"],
                           capture_output=True, text=True, check=True).stdout
    age = float(re.search(r"duration=([0-9.]+)s", stats).group(1))  # type: ignore[union-attr]
    assert age > time.monotonic() - killed, stats
    deadline = time.monotonic() + 20
    while not count.exists():
        assert time.monotonic() < deadline, "receiver did not finish"
        time.sleep(0.5)
    while not sent.exists():
        time.sleep(0.2)
    received, total = int(count.read_text()), int(sent.read_text())
    assert received >= 0.99 * total, (received, total)
